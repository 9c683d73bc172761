package main

import (
	"regexp"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/mimoplan/mimoplan/internal/launch"
)

// addSchedulerFlags adds launch-plan's Slurm and Kubernetes settings.
func addSchedulerFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArray("sbatch", nil, "--format slurm: extra #SBATCH directive KEY=VALUE or KEY (partition=gpu, account=a, time=4:00:00, exclusive; repeatable)")
	f.Int("cpus-per-task", 0, "--format slurm: CPUs per node's task (#SBATCH --cpus-per-task)")
	f.String("container-image", "", "--format slurm: pyxis srun --container-image")
	f.String("container-mounts", "", "--format slurm: pyxis srun --container-mounts (SRC:DST[,...])")
	f.String("cpu", "", "--format k8s, pytorchjob: cpu request per pod (e.g. 32)")
	f.String("memory", "", "--format k8s, pytorchjob: memory request per pod (e.g. 512Gi)")
	f.String("shm-size", "", "--format k8s, pytorchjob: size limit of /dev/shm, a memory emptyDir (e.g. 64Gi; default none)")
	f.String("runtime", launch.DefaultRuntime, "--format k8s: the TrainJob's ClusterTrainingRuntime")
}

// quantity is a Kubernetes resource quantity (resource.Quantity's form).
var quantity = regexp.MustCompile(`^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$`)

// dnsLabel is a Kubernetes object name of the ClusterTrainingRuntime kind.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func readSchedulerFlags(cmd *cobra.Command, v *viper.Viper, o *launch.Options) error {
	o.Slurm.Sbatch = arrayFlag(cmd, "sbatch")
	if err := launch.CheckSbatch(o.Slurm.Sbatch); err != nil {
		return usageErr("%v", err)
	}
	if o.Slurm.CPUsPerTask = v.GetInt("cpus-per-task"); o.Slurm.CPUsPerTask < 0 {
		return usageErr("invalid --cpus-per-task %d: want 1 or more", o.Slurm.CPUsPerTask)
	}
	o.Slurm.ContainerImage = v.GetString("container-image")
	o.Slurm.ContainerMounts = v.GetString("container-mounts")
	o.K8s.CPU, o.K8s.Memory, o.K8s.ShmSize = v.GetString("cpu"), v.GetString("memory"), v.GetString("shm-size")
	for flag, q := range map[string]string{"cpu": o.K8s.CPU, "memory": o.K8s.Memory, "shm-size": o.K8s.ShmSize} {
		if q != "" && !quantity.MatchString(q) {
			return usageErr("invalid --%s %q: want a Kubernetes quantity such as 32, 500m, 512Gi", flag, q)
		}
	}
	if o.K8s.Runtime = v.GetString("runtime"); len(o.K8s.Runtime) > 253 || !dnsSubdomain.MatchString(o.K8s.Runtime) {
		return usageErr("invalid --runtime %q: want a Kubernetes object name", o.K8s.Runtime)
	}
	return nil
}
