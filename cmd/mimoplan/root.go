package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Exit codes, as the README documents them.
const (
	exitOK      = 0
	exitInvalid = 1 // the input (layout, plan, host list) is invalid
	exitUsage   = 2 // bad flag, unreadable file
	exitNoGPU   = 3 // NVML or a driver is missing
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries an exit code up to execute. A nil err means the
// command already printed what it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// silentExit ends the command with code after output was already written.
func silentExit(code int) error {
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}

// commands holds the constructors of the subcommands; each command's file
// registers itself in init so that files stay independent.
var commands []func() *cobra.Command

func register(f func() *cobra.Command) { commands = append(commands, f) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mimoplan",
		Short: "Plan and validate heterogeneous MIMO training layouts for Megatron",
		Long: `mimoplan reads a MIMO layout (YAML), expands every module into the exact
process groups Megatron's HyperCommGrid builds, checks the layout against the
rules of the target runtime, and prints group tables or a launch plan.

Exit codes: 0 valid, 1 invalid input, 2 usage error, 3 no NVIDIA driver/NVML.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return applyEnv(cmd) }
	for _, f := range commands {
		root.AddCommand(f())
	}
	return root
}

func execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "mimoplan: %v\n", ee.err)
		}
		return ee.code
	}
	// Anything cobra itself rejects (unknown command, wrong argument count)
	// is a usage error.
	fmt.Fprintf(stderr, "mimoplan: %v\n", err)
	return exitUsage
}

// applyEnv sets every flag not given on the command line from its
// MIMOPLAN_* variable, parsed as the flag parses its own text, so that a
// malformed value is a usage error rather than viper's silent 0 or false.
// An empty variable counts as unset, as viper has it.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" || f.Name == "version" {
			return
		}
		key := envKey(f.Name)
		val, ok := os.LookupEnv(key)
		if !ok || val == "" {
			return
		}
		if e := cmd.Flags().Set(f.Name, val); e != nil {
			err = usageErr("invalid %s=%q (for --%s): %v", key, val, f.Name, e)
		}
	})
	return err
}

// envKey is the environment variable of a flag: --master-port is
// MIMOPLAN_MASTER_PORT.
func envKey(flag string) string {
	return "MIMOPLAN_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// config binds a command's flags to MIMOPLAN_* environment variables
// (MIMOPLAN_FORMAT for --format, MIMOPLAN_MASTER_PORT for --master-port).
// A flag given on the command line wins over the environment.
func config(cmd *cobra.Command) *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix("MIMOPLAN")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	_ = v.BindPFlags(cmd.Flags())
	return v
}

// oneOf checks an enumerated flag value.
func oneOf(flag, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return usageErr("invalid --%s %q: want one of %s", flag, value, strings.Join(allowed, ", "))
}
