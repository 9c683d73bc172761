package gpuprobe

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mimoplan/mimoplan/internal/english"
)

// WriteJSON writes the snapshot as one indented JSON object.
func WriteJSON(w io.Writer, s *Snapshot) error {
	out := *s
	// Keep the shape stable: empty lists, never null.
	if out.GPUs == nil {
		out.GPUs = []GPU{}
	}
	if out.Links == nil {
		out.Links = [][]Link{}
	}
	gpus := make([]GPU, len(out.GPUs))
	for i, g := range out.GPUs {
		if g.MIGDevices == nil {
			g.MIGDevices = []string{}
		}
		gpus[i] = g
	}
	out.GPUs = gpus
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write probe JSON: %w", err)
	}
	return nil
}

// WriteTable writes a summary line, a table of the GPUs, and the topology
// matrix with its legend, as nvidia-smi topo -m would print it.
func WriteTable(w io.Writer, s *Snapshot) error {
	if _, err := fmt.Fprintf(w, "Driver %s, CUDA %s, %s\n", orDash(s.DriverVersion), orDash(s.CUDADriverVersion), english.Plural(len(s.GPUs), "GPU")); err != nil {
		return fmt.Errorf("write probe table: %w", err)
	}
	if len(s.Inaccessible) > 0 {
		if _, err := fmt.Fprintf(w, "No permission to open GPU %s (outside this job's device cgroup?); CUDA cannot use them either\n", joinInts(s.Inaccessible)); err != nil {
			return fmt.Errorf("write probe table: %w", err)
		}
	}
	if len(s.GPUs) == 0 {
		return nil
	}

	t := newTable(w)
	t.Header("GPU", "NAME", "UUID", "PCI BUS ID", "MEMORY", "CC", "MIG")
	for _, g := range s.GPUs {
		mig := "off"
		if g.MIGEnabled {
			mig = "on, " + english.Plural(len(g.MIGDevices), "instance")
		}
		if err := t.Append(strconv.Itoa(g.Index), g.Name, g.UUID, g.PCIBusID, formatBytes(g.MemoryBytes), g.ComputeCapability, mig); err != nil {
			return fmt.Errorf("write probe table: GPU %d: %w", g.Index, err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("write probe table: %w", err)
	}

	if len(s.Links) != len(s.GPUs) {
		return nil
	}
	if _, err := fmt.Fprintln(w, "\nTopology"); err != nil {
		return fmt.Errorf("write topology: %w", err)
	}
	m := newTable(w)
	header := []any{""}
	for _, g := range s.GPUs {
		header = append(header, "GPU"+strconv.Itoa(g.Index))
	}
	m.Header(header...)
	for i, row := range s.Links {
		cells := []any{"GPU" + strconv.Itoa(s.GPUs[i].Index)}
		for _, l := range row {
			cells = append(cells, string(l))
		}
		if err := m.Append(cells...); err != nil {
			return fmt.Errorf("write topology: row %d: %w", i, err)
		}
	}
	if err := m.Render(); err != nil {
		return fmt.Errorf("write topology: %w", err)
	}
	if _, err := fmt.Fprintln(w, "\nLegend:"); err != nil {
		return fmt.Errorf("write topology legend: %w", err)
	}
	for _, e := range LinkLegend {
		if _, err := fmt.Fprintf(w, "  %-4s = %s\n", e.Code, e.Meaning); err != nil {
			return fmt.Errorf("write topology legend: %w", err)
		}
	}
	return nil
}

// newTable is a table whose header is printed as given (tablewriter would
// otherwise turn "GPU0" into "GPU 0").
func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
