// Package preflight proves a layout on the real machines before the job:
// it writes a Python payload (embedded here) and the layout's plan JSON,
// and builds the torchrun lines that run the payload on every GPU. The
// payload builds every process group in one global order, checks members
// and all-reduce sums against the plan and times each group kind
// (docs/preflight.md).
package preflight

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mimoplan/mimoplan/internal/atomicfile"
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// Payload is the program every rank runs (payload/preflight.py).
//
//go:embed payload/preflight.py
var Payload []byte

// The files Emit writes.
const (
	PayloadFile = "preflight.py"
	PlanFile    = "plan.json"
)

// Defaults of the payload's flags.
const (
	DefaultBytes   = 64 << 20
	DefaultTimeout = 60 * time.Second
	DefaultIters   = 10
)

// Options are the payload's settings and where its files are.
type Options struct {
	// Dir holds preflight.py and plan.json; the command lines name them
	// under it, as given (a relative Dir stays relative).
	Dir string
	// Bytes is the size of the timed all-reduce; 0 skips the timing.
	Bytes int64
	// Timeout is how long one step may take before it is reported.
	Timeout time.Duration
	// Iters is the number of timed all-reduces per group kind.
	Iters int
	// LazyInit creates NCCL communicators at first use instead of
	// splitting them from the world's.
	LazyInit bool
	// Launcher is torchrun or its stand-in; default ["torchrun"].
	Launcher []string
}

func (o Options) withDefaults() Options {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Iters == 0 {
		o.Iters = DefaultIters
	}
	if len(o.Launcher) == 0 {
		o.Launcher = []string{"torchrun"}
	}
	return o
}

// Check is the one validation of the options, made before anything runs;
// the payload's parse_args refuses the same values, as a last line.
func (o Options) Check() error {
	if o.Bytes < 0 || 0 < o.Bytes && o.Bytes < 4 {
		return fmt.Errorf("bytes must be 0 (no timing) or at least 4 (one float32), got %d", o.Bytes)
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("timeout must be positive, got %s", o.Timeout)
	}
	if o.Iters < 1 {
		return fmt.Errorf("iters must be 1 or more, got %d", o.Iters)
	}
	if len(o.Launcher) == 0 {
		return errors.New("the launcher (entrypoint) is empty")
	}
	return nil
}

// Emit writes preflight.py, the plan JSON and extra (a scheduler's plan)
// into dir, creating it; see EmitWith.
func Emit(dir string, plan []byte, extra ...atomicfile.File) error {
	if !json.Valid(plan) {
		return errors.New("preflight: the plan is not valid JSON")
	}
	return EmitWith(dir, func(w io.Writer) error { _, err := w.Write(plan); return err }, extra...)
}

// EmitWith writes preflight.py, the plan JSON that writePlan writes
// (streamed into the file: at 2,097,152 ranks it is 356 MB, which a
// buffer held in memory twice over) and extra into dir, creating it:
// together or not at all, each atomically (atomicfile: no half file after
// a kill, no write through a symbolic link, into a FIFO or over a
// read-only file).
func EmitWith(dir string, writePlan func(io.Writer) error, extra ...atomicfile.File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := append([]atomicfile.File{
		{Path: filepath.Join(dir, PayloadFile), Mode: 0o644, Write: func(w io.Writer) error { _, err := w.Write(Payload); return err }},
		{Path: filepath.Join(dir, PlanFile), Mode: 0o644, Write: writePlan},
	}, extra...)
	return atomicfile.WriteFiles(files...)
}

// Program is the payload and its arguments, as every rank runs it.
func Program(o Options) []string {
	o = o.withDefaults()
	p := []string{
		filepath.Join(o.Dir, PayloadFile),
		"--plan", filepath.Join(o.Dir, PlanFile),
		"--bytes", strconv.FormatInt(o.Bytes, 10),
		"--timeout", strconv.FormatFloat(o.Timeout.Seconds(), 'f', -1, 64),
		"--iters", strconv.Itoa(o.Iters),
	}
	if o.LazyInit {
		p = append(p, "--lazy-init")
	}
	return p
}

// Standalone is the torchrun line for a layout that fits on one node.
func Standalone(nproc int, o Options) ([]string, error) {
	o = o.withDefaults()
	if err := o.Check(); err != nil {
		return nil, err
	}
	if nproc < 1 {
		return nil, fmt.Errorf("nproc-per-node must be 1 or more, got %d", nproc)
	}
	argv := append([]string{}, o.Launcher...)
	argv = append(argv, "--standalone", "--nproc-per-node="+strconv.Itoa(nproc))
	return append(argv, Program(o)...), nil
}

// Node is one node's torchrun line.
type Node struct {
	NodeRank int
	Host     string
	Argv     []string
}

