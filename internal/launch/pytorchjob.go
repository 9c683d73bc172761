package launch

import (
	"fmt"
	"io"
	"strconv"
)

// Kubeflow PyTorchJob v1 (kubeflow.org/v1, training-operator), only the
// fields the plan sets.
type pytorchJob struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       jobSpec    `yaml:"spec"`
}

type jobSpec struct {
	NprocPerNode        YAMLString   `yaml:"nprocPerNode"`
	PytorchReplicaSpecs replicaSpecs `yaml:"pytorchReplicaSpecs"`
}

type replicaSpecs struct {
	Master *replicaSpec `yaml:"Master"`
	Worker *replicaSpec `yaml:"Worker,omitempty"`
}

type replicaSpec struct {
	Replicas      int         `yaml:"replicas"`
	RestartPolicy string      `yaml:"restartPolicy"`
	Template      podTemplate `yaml:"template"`
}

type podTemplate struct {
	Spec podSpec `yaml:"spec"`
}

type podSpec struct {
	Containers []container `yaml:"containers"`
	Volumes    []volume    `yaml:"volumes,omitempty"`
}

type container struct {
	Name         string          `yaml:"name"`
	Image        YAMLString      `yaml:"image"`
	Command      []YAMLString    `yaml:"command"`
	Env          []containerEnv  `yaml:"env,omitempty"`
	Ports        []containerPort `yaml:"ports,omitempty"`
	Resources    resources       `yaml:"resources"`
	VolumeMounts []volumeMount   `yaml:"volumeMounts,omitempty"`
}

// WritePyTorchJob writes a Kubeflow PyTorchJob: a Master (node rank 0)
// and nnodes-1 Workers (node ranks 1..), each running torchrun with the
// node rank and master address the training operator sets in RANK and
// MASTER_ADDR. The master port is the container port named
// pytorchjob-port, which the operator passes as MASTER_PORT.
func WritePyTorchJob(w io.Writer, p *Plan) error {
	kp, err := k8sPodOf(p, "RANK", "MASTER_ADDR")
	if err != nil {
		return err
	}
	replica := func(n int) *replicaSpec {
		return &replicaSpec{
			Replicas:      n,
			RestartPolicy: "Never",
			Template: podTemplate{Spec: podSpec{
				Containers: []container{{
					Name:         "pytorch",
					Image:        YAMLString(p.Image),
					Command:      kp.command,
					Env:          kp.env,
					Ports:        []containerPort{{Name: "pytorchjob-port", ContainerPort: p.Rendezvous.MasterPort}},
					Resources:    kp.res,
					VolumeMounts: kp.mounts,
				}},
				Volumes: kp.volumes,
			}},
		}
	}
	job := pytorchJob{
		APIVersion: "kubeflow.org/v1",
		Kind:       "PyTorchJob",
		Metadata:   objectMeta{Name: YAMLString(kp.name), Annotations: p.k8sAnnotations()},
		Spec: jobSpec{
			NprocPerNode:        YAMLString(strconv.Itoa(p.NProcPerNode)),
			PytorchReplicaSpecs: replicaSpecs{Master: replica(1)},
		},
	}
	if p.NNodes > 1 {
		job.Spec.PytorchReplicaSpecs.Worker = replica(p.NNodes - 1)
	}
	return writeK8sDocs(w, p, kp,
		"Apply it with: kubectl apply -f plan.yaml (Kubeflow training-operator v1)\nThe Master pod runs node rank 0, Worker pod i runs node rank i+1.",
		"the Master pod",
		func(n Node) string {
			if n.NodeRank == 0 {
				return kp.name + "-master-0"
			}
			return fmt.Sprintf("%s-worker-%d", kp.name, n.NodeRank-1)
		}, job)
}
