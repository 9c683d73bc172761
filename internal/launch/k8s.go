package launch

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// k8sName is a job name: the operators' webhooks want a DNS-1035 label
// ([a-z]([-a-z0-9]*[a-z0-9])?), since they name Services and pods after
// the job, so a name may not start with a digit. 40 characters leave room
// for "-worker-NNNN" or "-node-0-NNNN" within a label's 63.
func k8sName(name string) string {
	s := jobName(name, 40, "-")
	if s[0] >= '0' && s[0] <= '9' {
		s = jobName("mimoplan-"+s, 40, "-")
	}
	return s
}

// Where a Kubernetes plan mounts the topology and shared memory.
const (
	k8sTopologyDir = "/etc/mimoplan"
	k8sShmDir      = "/dev/shm"
)

// K8sFilesDir is where a Kubernetes plan mounts its Files: a directory of
// its own, since a volume cannot be mounted inside another ConfigMap's.
const K8sFilesDir = "/etc/mimoplan-files"

// MaxConfigMapBytes is what a ConfigMap may hold (Kubernetes refuses an
// object over 1 MiB; this leaves room for its metadata).
const MaxConfigMapBytes = 1<<20 - 16<<10

// CarriedFile is one file a Kubernetes plan carries in a ConfigMap. Its name is
// a ConfigMap key ([-._a-zA-Z0-9]+) and its data UTF-8 text.
type CarriedFile struct {
	Name string
	Data []byte
}

// Every string that comes from the user is a YAMLString, so that YAML 1.1
// loaders read it back unchanged too.
type objectMeta struct {
	Name        YAMLString            `yaml:"name"`
	Annotations map[string]YAMLString `yaml:"annotations,omitempty"`
}

type configMap struct {
	APIVersion string                `yaml:"apiVersion"`
	Kind       string                `yaml:"kind"`
	Metadata   objectMeta            `yaml:"metadata"`
	Data       map[string]YAMLString `yaml:"data"`
}

type containerEnv struct {
	Name  YAMLString `yaml:"name"`
	Value YAMLString `yaml:"value"`
}

type containerPort struct {
	Name          string `yaml:"name,omitempty"`
	ContainerPort int    `yaml:"containerPort"`
}

type resources struct {
	Limits   map[string]YAMLString `yaml:"limits,omitempty"`
	Requests map[string]YAMLString `yaml:"requests,omitempty"`
}

type volume struct {
	Name      string           `yaml:"name"`
	EmptyDir  *emptyDir        `yaml:"emptyDir,omitempty"`
	ConfigMap *configMapVolSrc `yaml:"configMap,omitempty"`
}

type emptyDir struct {
	Medium    string     `yaml:"medium"`
	SizeLimit YAMLString `yaml:"sizeLimit,omitempty"`
}

