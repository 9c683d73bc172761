package model

import "math"

// Config is one module's model, in Megatron-LM's argument destinations
// (args.<name>). A zero value means "not given": Resolve fills Megatron-LM's
// defaults, so the arithmetic never sees a zero it would not see upstream.
type Config struct {
	NumLayers         int // num_layers
	HiddenSize        int // hidden_size
	FFNHiddenSize     int // ffn_hidden_size; 0: 4*hidden (swiglu: int(4*h*2/3/64)*64)
	NumAttentionHeads int // num_attention_heads
	// NumQueryGroups is num_query_groups; 0 means group_query_attention is
	// off (as many groups as heads).
	NumQueryGroups int
	KVChannels     int // kv_channels; 0: hidden_size // num_attention_heads
	SeqLength      int // seq_length; for an encoder its tokens (patches) per sample
	// VocabSize is the tokenizer's vocabulary before padding; 0 for an
	// encoder, which has no vocabulary (no embedding or output layer).
	VocabSize                       int
	MakeVocabSizeDivisibleBy        int    // make_vocab_size_divisible_by; 0: 128
	Swiglu                          bool   // swiglu
	Normalization                   string // normalization: "LayerNorm" (default) or "RMSNorm"
	UntieEmbeddingsAndOutputWeights bool   // untie_embeddings_and_output_weights
	// AddBiasLinear is add_bias_linear, whose Megatron default is true; nil
	// means the default.
	AddBiasLinear       *bool
	AttentionOutputGate bool // attention_output_gate (FLOPs only)

	NumExperts                      int   // num_experts; 0: a dense model
	MoEFFNHiddenSize                int   // moe_ffn_hidden_size; 0: ffn_hidden_size
	MoERouterTopK                   int   // moe_router_topk; 0: 2
	MoELayerFreq                    int   // moe_layer_freq as an int; 0: 1
	MoELayerPattern                 []int // moe_layer_freq as a list (one 0/1 per layer); wins over MoELayerFreq
	MoESharedExpertIntermediateSize int   // moe_shared_expert_intermediate_size; 0: none
	MoESharedExpertGate             bool  // moe_shared_expert_gate
	MoELatentSize                   int   // moe_latent_size; 0: none
	MTPNumLayers                    int   // mtp_num_layers; 0: none
	// MoERouterPreSoftmax and MoERouterScoreFunction ("softmax", the
	// default, or "sigmoid") only decide a start-up rule (topk 1).
	MoERouterPreSoftmax    bool
	MoERouterScoreFunction string

	MultiLatentAttention bool // multi_latent_attention
	QLoRARank            int  // q_lora_rank; 0: none
	KVLoRARank           int  // kv_lora_rank; 0: 32
	QKHeadDim            int  // qk_head_dim; 0: 128
	QKPosEmbHeadDim      int  // qk_pos_emb_head_dim; 0: 64
	VHeadDim             int  // v_head_dim; 0: 128
}

// Parallel holds the sizes of the module the model runs on. The module is
// the job: NumRanks is Megatron's world_size and DP its data_parallel_size.
type Parallel struct {
	NumRanks     int // world_size
	TP           int // tensor_model_parallel_size
	GTPRemat     int // gtp_weight_remat_size (mimoplan's adjustment only)
	CP           int // context_parallel_size (mimoplan's adjustment only)
	PP           int // pipeline_model_parallel_size
	VPP          int // virtual_pipeline_model_parallel_size; 0: none
	Split        Split
	DP           int // data_parallel_size
	EP           int // expert_model_parallel_size
	ExptTP       int // expert_tensor_parallel_size; 0: tp
	ExptGTPRemat int // expert GTP weight shards (mimoplan's adjustment only)
}

// Recompute granularities (recompute_granularity).
const (
	RecomputeNone      = ""
	RecomputeSelective = "selective"
	RecomputeFull      = "full"
)

