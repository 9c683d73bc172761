package cmdutil

import (
	"errors"
	"slices"
	"strconv"
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
	// aliases maps other accepted spellings to an allowed value, which
	// is what lands in *p.
	aliases map[string]string
	// fold accepts an allowed value in any case.
	fold bool
}

func (e *enumValue) String() string { return *e.p }

// Type is "string", so that help shows --format string, as for any text.
func (e *enumValue) Type() string { return "string" }

func (e *enumValue) Set(s string) error {
	if a, ok := e.aliases[s]; ok {
		s = a
	}
	if i := slices.IndexFunc(e.allowed, func(a string) bool { return strings.EqualFold(a, s) }); e.fold && i >= 0 {
		s = e.allowed[i]
	}
	if !slices.Contains(e.allowed, s) {
		return &EnumError{Value: s, Allowed: e.allowed}
	}
	*e.p = s
	return nil
}

// StringEnumVar defines a string flag that takes one of allowed; any other
// value, from the command line, MIMOPLAN_* or the config file, is a usage
// error that lists them and says where the value came from. Shell
// completion offers them (EnumCompletions).
func StringEnumVar(fs *pflag.FlagSet, p *string, name, value, usage string, allowed ...string) {
	*p = value
	fs.Var(&enumValue{p: p, allowed: allowed}, name, usage)
}

// StringEnumFoldVar is StringEnumVar taking the values in any case
// (--gpu h100); the allowed spelling lands in *p.
func StringEnumFoldVar(fs *pflag.FlagSet, p *string, name, value, usage string, allowed ...string) {
	*p = value
	fs.Var(&enumValue{p: p, allowed: allowed, fold: true}, name, usage)
}

// Text is the name of the format for people, the default --format of
// every command that prints for people and programs (validate, render,
// estimate, probe, suggest, diff).
const Text = "text"

// textAlias is what render, estimate, probe and suggest called Text until
// every command had one name; it is still accepted for Text, so that old
// scripts and config files work.
const textAlias = "table"

// FormatVar defines --format: one of formats, Text first and the default.
// "table" is accepted for "text".
func FormatVar(fs *pflag.FlagSet, p *string, formats ...string) {
	*p = Text
	names := slices.Clone(formats)
	names[0] += " (or " + textAlias + ")"
	fs.Var(&enumValue{p: p, allowed: formats, aliases: map[string]string{textAlias: Text}}, "format",
		"output format: "+strings.Join(names, ", "))
}

// EnumCompletions gives every enumerated flag of cmd and its subcommands
// shell completion of its values.
func EnumCompletions(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		e, ok := f.Value.(*enumValue)
		if _, has := cmd.GetFlagCompletionFunc(f.Name); !ok || has {
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(e.allowed, cobra.ShellCompDirectiveNoFileComp))
	})
	for _, sub := range cmd.Commands() {
		EnumCompletions(sub)
	}
}

// FlagError turns cobra's and pflag's complaints about flags into usage
// errors (exit 2): a value a flag refuses as "invalid --format "xml": want
// one of ...", "invalid --top "abc": want a whole number", the others as
// pflag words them.
func FlagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		return exitcode.Usagef("invalid --%s %q: %s", iv.GetFlag().Name, iv.GetValue(), valueProblem(iv.GetFlag(), err))
	}
	return exitcode.Wrap(exitcode.Usage, err)
}

// PortError is a port outside 1-65535 or not decimal digits.
type PortError struct{ Value string }

func (e *PortError) Error() string { return "want a decimal port in 1-65535" }

type portValue struct{ p *string }

func (v portValue) String() string { return *v.p }
func (v portValue) Type() string   { return "string" }

func (v portValue) Set(s string) error {
	t := strings.TrimSpace(s)
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > 65535 || strings.ContainsAny(t, "+-") {
		return &PortError{Value: s}
	}
	*v.p = s
	return nil
}

// PortVar defines a TCP port flag kept as text (pflag's Int reads "010" as
// octal 8; this is decimal 10): anything but a decimal number in 1-65535,
// from the command line, MIMOPLAN_* or the config file, is a usage error
// that names where it came from.
func PortVar(fs *pflag.FlagSet, p *string, name, value, usage string) {
	*p = value
	fs.Var(portValue{p}, name, usage)
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
