package gpuprobe

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// Check compares the snapshot with what one node of the layout needs.
//
// need.At is given to gpu-count-short only: the other findings are about
// the machine, not a line of the layout. visibleDevices and visibleSet are
// CUDA_VISIBLE_DEVICES as os.LookupEnv returns it; when it is set, only
// the GPUs it selects count, as they would for the training processes.
//
// The rules, in the order they are reported:
//
//   - gpu-visible-devices: an entry of CUDA_VISIBLE_DEVICES does not resolve
//     to a GPU (or names one twice);
//   - gpu-count-short: fewer GPUs are visible than gpus_per_node;
//   - gpu-mixed-models: the visible GPUs are not all one model;
//   - gpu-mig-enabled (warning): MIG is on for a visible GPU.
func Check(s *Snapshot, need Need, visibleDevices string, visibleSet bool) []diag.Diagnostic {
	l := &diag.List{}
	visible, problem := visibleGPUs(s, visibleDevices, visibleSet)
	if problem != nil {
		reportVisible(l, s, visibleDevices, problem)
	}

	if gpus := need.GPUs; gpus > 0 && len(visible) < gpus {
		key := need.key()
		msg := fmt.Sprintf("this machine has %s but %s is %d", countVisible(len(visible)), key, gpus)
		hint := fmt.Sprintf("run on a node with at least %d GPUs, or lower %s", gpus, need.lower())
		if visibleSet {
			msg = fmt.Sprintf("%s=%q leaves %d of this machine's %d GPUs visible, but %s is %d",
				VisibleDevicesEnv, visibleDevices, len(visible), len(s.GPUs), key, gpus)
			if len(s.GPUs) >= gpus {
				hint = fmt.Sprintf("list %d GPUs in %s (or unset it), or lower %s", gpus, VisibleDevicesEnv, key)
			}
		}
		if len(s.Inaccessible) > 0 {
			msg += fmt.Sprintf("; NVML also counts GPU %s, which this process may not open (outside its device cgroup?)", joinInts(s.Inaccessible))
		}
		l.Add(diag.RuleGPUCountShort, need.At, "", hint, "%s", msg)
	}

	if models := modelsOf(s, visible); len(models) > 1 {
		parts := make([]string, len(models))
		for i, m := range models {
			parts[i] = fmt.Sprintf("%s (GPU %s)", m.name, joinInts(m.gpus))
		}
		l.Add(diag.RuleGPUMixedModels, diag.Pos{}, "",
			"make only GPUs of one model visible (CUDA_VISIBLE_DEVICES), or run on a node whose GPUs are all one model",
			"the visible GPUs are of %d models: %s; every parallel group would run at the pace of the slowest",
			len(models), strings.Join(parts, ", "))
	}

	var mig []int
	for _, v := range visible {
		if g := s.GPUs[v.gpu]; g.MIGEnabled && !slices.Contains(mig, g.Index) {
			mig = append(mig, g.Index)
		}
	}
	if len(mig) > 0 {
		slices.Sort(mig)
		l.Add(diag.RuleGPUMIGEnabled, diag.Pos{}, "",
			fmt.Sprintf("disable MIG for training (nvidia-smi -i %s -mig 0, then reset the GPUs); MIG instances cannot use NVLink or peer-to-peer copies", joinIntsComma(mig)),
			"MIG mode is enabled on GPU %s", joinInts(mig))
	}
	return l.Items
}

// reportVisible turns the first bad CUDA_VISIBLE_DEVICES entry into a
// gpu-visible-devices diagnostic.
func reportVisible(l *diag.List, s *Snapshot, value string, p *visibleProblem) {
	hint := fmt.Sprintf("use indices 0-%d, or GPU-/MIG- UUIDs as `mimoplan probe` or `nvidia-smi -L` print them, each once", len(s.GPUs)-1)
	if len(s.GPUs) == 0 {
		hint = "this machine has no GPU that CUDA could use; unset " + VisibleDevicesEnv + " or run on a GPU node"
	}
	if p.dup {
		l.Add(diag.RuleGPUVisibleDevices, diag.Pos{}, "", "list each device once",
			"%s=%q names %s twice (entry %d %q and entry %d %q); CUDA then makes no GPU visible at all",
			VisibleDevicesEnv, value, describeDevice(s, p.first), p.first.arg, p.firstEntry, p.arg, p.entry)
		return
	}
	msg := fmt.Sprintf("%s entry %d %q does not resolve to a GPU: %s", VisibleDevicesEnv, p.arg, p.entry, p.reason)
	if len(p.ignored) > 0 {
		msg += fmt.Sprintf("; CUDA stops reading at this entry, so the entries after it (%s) are not visible either", strings.Join(p.ignored, ","))
	}
	l.Add(diag.RuleGPUVisibleDevices, diag.Pos{}, "", hint, "%s", msg)
}

func describeDevice(s *Snapshot, d visibleDevice) string {
	if d.mig != "" {
		return fmt.Sprintf("MIG device %s of GPU %d", d.mig, s.GPUs[d.gpu].Index)
	}
	return fmt.Sprintf("GPU %d", s.GPUs[d.gpu].Index)
}

type model struct {
	name string
	gpus []int // NVML indices
}

// modelsOf groups the visible GPUs by name, in order of first appearance.
func modelsOf(s *Snapshot, visible []visibleDevice) []model {
	var models []model
	for _, v := range visible {
		g := s.GPUs[v.gpu]
		i := slices.IndexFunc(models, func(m model) bool { return m.name == g.Name })
		if i < 0 {
			models = append(models, model{name: g.Name})
			i = len(models) - 1
		}
		if !slices.Contains(models[i].gpus, g.Index) {
			models[i].gpus = append(models[i].gpus, g.Index)
		}
	}
	return models
}

func countVisible(n int) string {
	if n == 1 {
		return "1 visible GPU"
	}
	return strconv.Itoa(n) + " visible GPUs"
}

func joinIntsComma(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