type configMapVolSrc struct {
	Name YAMLString `yaml:"name"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

// k8sPod is what both Kubernetes formats put in the trainer's pods.
type k8sPod struct {
	name    string // the job's name
	command []YAMLString
	env     []containerEnv
	res     resources
	volumes []volume
	mounts  []volumeMount
}

// k8sPodOf builds the pod parts of p: torchrun with the node rank and
// master address the operator sets in nodeRank and master (as $(VAR)),
// the GPUs as limits, the cpu/memory requests, /dev/shm as a memory
// emptyDir and the topology from a ConfigMap.
func k8sPodOf(p *Plan, nodeRank, master string) (*k8sPod, error) {
	if p.Image == "" {
		return nil, errNoImage
	}
	kp := &k8sPod{name: k8sName(p.Name)}
	for _, w := range p.words(word{{s: "$(" + nodeRank + ")", ref: true}}, word{{s: "$(" + master + ")", ref: true}}) {
		kp.command = append(kp.command, YAMLString(w.kube()))
	}
	env := p.Env
	if p.PassTopology {
		// The ConfigMap's file, wherever --topology-out put a copy.
		env = append(withoutEnv(env, TopologyEnv), EnvVar{TopologyEnv, k8sTopologyDir + "/" + TopologyFile})
	}
	for _, e := range env {
		kp.env = append(kp.env, containerEnv{YAMLString(e.Name), YAMLString(strings.ReplaceAll(e.Value, "$", "$$"))})
	}
	gpus := YAMLString(fmt.Sprint(p.NProcPerNode))
	kp.res.Limits = map[string]YAMLString{"nvidia.com/gpu": gpus}
	if p.K8s.CPU != "" || p.K8s.Memory != "" {
		kp.res.Requests = map[string]YAMLString{"nvidia.com/gpu": gpus}
		if p.K8s.CPU != "" {
			kp.res.Requests["cpu"] = YAMLString(p.K8s.CPU)
		}
		if p.K8s.Memory != "" {
			kp.res.Requests["memory"] = YAMLString(p.K8s.Memory)
		}
	}
	kp.volumes = []volume{{Name: "dshm", EmptyDir: &emptyDir{Medium: "Memory", SizeLimit: YAMLString(p.K8s.ShmSize)}}}
	kp.mounts = []volumeMount{{Name: "dshm", MountPath: k8sShmDir}}
	if p.PassTopology {
		kp.volumes = append(kp.volumes, volume{Name: "topology", ConfigMap: &configMapVolSrc{Name: YAMLString(kp.topologyName())}})
		kp.mounts = append(kp.mounts, volumeMount{Name: "topology", MountPath: k8sTopologyDir, ReadOnly: true})
	}
	if len(p.Files) > 0 {
		if err := checkFiles(p.Files); err != nil {
			return nil, err
		}
		kp.volumes = append(kp.volumes, volume{Name: "files", ConfigMap: &configMapVolSrc{Name: YAMLString(kp.filesName())}})
		kp.mounts = append(kp.mounts, volumeMount{Name: "files", MountPath: K8sFilesDir, ReadOnly: true})
	}
	return kp, nil
}

func (kp *k8sPod) topologyName() string { return kp.name + "-topology" }
func (kp *k8sPod) filesName() string    { return kp.name + "-files" }

// checkFiles refuses what a ConfigMap cannot hold.
func checkFiles(files []CarriedFile) error {
	total := 0
	for _, f := range files {
		if f.Name == "" || strings.Trim(f.Name, "-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" || f.Name == "." || f.Name == ".." {
			return fmt.Errorf("file name %q is not a ConfigMap key", f.Name)
		}
		if !utf8.Valid(f.Data) {
			return fmt.Errorf("file %s is not UTF-8 text", f.Name)
		}
		total += len(f.Name) + len(f.Data)
	}
	if total > MaxConfigMapBytes {
		return fmt.Errorf("the files (%d bytes) do not fit a ConfigMap (%d bytes at most)", total, MaxConfigMapBytes)
	}
	return nil
}

func withoutEnv(env []EnvVar, name string) []EnvVar {
	var out []EnvVar
	for _, e := range env {
		if e.Name != name {
			out = append(out, e)
		}
	}
	return out
}

// notes are the plan's notes as an annotation.
func (p *Plan) k8sAnnotations() map[string]YAMLString {
	if len(p.Notes) == 0 {
		return nil
	}
	return map[string]YAMLString{"mimoplan/notes": YAMLString(strings.Join(p.Notes, "\n"))}
}

// writeK8sDocs writes the header comment, the topology ConfigMap (when the
// plan has a topology) and job, as one multi-document YAML stream.
func writeK8sDocs(w io.Writer, p *Plan, kp *k8sPod, how, master string, podName func(Node) string, job any) error {
	bw := bufio.NewWriter(w)
	p.header(bw, how, master)
	p.table(bw, podName)
	enc := yaml.NewEncoder(bw)
	enc.SetIndent(2)
	if p.PassTopology {
		cm := configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: objectMeta{Name: YAMLString(kp.topologyName())},
			Data: map[string]YAMLString{TopologyFile: YAMLString(p.Topology)}}
		if err := enc.Encode(cm); err != nil {
			return fmt.Errorf("encode ConfigMap: %w", err)
		}
	}
	if len(p.Files) > 0 {
		data := make(map[string]YAMLString, len(p.Files))
		for _, f := range p.Files {
			data[f.Name] = YAMLString(f.Data)
		}
		cm := configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: objectMeta{Name: YAMLString(kp.filesName())}, Data: data}
		if err := enc.Encode(cm); err != nil {
			return fmt.Errorf("encode ConfigMap: %w", err)
		}
	}
	if err := enc.Encode(job); err != nil {
		return fmt.Errorf("encode job: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encode job: %w", err)
	}
	return bw.Flush()
}
