package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Hostfile is a parsed host list: one host per line, in node-rank order.
type Hostfile struct {
	Hosts []string
	Lines []int // 1-based line of each host
	Slots []int // slots=N of each host; 0 when not given
}

// maxHostLine is the longest line ParseHostfile reads. The file itself may
// be of any size: it is read a line at a time, so only the hosts are kept.
const maxHostLine = 1 << 20

// ParseHostfile reads the MPI/DeepSpeed style host list: one host per line,
// '#' starting a comment, blank lines ignored, and an optional slots=N
// after the host. Anything else on a line is an error naming the line, and
// so is a line over maxHostLine bytes.
func ParseHostfile(r io.Reader) (*Hostfile, error) {
	h := &Hostfile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxHostLine)
	line := 1
	for ; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		slots := 0
		for _, f := range fields[1:] {
			v, ok := strings.CutPrefix(f, "slots=")
			if !ok {
				return nil, fmt.Errorf("line %d: unexpected %q after the host: want only slots=N", line, f)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("line %d: slots=%s is not a positive number", line, v)
			}
			slots = n
		}
		h.Hosts = append(h.Hosts, fields[0])
		h.Lines = append(h.Lines, line)
		h.Slots = append(h.Slots, slots)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d: longer than %d bytes: a host list has one host per line", line, maxHostLine)
	} else if err != nil {
		return nil, fmt.Errorf("read host list: %w", err)
	}
	return h, nil
}

// CheckSlots reports the first host whose slots=N differs from the GPUs
// per node of the layout: torchrun starts exactly gpusPerNode processes on
// every node.
func (h *Hostfile) CheckSlots(gpusPerNode int) error {
	for i, s := range h.Slots {
		if s != 0 && s != gpusPerNode {
			return fmt.Errorf("line %d: host %s has slots=%d, but the layout runs %d ranks on every node", h.Lines[i], h.Hosts[i], s, gpusPerNode)
		}
	}
	return nil
}
