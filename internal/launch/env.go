package launch

// The environment every rank gets.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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

func buildEnv(o Options, mimo []EnvVar) ([]EnvVar, error) {
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
	env = append(env, mimo...)
	for _, e := range o.Env {
		if !envName.MatchString(e.Name) {
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
		if i := slices.IndexFunc(env, func(v EnvVar) bool { return v.Name == e.Name }); i >= 0 {
			env[i].Value = e.Value
			continue
		}
		env = append(env, e)
	}
	return env, nil
}