// Training holds the training options the estimate depends on.
type Training struct {
	UseDistributedOptimizer bool   `json:"use_distributed_optimizer"`
	SequenceParallel        bool   `json:"sequence_parallel"`
	RecomputeGranularity    string `json:"recompute_granularity"` // "", "selective" or "full"
	MicroBatchSize          int    `json:"micro_batch_size"`      // 0: 1
	// NumMicrobatches is the count per step (global batch / (micro batch *
	// dp)); 0: unknown, as Megatron's report called without it.
	NumMicrobatches int `json:"num_microbatches"`

	// The stack and overlap settings of the layout's training block
	// (layout.Training), each zero at Megatron's default and then left out
	// of JSON.
	RecomputeMethod    string `json:"recompute_method,omitempty"`
	RecomputeNumLayers int    `json:"recompute_num_layers,omitempty"`
	// RecomputeModules: selective recompute's submodules; nil is
	// Megatron's default, core attention alone.
	RecomputeModules             []string `json:"recompute_modules,omitempty"`
	OverlapGradReduce            bool     `json:"overlap_grad_reduce,omitempty"`
	OverlapParamGather           bool     `json:"overlap_param_gather,omitempty"`
	TPCommOverlap                bool     `json:"tp_comm_overlap,omitempty"`
	GradReduceInBF16             bool     `json:"grad_reduce_in_bf16,omitempty"` // grad_reduce_in_fp32: false
	MoETokenDispatcherType       string   `json:"moe_token_dispatcher_type,omitempty"`
	OverlapMoEExpertParallelComm bool     `json:"overlap_moe_expert_parallel_comm,omitempty"`
	// moe_expert_capacity_factor (0: none, dropless) and
	// moe_pad_expert_input_to_capacity.
	MoEExpertCapacityFactor     float64 `json:"moe_expert_capacity_factor,omitempty"`
	MoEPadExpertInputToCapacity bool    `json:"moe_pad_expert_input_to_capacity,omitempty"`
	TransformerImpl             string  `json:"transformer_impl,omitempty"`  // "": transformer_engine
	AttentionBackend            string  `json:"attention_backend,omitempty"` // "": auto
	FP8                         string  `json:"fp8,omitempty"`
	FP8ParamGather              bool    `json:"fp8_param_gather,omitempty"`
	NoOverlapP2PComm            bool    `json:"no_overlap_p2p_comm,omitempty"` // overlap_p2p_comm: false
	UsePrecisionAwareOptimizer  bool    `json:"use_precision_aware_optimizer,omitempty"`
	// The precision-aware optimizer's dtypes, "" for fp32.
	MainGradsDtype  string `json:"main_grads_dtype,omitempty"`
	MainParamsDtype string `json:"main_params_dtype,omitempty"`
	ExpAvgDtype     string `json:"exp_avg_dtype,omitempty"`
	ExpAvgSqDtype   string `json:"exp_avg_sq_dtype,omitempty"`
	// gradient_accumulation_fusion: false (Megatron-LM's default is true).
	NoGradientAccumulationFusion bool `json:"no_gradient_accumulation_fusion,omitempty"`
	// defer_embedding_wgrad_compute and wgrad_deferral_limit (0: every
	// micro-batch deferred).
	DeferEmbeddingWgradCompute bool `json:"defer_embedding_wgrad_compute,omitempty"`
	WgradDeferralLimit         int  `json:"wgrad_deferral_limit,omitempty"`
	// cross_entropy_loss_fusion and cross_entropy_fusion_impl ("": native).
	CrossEntropyLossFusion bool   `json:"cross_entropy_loss_fusion,omitempty"`
	CrossEntropyFusionImpl string `json:"cross_entropy_fusion_impl,omitempty"`

	// ExpandableSegments is PyTorch's caching allocator with expandable
	// segments (the layout's env: PYTORCH_CUDA_ALLOC_CONF), whose reserve
	// above the peak allocation is measured apart (overhead.go).
	ExpandableSegments bool `json:"expandable_segments,omitempty"`

	// Frozen is the module's freeze key: its parameters do not train (no
	// gradients, no optimizer state).
	Frozen bool `json:"freeze,omitempty"`
	// Communicators is the number of NCCL communicators with peers that
	// the layout adds for this module beyond its own parallel groups (the
	// MIMO bridges between modules; validate counts them).
	Communicators int `json:"communicators,omitempty"`
	// MicrobatchesInFlight is how many micro-batches' activations a module
	// without pipeline stages of its own holds at its peak, when a schedule
	// around it decides (a MIMO encoder on its own ranks is the first
	// stage of the job's pipeline); 0: one, as Megatron's formula counts.
	MicrobatchesInFlight int `json:"microbatches_in_flight,omitempty"`
}

