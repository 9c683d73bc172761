package model

import "fmt"

// Term names of the measured overheads (docs/estimate.md, "Measured on
// GPUs"; the runs are testdata/measured/, made by scripts/measure-memory.sh).
const (
	TermCUDAContext    = "cuda_context"
	TermAllocatorSlack = "allocator_slack"
)

// CUDAContextBytes is the GPU memory a Megatron-core training process holds
// outside PyTorch's caching allocator once it has run a step: the CUDA
// context, the kernel modules loaded on first use, cuBLAS and NCCL state.
// It is nvidia-smi's used memory minus torch.cuda.memory_reserved after the
// second step: 2474 MiB on an H100 80GB HBM3 and 2468 MiB on an H200
// (driver 580.159.04, torch 2.11.0+cu130, NCCL 2.28.9, one rank), and at
// most 4 MiB more in every configuration measured. NCCL's buffers for
// communicators with peers are not in it: no run with more than one GPU
// was made.
const CUDAContextBytes = 2474 << 20

// AllocatorSlackFraction is the caching allocator's reserve above its peak
// allocation, as a fraction of the allocation: measured from 1.7% to 13.9%
// (torch.cuda.max_memory_reserved over max_memory_allocated after the second
// step); 5% is about their mean. Fragmentation is not a constant of the
// model, so no single fraction fits every run.
const AllocatorSlackFraction = 0.05

// AddOverheads adds the measured per-GPU overheads to e as overhead terms,
// after every other term, so that TotalBytes is what a GPU must have free
// (nvidia-smi's used memory), not only what PyTorch allocates.
func AddOverheads(e *Estimate) {
	body := e.WeightAndOptimizerBytes() + e.ActivationBytes()
	e.Add(Term{Name: TermAllocatorSlack, Part: PartOverhead, Bytes: AllocatorSlackFraction * body,
		Why: fmt.Sprintf("PyTorch's caching allocator reserves about %.0f%% above its peak allocation (measured 1.7%% to 13.9%%)", 100*AllocatorSlackFraction)})
	e.Add(Term{Name: TermCUDAContext, Part: PartOverhead, Bytes: CUDAContextBytes,
		Why: "memory outside PyTorch's allocator: CUDA context, loaded kernels, cuBLAS and NCCL state (measured 2.4 GiB per GPU)"})
}
