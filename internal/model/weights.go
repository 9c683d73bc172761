package model

// weights is compute_weight_and_optimizer_memory's working: every quantity
// it names, kept so that mimoplan's adjustments can reuse them.
type weights struct {
	total, active float64 // parameters of the whole model

	// On the most loaded shard (first pipeline stage): held per TP rank,
	// replicated, and held per expert (EP x expert-TP) rank.
	tpSharded, replicated, expertSharded float64
	onMostLoaded                         float64

	// Per layer, tp-sharded parameters (attention + MLP), for the gtp_remat
	// buffer.
	tpShardedLayer float64

	embeddingShard float64 // the embedding (and untied output layer) in tpSharded

	// stage holds the per-layer pieces a pipeline stage is summed from
	// (stage.go).
	stage stageParams

	expertDP int
	bytes    float64
}

// bytesPerParameter is num_bytes_per_parameter: bf16 weights, fp32 main
// grads, fp32 main params and Adam states; the last 12 bytes are sharded
// over dp by the distributed optimizer.
func bytesPerParameter(distributed bool, dp int) float64 {
	if !distributed {
		return 18
	}
	// A dp of 0 (sizes Megatron would refuse) stays finite.
	return 6 + 12/float64(max(dp, 1))
}

// weightMemory is megatron/training/theoretical_memory_usage.py
// compute_weight_and_optimizer_memory, operation for operation.
func weightMemory(c *Config, p *Parallel, t *Training, paddedVocab int) weights {
	h := float64(c.HiddenSize)
	heads := float64(c.NumAttentionHeads)
	queryProjectionSize := c.KVChannels * c.NumAttentionHeads
	ratio := float64(queryProjectionSize) / h
	groups := float64(c.queryGroups())
	numExperts := 1
	if c.NumExperts > 0 {
		numExperts = c.NumExperts
	}
	gated := 1.0
	if c.Swiglu {
		gated = 3.0 / 2
	}
	shared := c.MoESharedExpertIntermediateSize
	numDense, numMoE, lastMoE := c.layerCounts()
	moeFFN := 0
	if c.NumExperts > 0 {
		moeFFN = c.MoEFFNHiddenSize
	}
	mtpMoE := lastMoE * c.MTPNumLayers
	mtpDense := (1 - lastMoE) * c.MTPNumLayers
	norm := c.normSize()

	var selfAttn float64
	if c.MultiLatentAttention {
		var qTerm int
		if c.QLoRARank == 0 {
			qTerm = c.HiddenSize * c.NumAttentionHeads * (c.QKHeadDim + c.QKPosEmbHeadDim)
		} else {
			qTerm = c.QLoRARank * (c.HiddenSize + c.NumAttentionHeads*(c.QKHeadDim+c.QKPosEmbHeadDim) + norm)
		}
		selfAttn = float64(qTerm +
			c.KVLoRARank*(c.HiddenSize+c.NumAttentionHeads*(c.QKHeadDim+c.VHeadDim)+norm) +
			c.HiddenSize*c.QKPosEmbHeadDim +
			(c.NumAttentionHeads*c.VHeadDim)*c.HiddenSize)
	} else {
		selfAttn = float64(2*c.HiddenSize*c.HiddenSize) * ((1 + groups/heads) * ratio)
	}

	embedding := float64(c.HiddenSize * paddedVocab)
	finalNorm := float64(norm * c.HiddenSize)
	embeddingLayers := embedding
	if c.UntieEmbeddingsAndOutputWeights {
		embeddingLayers = 2 * embedding
	}

	attention := selfAttn
	denseMLP := float64(2*c.HiddenSize*c.FFNHiddenSize) * gated
	sharedExpert := float64(2*c.HiddenSize*shared) * gated
	routedHidden := c.HiddenSize
	if c.MoELatentSize > 0 {
		routedHidden = c.MoELatentSize
	}
	routed := prod(2, routedHidden, moeFFN, numExperts) * gated
	activeRouted := 0.0
	latent := 0.0
	router := 0.0
	if c.NumExperts > 0 {
		activeRouted = prod(2, routedHidden, moeFFN, c.MoERouterTopK) * gated
		if c.MoELatentSize > 0 {
			latent = float64(2 * c.HiddenSize * c.MoELatentSize)
		}
		router = float64(c.HiddenSize * numExperts)
		if *c.AddBiasLinear {
			router += float64(numExperts)
		}
	}
	layernorm := float64(2 * c.HiddenSize * norm)
	sharedGate := 0.0
	if shared > 0 && c.MoESharedExpertGate {
		sharedGate = h
	}

	layerDense := attention + denseMLP + layernorm
	layerMoE := attention + sharedExpert + routed + latent + layernorm + router + sharedGate
	activeLayerMoE := attention + sharedExpert + activeRouted + latent + layernorm + router + sharedGate
	block := layerDense*float64(numDense) + layerMoE*float64(numMoE) + finalNorm
	activeBlock := layerDense*float64(numDense) + activeLayerMoE*float64(numMoE) + finalNorm
	mtpBlock := layerDense*float64(mtpDense) + layerMoE*float64(mtpMoE)

	var w weights
	w.total = block + mtpBlock + embeddingLayers
	w.active = activeBlock + mtpBlock + embeddingLayers

	etp, ep, pp, tp := p.ExptTP, p.EP, float64(p.PP), float64(p.TP)
	w.expertDP = p.NumRanks / (etp * ep * p.PP)

	tpBlock := (attention+denseMLP)*float64(numDense) + (attention+sharedExpert)*float64(numMoE)
	replBlock := layernorm*float64(numDense) + (layernorm+latent+router+sharedGate)*float64(numMoE) + finalNorm
	expertBlock := routed * float64(numMoE)
	tpMTP := (attention+denseMLP)*float64(mtpDense) + (attention+sharedExpert)*float64(mtpMoE)
	replMTP := layernorm*float64(mtpDense) + (layernorm+latent+router+sharedGate)*float64(mtpMoE)
	expertMTP := routed * float64(mtpMoE)

	w.tpSharded = (tpBlock/pp + tpMTP + embedding) / tp
	w.replicated = replBlock/pp + replMTP
	w.expertSharded = (expertBlock/pp + expertMTP) / float64(etp*ep)
	w.onMostLoaded = w.tpSharded + w.replicated + w.expertSharded
	w.embeddingShard = embedding / tp
	if c.UntieEmbeddingsAndOutputWeights && p.PP == 1 {
		w.tpSharded += embedding / tp
		w.onMostLoaded += embedding / tp
		w.embeddingShard += embedding / tp
	}
	if c.NumLayers > 0 {
		w.tpShardedLayer = tpBlock / float64(c.NumLayers) / tp
	}

	w.stage = stageParams{
		tpDense: (attention + denseMLP) / tp, tpMoE: (attention + sharedExpert) / tp,
		replDense: layernorm, replMoE: layernorm + latent + router + sharedGate,
		expertMoE: routed / float64(etp*ep),
		embedding: embedding / tp, finalNorm: finalNorm,
		tpMTP: tpMTP / tp, replMTP: replMTP, expertMTP: expertMTP / float64(etp*ep),
	}
	w.bytes = (w.tpSharded+w.replicated)*bytesPerParameter(t.UseDistributedOptimizer, p.DP) +
		w.expertSharded*bytesPerParameter(t.UseDistributedOptimizer, w.expertDP)
	return w
}
