package launch

import (
	"cmp"
	"fmt"
	"io"
)

// Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1), only the
// fields the plan sets.
type trainJob struct {
	APIVersion string       `yaml:"apiVersion"`
	Kind       string       `yaml:"kind"`
	Metadata   objectMeta   `yaml:"metadata"`
	Spec       trainJobSpec `yaml:"spec"`
}

type trainJobSpec struct {
	RuntimeRef     runtimeRef     `yaml:"runtimeRef"`
	Trainer        trainer        `yaml:"trainer"`
	RuntimePatches []runtimePatch `yaml:"runtimePatches"`
}

type runtimeRef struct {
	Name YAMLString `yaml:"name"`
}

type trainer struct {
	Image            YAMLString     `yaml:"image"`
	Command          []YAMLString   `yaml:"command"`
	Env              []containerEnv `yaml:"env,omitempty"`
	NumNodes         int            `yaml:"numNodes"`
	ResourcesPerNode resources      `yaml:"resourcesPerNode"`
	NumProcPerNode   int            `yaml:"numProcPerNode"`
}

// runtimePatch adds the plan's volumes to the runtime's trainer pods: the
// replicated job and container are both "node" in Trainer's torch
// runtimes.
type runtimePatch struct {
	Manager             string `yaml:"manager"`
	TrainingRuntimeSpec struct {
		Template struct {
			Spec struct {
				ReplicatedJobs []replicatedJobPatch `yaml:"replicatedJobs"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"trainingRuntimeSpec"`
}

type replicatedJobPatch struct {
	Name     string `yaml:"name"`
	Template struct {
		Spec struct {
			Template struct {
				Spec struct {
					Volumes    []volume         `yaml:"volumes"`
					Containers []containerPatch `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type containerPatch struct {
	Name         string        `yaml:"name"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

// trainerNode is the replicated job and the container of the trainer in
// Kubeflow Trainer's runtimes (constants.Node).
const trainerNode = "node"

// WriteK8s writes a Kubeflow Trainer v2 TrainJob on the torch runtime:
// numNodes pods of the replicated job "node", pod i running node rank i,
// which the runtime's torch plugin sets in PET_NODE_RANK (the pod's
// completion index), the master being pod 0 (PET_MASTER_ADDR).
func WriteK8s(w io.Writer, p *Plan) error {
	kp, err := k8sPodOf(p, "PET_NODE_RANK", "PET_MASTER_ADDR")
	if err != nil {
		return err
	}
	job := trainJob{
		APIVersion: "trainer.kubeflow.org/v1alpha1",
		Kind:       "TrainJob",
		Metadata:   objectMeta{Name: YAMLString(kp.name), Annotations: p.k8sAnnotations()},
		Spec: trainJobSpec{
			RuntimeRef: runtimeRef{Name: YAMLString(cmp.Or(p.K8s.Runtime, DefaultRuntime))},
			Trainer: trainer{
				Image: YAMLString(p.Image), Command: kp.command, Env: kp.env, NumNodes: p.NNodes,
				ResourcesPerNode: kp.res, NumProcPerNode: p.NProcPerNode,
			},
		},
	}
	var rj replicatedJobPatch
	rj.Name = trainerNode
	pod := &rj.Template.Spec.Template.Spec
	pod.Volumes = kp.volumes
	pod.Containers = []containerPatch{{Name: trainerNode, VolumeMounts: kp.mounts}}
	var patch runtimePatch
	patch.Manager = "mimoplan"
	patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs = []replicatedJobPatch{rj}
	job.Spec.RuntimePatches = []runtimePatch{patch}
	return writeK8sDocs(w, p, kp,
		"Apply it with: kubectl apply -f plan.yaml (Kubeflow Trainer v2, runtime "+string(job.Spec.RuntimeRef.Name)+")\nPod i of the replicated job node runs node rank i (PET_NODE_RANK).",
		"pod 0 of the job",
		func(n Node) string { return fmt.Sprintf("%s-%s-0-%d", kp.name, trainerNode, n.NodeRank) }, job)
}
