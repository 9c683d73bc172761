package gpuprobe

import (
	"fmt"
	"strconv"
	"strings"
)

// VisibleDevicesEnv is the variable through which CUDA hides GPUs from a
// process. NVML ignores it, so mimoplan resolves it itself.
const VisibleDevicesEnv = "CUDA_VISIBLE_DEVICES"

// visibleDevice is one device a CUDA process would see.
type visibleDevice struct {
	gpu int    // index into Snapshot.GPUs (the parent GPU of a MIG device)
	mig string // the MIG device UUID, or "" for a whole GPU
	arg int    // 1-based position of its entry in the variable
}

// visibleProblem is the first entry CUDA would not accept.
type visibleProblem struct {
	entry  string // the entry as written (trimmed)
	arg    int    // its 1-based position
	reason string // why it does not resolve
	// ignored are the non-empty entries after it, which CUDA drops too.
	ignored []string
	// dup is set when the entry names a device an earlier entry named;
	// first is that earlier entry. CUDA then shows no device at all.
	dup   bool
	first visibleDevice
	// firstEntry is the text of the earlier entry.
	firstEntry string
}

// visibleGPUs is what a CUDA process sees: every GPU when
// CUDA_VISIBLE_DEVICES is unset (set false), else resolveVisible's.
func visibleGPUs(s *Snapshot, value string, set bool) ([]visibleDevice, *visibleProblem) {
	if set {
		return resolveVisible(s, value)
	}
	all := make([]visibleDevice, len(s.GPUs))
	for i := range s.GPUs {
		all[i] = visibleDevice{gpu: i}
	}
	return all, nil
}

// resolveVisible applies CUDA_VISIBLE_DEVICES=value to the snapshot the
// way the CUDA runtime does: entries are read left to right; each is a
// device index, a GPU-<uuid> (full or a unique prefix) or a MIG-<uuid>;
// reading stops at the first entry that does not resolve, and a device
// named twice leaves no device visible at all. An empty value hides every
// GPU. It returns the visible devices in CUDA order and the problem, if
// any. PyTorch's torch.cuda._parse_visible_devices documents the same
// behaviour (leading-number parsing, stop at the first invalid entry,
// empty set on a repeat).
func resolveVisible(s *Snapshot, value string) ([]visibleDevice, *visibleProblem) {
	entries := strings.Split(value, ",")
	var out []visibleDevice
	var texts []string
	for i, raw := range entries {
		entry := strings.TrimSpace(raw)
		if entry == "" && restEmpty(entries[i+1:]) {
			// A trailing comma (or an empty value) hides nothing more.
			break
		}
		dev, reason := resolveEntry(s, entry)
		if reason != "" {
			return out, &visibleProblem{
				entry:   entry,
				arg:     i + 1,
				reason:  reason,
				ignored: nonEmpty(entries[i+1:]),
			}
		}
		dev.arg = i + 1
		for k, prev := range out {
			if prev.gpu == dev.gpu && prev.mig == dev.mig {
				return nil, &visibleProblem{
					entry:      entry,
					arg:        i + 1,
					dup:        true,
					first:      prev,
					firstEntry: texts[k],
				}
			}
		}
		out = append(out, dev)
		texts = append(texts, entry)
	}
	return out, nil
}

// resolveEntry resolves one entry; a non-empty reason says why it fails.
func resolveEntry(s *Snapshot, entry string) (visibleDevice, string) {
	switch {
	case entry == "":
		return visibleDevice{}, "the entry is empty"
	case strings.HasPrefix(entry, "GPU-"):
		var hits []int
		for i, g := range s.GPUs {
			if strings.HasPrefix(g.UUID, entry) {
				hits = append(hits, i)
			}
		}
		switch len(hits) {
		case 0:
			return visibleDevice{}, "no GPU's UUID starts with it"
		case 1:
			return visibleDevice{gpu: hits[0]}, ""
		default:
			return visibleDevice{}, fmt.Sprintf("it is a prefix of %d GPU UUIDs (GPUs %s), so it is ambiguous", len(hits), joinInts(indicesOf(s, hits)))
		}
	case strings.HasPrefix(entry, "MIG-"):
		type hit struct {
			gpu  int
			uuid string
		}
		var hits []hit
		anyMIG := false
		for i, g := range s.GPUs {
			anyMIG = anyMIG || g.MIGEnabled
			for _, m := range g.MIGDevices {
				if strings.HasPrefix(m, entry) {
					hits = append(hits, hit{i, m})
				}
			}
		}
		switch len(hits) {
		case 0:
			if !anyMIG {
				return visibleDevice{}, "it names a MIG device, but MIG is off on every GPU"
			}
			return visibleDevice{}, "no MIG device's UUID starts with it"
		case 1:
			return visibleDevice{gpu: hits[0].gpu, mig: hits[0].uuid}, ""
		default:
			return visibleDevice{}, fmt.Sprintf("it is a prefix of %d MIG device UUIDs, so it is ambiguous", len(hits))
		}
	}
	n, digits, ok := leadingInt(entry)
	switch {
	case !ok:
		return visibleDevice{}, "it is not a device index, a GPU-<uuid> or a MIG-<uuid>"
	case n < 0:
		return visibleDevice{}, "it is a negative index (CUDA_VISIBLE_DEVICES=-1 is the idiom for hiding every GPU)"
	case n >= len(s.GPUs):
		return visibleDevice{}, fmt.Sprintf("there is no GPU %s: this machine has %s", digits, countGPUs(len(s.GPUs)))
	}
	return visibleDevice{gpu: n}, ""
}

// leadingInt reads an optional sign and the digits that follow, as the C
// strtol that CUDA uses does: "1gpu2" reads as 1; "-0" as 0. digits is
// the number as written, without a plus sign.
func leadingInt(s string) (n int, digits string, ok bool) {
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	start := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == start {
		return 0, "", false
	}
	digits = strings.TrimPrefix(s[:end], "+")
	n, err := strconv.Atoi(digits)
	if err != nil { // more digits than an int holds: no such GPU either
		if s[0] == '-' {
			return -1, digits, true
		}
		return int(^uint(0) >> 1), digits, true
	}
	return n, digits, true
}

// indicesOf maps positions in s.GPUs to NVML indices (the same numbers
// for a snapshot from Probe).
func indicesOf(s *Snapshot, pos []int) []int {
	out := make([]int, len(pos))
	for i, p := range pos {
		out[i] = s.GPUs[p].Index
	}
	return out
}

func restEmpty(entries []string) bool {
	return len(nonEmpty(entries)) == 0
}

func nonEmpty(entries []string) []string {
	var out []string
	for _, e := range entries {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// countGPUs says "no GPU", "1 GPU (index 0)" or "8 GPUs (indices 0-7)".
func countGPUs(n int) string {
	switch n {
	case 0:
		return "no GPU"
	case 1:
		return "1 GPU (index 0)"
	}
	return fmt.Sprintf("%d GPUs (indices 0-%d)", n, n-1)
}
