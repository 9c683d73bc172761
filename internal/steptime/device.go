package steptime

// Device is what the calibrated model reads of a GPU and its machine,
// each figure from the vendor's data sheet.
type Device struct {
	Name     string
	BF16     float64 // dense BF16/FP16 tensor FLOP/s
	FP8      float64 // dense FP8 tensor FLOP/s; 0: none (FP8 runs at BF16)
	HBM      float64 // memory bandwidth, bytes/s
	NVLink   float64 // bytes/s per GPU per direction inside a node
	Network  float64 // bytes/s per GPU across nodes (its NIC)
	PerNode  int     // GPUs a node (an NVLink domain)
	MemBytes float64 // GPU memory, as nvidia-smi reports it
}

// Devices are the data sheets' figures:
//   - A100 SXM4 80GB: 312 TFLOP/s dense BF16, 2,039 GB/s HBM2e, NVLink 3
//     600 GB/s (300 a direction); DGX A100: 8 HDR 200 Gb/s NICs, one a
//     GPU (NVIDIA A100 data sheet, 2021; DGX A100 data sheet).
//   - H100 SXM5: 989 TFLOP/s dense BF16, 1,979 dense FP8, 3.35 TB/s HBM3,
//     NVLink 4 900 GB/s (450 a direction); DGX H100: 8 ConnectX-7 400 Gb/s
//     (NVIDIA H100 Tensor Core GPU data sheet, 2023; DGX H100 data sheet).
//   - H200 SXM: the H100's compute, 4.8 TB/s HBM3e, NVLink 900 GB/s
//     (NVIDIA H200 data sheet, 2024).
//   - B200 (HGX B200): 2.25 PFLOP/s dense BF16, 4.5 dense FP8, 8 TB/s
//     HBM3e, NVLink 5 1.8 TB/s (900 a direction); DGX B200: 8 ConnectX-7
//     400 Gb/s (NVIDIA HGX B200 and DGX B200 data sheets, 2024; the sheet's
//     sparse figures halved).
//
// MemBytes is the memory nvidia-smi reports, what a job can hold (the
// sheets' "80 GB", "141 GB" and "180 GB" are rounded): H100 80GB HBM3
// 81,559 MiB and H200 143,771 MiB as measured here (docs/estimate.md,
// "Measured on GPUs"); A100 80GB 81,920 MiB; B200 183,359 MiB (179 GiB,
// nvidia-smi's memory.total on an HGX B200,
// https://docs.vultr.com/inference-cookbook/cuda/getting-started/hardware-overview).
// internal/validate's TestPublishedRunsFit judges the published runs
// against the same figures.
var Devices = map[string]Device{
	"A100": {Name: "A100", BF16: 312e12, HBM: 2.039e12, NVLink: 300e9, Network: 25e9, PerNode: 8, MemBytes: 81920 << 20},
	"H100": {Name: "H100", BF16: 989e12, FP8: 1979e12, HBM: 3.35e12, NVLink: 450e9, Network: 50e9, PerNode: 8, MemBytes: 81559 << 20},
	"H200": {Name: "H200", BF16: 989e12, FP8: 1979e12, HBM: 4.8e12, NVLink: 450e9, Network: 50e9, PerNode: 8, MemBytes: 143771 << 20},
	"B200": {Name: "B200", BF16: 2250e12, FP8: 4500e12, HBM: 8e12, NVLink: 900e9, Network: 50e9, PerNode: 8, MemBytes: 183359 << 20},
}
