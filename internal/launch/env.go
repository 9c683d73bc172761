package launch

// The environment every rank gets.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
)

// torchrunSets are the variables torchrun's agent gives every worker
// (LocalElasticAgent._start_workers), over whatever the environment held.
// Set in a plan they would do nothing, except that MASTER_ADDR would move
// the master of a Slurm plan, whose srun line reads it.
var torchrunSets = map[string]bool{
	"RANK": true, "LOCAL_RANK": true, "GROUP_RANK": true, "ROLE_RANK": true, "ROLE_NAME": true,
	"WORLD_SIZE": true, "LOCAL_WORLD_SIZE": true, "GROUP_WORLD_SIZE": true, "ROLE_WORLD_SIZE": true,
	"MASTER_ADDR": true, "MASTER_PORT": true,
	"TORCHELASTIC_RESTART_COUNT": true, "TORCHELASTIC_MAX_RESTARTS": true, "TORCHELASTIC_RUN_ID": true,
	"TORCHELASTIC_USE_AGENT_STORE": true,
}

// planSets are the variables the plans themselves set or read to find
// each node's rank, its hosts and its topology (sh.go, slurm.go, the k8s
// pods): set by --env after the plan's own checks they would give every
// node the same rank (node_rank=7 passed the sh plan's range check;
// SLURMD_NODENAME=n0 made every Slurm task rank 0).
var planSets = map[string]bool{
	"node_rank": true, "NODE_RANK": true, "hosts": true, "allocated": true, "me": true, "short": true, "long": true,
	"i": true, "job_dir": true, "SLURMD_NODENAME": true, "SLURM_NODEID": true, "SLURM_PROCID": true,
	"SLURM_JOB_ID": true, "SLURM_JOB_NODELIST": true, slurmHostsVar: true, slurmAllocVar: true,
	slurmTopologyVar: true, "PET_NODE_RANK": true, "PET_MASTER_ADDR": true,
	"PET_NNODES": true, "PET_NPROC_PER_NODE": true, "PET_MASTER_PORT": true,
}

// layoutEnv reports what of the layout's env block no plan can set (a
// variable torchrun or the plan itself sets) and every --env that gives
// one of its variables another value: the job would not run the
// environment the estimate read.
func layoutEnv(d *diag.List, l *layout.Layout, given []EnvVar) {
	for _, e := range l.Env {
		switch {
		case torchrunSets[e.Name]:
			d.Add(diag.RuleInvalidValue, l.EnvPos(e.Name), "", "remove it from env: torchrun gives every worker its own",
				"env.%s is set by torchrun for every worker: a layout cannot set it", e.Name)
		case planSets[e.Name]:
			d.Add(diag.RuleInvalidValue, l.EnvPos(e.Name), "", "rename it: the plans find each node's rank, hosts or topology with it",
				"env.%s is the launch plans' own variable: a layout cannot set it", e.Name)
		case e.Name == TopologyEnv || strings.HasPrefix(e.Name, megatron.BridgeEnvPrefix):
			d.Add(diag.RuleInvalidValue, l.EnvPos(e.Name), "", "remove it from env: the plan writes it from the layout's modules",
				"env.%s is what the plan derives from the layout's own modules (the topology, Megatron-Bridge's %s* grid): a layout cannot set it apart", e.Name, megatron.BridgeEnvPrefix)
		}
	}
	for _, g := range given {
		if v, ok := l.EnvValue(g.Name); ok && v != g.Value {
			d.Add(diag.RuleEnvConflict, l.EnvPos(g.Name), "",
				fmt.Sprintf("set env.%s: %q in the layout (what the plan sets and mimoplan checks) and drop --env %s", g.Name, g.Value, g.Name),
				"--env %s=%s, but the layout's env.%s is %q: the job would not run the environment mimoplan checked", g.Name, g.Value, g.Name, v)
		}
	}
}

// layoutEnvVars is the layout's env block as the plan sets it.
func layoutEnvVars(l *layout.Layout) []EnvVar {
	out := make([]EnvVar, len(l.Env))
	for i, e := range l.Env {
		out[i] = EnvVar{e.Name, e.Value}
	}
	return out
}

// buildEnv is every rank's environment: the plan's own variables, then
// fixed (the MIMO_* variables and the layout's env block), then --env; a
// name given again takes the later value in its first place.
func buildEnv(o Options, fixed []EnvVar) ([]EnvVar, error) {
	omp := o.OMPThreads
	if omp <= 0 {
		omp = 1
	}
	env := []EnvVar{
		{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
		{"OMP_NUM_THREADS", strconv.Itoa(omp)},
	}
	if o.TopologyPath != "" {
		env = append(env, EnvVar{TopologyEnv, o.TopologyPath})
	}
	set := func(e EnvVar) {
		if i := slices.IndexFunc(env, func(v EnvVar) bool { return v.Name == e.Name }); i >= 0 {
			env[i].Value = e.Value
			return
		}
		env = append(env, e)
	}
	for _, e := range fixed {
		set(e)
	}
	for _, e := range o.Env {
		if !layout.EnvNamePattern.MatchString(e.Name) {
			return nil, fmt.Errorf("environment variable name %q is not a valid name ([A-Za-z_][A-Za-z0-9_]*)", e.Name)
		}
		if torchrunSets[e.Name] {
			return nil, fmt.Errorf("environment variable %s is set by torchrun for every worker from the plan: the plan's --env cannot set it", e.Name)
		}
		if planSets[e.Name] {
			return nil, fmt.Errorf("environment variable %s is the plan's own (it finds each node's rank, hosts or topology with it): the plan's --env cannot set it", e.Name)
		}
		if strings.ContainsRune(e.Value, 0) {
			return nil, fmt.Errorf("environment variable %s holds a NUL byte", e.Name)
		}
		if !utf8.ValidString(e.Value) {
			return nil, fmt.Errorf("environment variable %s is not UTF-8 text, which the json and k8s plans cannot carry unchanged", e.Name)
		}
		set(e)
	}
	return env, nil
}