// Resolve returns c with Megatron-LM's defaults filled in, as
// megatron/training/arguments.py (validate_args) and TransformerConfig set
// them.
func (c Config) Resolve() Config {
	if c.FFNHiddenSize == 0 {
		if c.Swiglu {
			c.FFNHiddenSize = int(float64(4*c.HiddenSize)*2/3/64) * 64
		} else {
			c.FFNHiddenSize = 4 * c.HiddenSize
		}
	}
	if c.KVChannels == 0 && c.NumAttentionHeads > 0 {
		c.KVChannels = c.HiddenSize / c.NumAttentionHeads
	}
	if c.MakeVocabSizeDivisibleBy == 0 {
		c.MakeVocabSizeDivisibleBy = 128
	}
	if c.Normalization == "" {
		c.Normalization = "LayerNorm"
	}
	if c.AddBiasLinear == nil {
		t := true
		c.AddBiasLinear = &t
	}
	if c.NumExperts > 0 && c.MoEFFNHiddenSize == 0 {
		c.MoEFFNHiddenSize = c.FFNHiddenSize
	}
	if c.MoERouterTopK == 0 {
		c.MoERouterTopK = 2
	}
	if c.MoELayerFreq == 0 {
		c.MoELayerFreq = 1
	}
	if c.KVLoRARank == 0 {
		c.KVLoRARank = 32
	}
	if c.QKHeadDim == 0 {
		c.QKHeadDim = 128
	}
	if c.QKPosEmbHeadDim == 0 {
		c.QKPosEmbHeadDim = 64
	}
	if c.VHeadDim == 0 {
		c.VHeadDim = 128
	}
	return c
}

// Resolve returns p with defaults filled: sizes of 0 become 1, ExptTP
// becomes TP (as arguments.py does), DP is derived from NumRanks when not
// given.
func (p Parallel) Resolve() Parallel {
	for _, v := range []*int{&p.TP, &p.GTPRemat, &p.CP, &p.PP, &p.EP, &p.ExptGTPRemat} {
		if *v == 0 {
			*v = 1
		}
	}
	if p.ExptTP == 0 {
		p.ExptTP = p.TP
	}
	if p.DP == 0 && p.NumRanks > 0 {
		p.DP = p.NumRanks / (p.TP * p.GTPRemat * p.CP * p.PP)
	}
	if p.NumRanks == 0 {
		p.NumRanks = p.TP * p.GTPRemat * p.CP * p.PP * p.DP
	}
	return p
}

// PaddedVocabSize pads vocabSize as Megatron-LM does
// (megatron/training/vocab_utils.py, calculate_padded_vocab_size): up to a
// multiple of make_vocab_size_divisible_by * tp. 0 stays 0 (an encoder).
func PaddedVocabSize(vocabSize, divisibleBy, tp int) int {
	if vocabSize <= 0 {
		return 0
	}
	if divisibleBy <= 0 {
		divisibleBy = 128
	}
	if tp <= 0 {
		tp = 1
	}
	multiple := divisibleBy * tp
	return int(math.Ceil(float64(vocabSize)/float64(multiple))) * multiple
}

// moePattern returns moe_layer_freq as one 0/1 per layer, as the memory
// and FLOPs functions build it.
func (c *Config) moePattern() []int {
	if len(c.MoELayerPattern) > 0 {
		return c.MoELayerPattern
	}
	p := make([]int, c.NumLayers)
	for i := range p {
		if i%c.MoELayerFreq == 0 {
			p[i] = 1
		}
	}
	return p
}

// layerCounts returns the dense and MoE layer counts, and whether the last
// layer is MoE (which decides what an MTP layer is).
func (c *Config) layerCounts() (dense, moe, lastMoE int) {
	if c.NumExperts == 0 {
		return c.NumLayers, 0, 0
	}
	pat := c.moePattern()
	for _, v := range pat {
		moe += v
	}
	if len(pat) > 0 {
		lastMoE = pat[len(pat)-1]
	}
	return c.NumLayers - moe, moe, lastMoE
}

func (c *Config) queryGroups() int {
	if c.NumQueryGroups == 0 {
		return c.NumAttentionHeads
	}
	return c.NumQueryGroups
}

func (c *Config) normSize() int {
	if c.Normalization == "RMSNorm" {
		return 1
	}
	return 2
}

// prod multiplies in float64 from the left: exact while the product stays
// below 2^53, as Python's integer arithmetic is, and never overflows.
func prod(xs ...int) float64 {
	p := 1.0
	for _, x := range xs {
		p *= float64(x)
	}
	return p
}