// Nodes builds the per-node lines of a valid layout with launch-plan's
// static rendezvous (lo gives hosts, master address and port). One-node
// layouts get the Standalone line. Host and port problems come back as
// diagnostics; a plan without a master address is an error.
func Nodes(t *topo.Topology, lo launch.Options, o Options) ([]Node, *diag.List, error) {
	o = o.withDefaults()
	if err := o.Check(); err != nil {
		return nil, nil, err
	}
	if t == nil || t.Layout == nil {
		return nil, nil, errors.New("preflight: no topology: the layout is not valid")
	}
	if nodes, nproc := t.Nodes(); nodes <= 1 {
		argv, err := Standalone(nproc, o)
		if err != nil {
			return nil, nil, err
		}
		return []Node{{Host: "localhost", Argv: argv}}, &diag.List{File: t.Layout.File}, nil
	}
	lo.Rendezvous = launch.Static
	lo.Program = Program(o)
	lo.Entrypoint = o.Launcher
	lo.LayoutArgs = false
	plan, d, err := launch.Build(t, lo)
	if err != nil || d.HasErrors() {
		return nil, d, err
	}
	if plan.Rendezvous.MasterAddr == "" {
		return nil, d, fmt.Errorf("the layout has %d nodes: give the hosts or the master address (node 0's)", t.Cluster.Nodes)
	}
	out := make([]Node, plan.NNodes)
	for i, n := range plan.Nodes() {
		out[i] = Node{NodeRank: n.NodeRank, Host: n.Host, Argv: n.Command}
	}
	return out, d, nil
}

// Line renders argv as one shell command line.
func Line(argv []string) string { return launch.QuoteArgv(argv) }

// ErrNoLauncher is Launcher's error when this machine cannot start torchrun.
var ErrNoLauncher = errors.New("torchrun is not on the PATH and python3 cannot import torch: install PyTorch here, or name the launcher with --entrypoint")

// Launcher is how Run starts torchrun on this machine: torchrun when it is
// on the PATH, else python3 -m torch.distributed.run (the same program)
// when that python3 has torch. Without either, a run would fail in a way
// that reads like a failed check, so it is an error here.
func Launcher() ([]string, error) {
	if _, err := exec.LookPath("torchrun"); err == nil {
		return []string{"torchrun"}, nil
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, ErrNoLauncher
	}
	// find_spec does not import torch, which takes seconds.
	probe := exec.Command(py, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)")
	if err := probe.Run(); err != nil {
		return nil, ErrNoLauncher
	}
	return []string{"python3", "-m", "torch.distributed.run"}, nil
}

// KillGrace is how long Run waits, after asking the launcher to stop
// because ctx ended, before it kills it. torchrun itself gives its workers
// 30 s to stop.
const KillGrace = 40 * time.Second

// Run executes argv with stdout and stderr passed through and returns its
// exit status: 0 when every check passed, the launcher's status when it
// failed (torchrun's is 1 whenever a worker failed), 128+N when signal N
// ended it or when Run passed signal N on to it. SIGINT, SIGTERM and
// SIGHUP sent to this process are passed on to the launcher, which stops
// its workers, and Run waits for it. When ctx ends the launcher gets
// SIGTERM, and SIGKILL after KillGrace. The error is for a program that
// could not be started.
func Run(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	return run(ctx, argv, stdout, stderr, sigs, KillGrace)
}

// run is Run with the signals on sigs and grace for KillGrace.
func run(ctx context.Context, argv []string, stdout, stderr io.Writer, sigs <-chan os.Signal, grace time.Duration) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("preflight: empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var (
		passed  syscall.Signal
		stop    = ctx.Done()
		killing <-chan time.Time
	)
	for {
		select {
		case err := <-done:
			return exitStatus(cmd, err, passed)
		case s := <-sigs:
			if sig, ok := s.(syscall.Signal); ok {
				passed = sig
				_ = cmd.Process.Signal(sig)
			}
		case <-stop:
			stop = nil
			passed = syscall.SIGTERM
			_ = cmd.Process.Signal(syscall.SIGTERM)
			killing = time.After(grace)
		case <-killing:
			_ = cmd.Process.Kill()
		}
	}
}

func exitStatus(cmd *exec.Cmd, err error, passed syscall.Signal) (int, error) {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, err
	}
	if sig, ok := signalled(cmd.ProcessState); ok {
		return 128 + int(sig), nil
	}
	code := cmd.ProcessState.ExitCode()
	if code != 0 && passed != 0 {
		return 128 + int(passed), nil // interrupted: its own status says little
	}
	if code < 0 {
		return 1, nil
	}
	return code, nil
}

// ParseBytes reads a size: a whole number of bytes, or one with a unit
// (KiB, MiB, GiB, KB, MB, GB; the B may be left out, case does not
// matter).
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mult   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
		{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9},
		{"k", 1e3}, {"m", 1e6}, {"g", 1e9},
		{"b", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: want bytes, optionally with KiB, MiB or GiB", s)
	}
	return n * mult, nil
}
