// Package estimate owns estimate's output: the report of a validated
// layout's model figures, printed as a table or JSON.
package estimate

import (
	"math"

	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Report is estimate's --format json document.
type Report struct {
	File           string         `json:"file"`
	GPUMemoryBytes int64          `json:"gpu_memory_bytes,omitempty"`
	Modules        []ModuleReport `json:"modules"`
	// NotEstimated names the modules without a model, or whose sizes or
	// model break a rule.
	NotEstimated []string `json:"not_estimated"`
}

// ModuleReport is one module of a Report.
type ModuleReport struct {
	Name string `json:"name"`
	// mimoplan's figures: Megatron's plus Terms.
	Parameters              int64   `json:"parameters"`
	ActiveParameters        int64   `json:"active_parameters"`
	WeightAndOptimizerBytes int64   `json:"weight_and_optimizer_bytes"`
	ActivationBytes         int64   `json:"activation_bytes"`
	OverheadBytes           int64   `json:"overhead_bytes"`
	TotalBytes              int64   `json:"total_bytes"`
	FLOPsPerSample          float64 `json:"flops_per_sample"`
	Megatron                struct {
		model.Megatron
		TotalBytes float64 `json:"total_bytes"`
	} `json:"megatron"`
	Terms    []model.Term   `json:"terms"`
	Parallel map[string]int `json:"parallel"`
	Training model.Training `json:"training"`
	// MegatronArgs are the arguments, under Megatron-LM's names, for which
	// Megatron's report prints the megatron figures.
	MegatronArgs model.Args `json:"megatron_args"`
}

func roundBytes(x float64) int64 { return int64(math.Round(x)) }

// Build is the report of res: its estimated modules and those not estimated.
func Build(res *validate.Result) Report {
	doc := Report{File: res.Layout.File, GPUMemoryBytes: res.Layout.GPUMemory, Modules: []ModuleReport{}, NotEstimated: []string{}}
	done := map[int]bool{}
	for _, me := range res.Estimates {
		done[me.Index] = true
		e := me.Estimate
		m := ModuleReport{
			Name:                    me.Name,
			Parameters:              roundBytes(e.Megatron.Parameters),
			ActiveParameters:        roundBytes(e.Megatron.ActiveParameters),
			WeightAndOptimizerBytes: roundBytes(e.WeightAndOptimizerBytes()),
			ActivationBytes:         roundBytes(e.ActivationBytes()),
			OverheadBytes:           roundBytes(e.OverheadBytes()),
			TotalBytes:              roundBytes(e.TotalBytes()),
			FLOPsPerSample:          e.Megatron.FLOPsPerSample,
			Terms:                   e.Terms,
			Training:                me.Training,
			MegatronArgs:            model.MegatronArgs(res.Layout.Modules[me.Index].Model.Config, me.Parallel, me.Training),
		}
		if m.Terms == nil {
			m.Terms = []model.Term{}
		}
		m.Megatron.Megatron = e.Megatron
		m.Megatron.TotalBytes = e.Megatron.TotalBytes()
		p := me.Parallel
		m.Parallel = map[string]int{"num_ranks": p.NumRanks, "tp": p.TP, "gtp_remat": p.GTPRemat, "cp": p.CP, "pp": p.PP,
			"vpp": p.VPP, "dp": p.DP, "ep": p.EP, "expt_tp": p.ExptTP, "expt_gtp_remat": p.ExptGTPRemat}
		doc.Modules = append(doc.Modules, m)
	}
	for i, lm := range res.Layout.Modules {
		if !done[i] && lm.Name != "" {
			doc.NotEstimated = append(doc.NotEstimated, lm.Name)
		}
	}
	return doc
}
