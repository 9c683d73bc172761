package cmdutil

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mimoplan/mimoplan/internal/exitcode"
)

// EnumError is an enumerated flag's value outside its choices.
type EnumError struct {
	Value   string
	Allowed []string
}

func (e *EnumError) Error() string {
	return "want one of " + strings.Join(e.Allowed, ", ")
}

type enumValue struct {
	p       *string
	allowed []string
}

func (e *enumValue) String() string { return *e.p }

// Type is "string", so that help shows --format string, as for any text.
func (e *enumValue) Type() string { return "string" }

func (e *enumValue) Set(s string) error {
	if !slices.Contains(e.allowed, s) {
		return &EnumError{Value: s, Allowed: e.allowed}
	}
	*e.p = s
	return nil
}

// StringEnumVar defines a string flag that takes one of allowed; any other
// value, from the command line, MIMOPLAN_* or the config file, is a usage
// error that says where it came from.
func StringEnumVar(fs *pflag.FlagSet, p *string, name, value, usage string, allowed ...string) {
	*p = value
	fs.Var(&enumValue{p: p, allowed: allowed}, name, usage)
}

// FlagError turns cobra's and pflag's complaints about flags into usage
// errors (exit 2): an enumerated flag's as "invalid --format "xml": want
// one of ...", the others as pflag words them.
func FlagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	var ee *EnumError
	if errors.As(err, &iv) && errors.As(err, &ee) {
		return exitcode.Usagef("invalid --%s %q: %v", iv.GetFlag().Name, ee.Value, ee)
	}
	return exitcode.Wrap(exitcode.Usage, err)
}

// AddProbeFlag gives a command that reads layouts the --probe flag.
func AddProbeFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "probe", false, "also check this machine's GPUs (NVML) as one node of the layout; honours CUDA_VISIBLE_DEVICES")
}

// ArgsBeforeDash is cobra.ExactArgs(n) for the arguments before "--",
// with a usage error that starts with what.
func ArgsBeforeDash(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		got := len(args)
		if dash := cmd.ArgsLenAtDash(); dash >= 0 {
			got = dash
		}
		if got != n {
			return exitcode.Usagef("%s; got %d arguments before --", what, got)
		}
		return nil
	}
}
