package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/mimoplan/mimoplan/internal/exitcode"
)

// EnvPrefix starts every variable that stands for a flag: MIMOPLAN_FORMAT
// for --format, MIMOPLAN_MASTER_PORT for --master-port.
const EnvPrefix = "MIMOPLAN"

// LocalConfigFile is the config file read from the current directory when
// neither --config nor the user's configuration directory has one.
const LocalConfigFile = ".mimoplan.yaml"

// Config is mimoplan's one configuration layer. It sets every flag that
// the command line left unset from, in this order, its MIMOPLAN_*
// variable, the config file's section for the command (render: {format:
// csv}) and the config file's top level (format: json); what none of them
// sets keeps the flag's default. Each value is parsed by the flag itself,
// so that a malformed one is a usage error naming where it came from.
type Config struct {
	v *viper.Viper
	// File is the config file read, or "" for none.
	File string
}

// ConfigFile finds the config file: explicit when given (--config or
// MIMOPLAN_CONFIG), else mimoplan/config.yaml in the user's configuration
// directory, else .mimoplan.yaml in the current directory; "" when there
// is none.
func ConfigFile(explicit string, configDir func() (string, error)) string {
	if explicit != "" {
		return explicit
	}
	if configDir != nil {
		if dir, err := configDir(); err == nil && dir != "" {
			p := filepath.Join(dir, "mimoplan", "config.yaml")
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if _, err := os.Stat(LocalConfigFile); err == nil {
		return LocalConfigFile
	}
	return ""
}

// LoadConfig reads the config file at path ("" for none). A file that
// cannot be read or parsed is a usage error.
func LoadConfig(path string) (*Config, error) {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	c := &Config{v: v, File: path}
	if path == "" {
		return c, nil
	}
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, exitcode.Usagef("config file: %v", pe)
		}
		return nil, exitcode.Usagef("config file %s: %v", path, err)
	}
	return c, nil
}

// EnvKey is the variable of a flag: --master-port is MIMOPLAN_MASTER_PORT.
func EnvKey(flag string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// notConfigured are the flags that only the command line sets.
var notConfigured = []string{"help", "version", "config"}

// Apply sets cmd's unset flags from the environment and the config file.
// A flag that excludes one given on the command line (cobra's
// MarkFlagsMutuallyExclusive) is left unset: the command line wins, as
// it does over the flag itself.
func (c *Config) Apply(cmd *cobra.Command) error {
	excluded := excludedByCommandLine(cmd.Flags())
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || excluded[f.Name] || slices.Contains(notConfigured, f.Name) {
			return
		}
		values, from, ok, e := c.lookup(cmd.Name(), f.Name)
		if e != nil || !ok {
			err = e
			return
		}
		for _, val := range values {
			if e := cmd.Flags().Set(f.Name, val); e != nil {
				var enum *EnumError
				if errors.As(e, &enum) {
					e = enum
				}
				err = exitcode.Usagef("invalid %s (for --%s): %v", from, f.Name, e)
				return
			}
		}
	})
	return err
}

// mutuallyExclusive is the annotation cobra's MarkFlagsMutuallyExclusive
// puts on each flag of a group: the group's names, space-separated.
const mutuallyExclusive = "cobra_annotation_mutually_exclusive"

// excludedByCommandLine names the flags that share a mutually exclusive
// group with a flag set on the command line.
func excludedByCommandLine(fs *pflag.FlagSet) map[string]bool {
	out := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) {
		for _, group := range f.Annotations[mutuallyExclusive] {
			for _, name := range strings.Fields(group) {
				if name != f.Name {
					out[name] = true
				}
			}
		}
	})
	return out
}

// lookup finds the value of a command's flag: its variable (an empty one
// counts as unset), the command's section of the config file, the file's
// top level. from says where it was found, for error messages.
func (c *Config) lookup(command, flag string) (values []string, from string, ok bool, err error) {
	key := EnvKey(flag)
	if s, set := os.LookupEnv(key); set && s != "" {
		return []string{c.v.GetString(flag)}, fmt.Sprintf("%s=%q", key, s), true, nil
	}
	if c.File == "" {
		return nil, "", false, nil
	}
	for _, k := range []string{command + "." + flag, flag} {
		if !c.v.InConfig(k) {
			continue
		}
		values, err := scalars(c.v.Get(k))
		if err != nil {
			return nil, "", false, exitcode.Usagef("config file %s: %s: %v", c.File, k, err)
		}
		return values, fmt.Sprintf("%s: %s in %s", k, strings.Join(values, ","), c.File), true, nil
	}
	return nil, "", false, nil
}

// scalars turns a config file's value into the texts a flag parses: a
// list gives one text per item, as a repeated flag. (A mapping never gets
// here: Check has refused its keys.)
func scalars(v any) ([]string, error) {
	switch v := v.(type) {
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, err := scalars(x)
			if err != nil || len(s) != 1 {
				return nil, errors.New("want a list of plain values")
			}
			out = append(out, s[0])
		}
		return out, nil
	case nil:
		return nil, errors.New("want a value, not null")
	default:
		return []string{fmt.Sprint(v)}, nil
	}
}

// Check reports the config file's keys that name no flag of any command
// (top level) or of their command (in a command's section): a typo there
// would otherwise be ignored in silence.
func (c *Config) Check(root *cobra.Command) error {
	if c.File == "" {
		return nil
	}
	flags := map[string]map[string]bool{} // command -> its flags
	all := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			fs := map[string]bool{}
			sub.Flags().VisitAll(func(f *pflag.Flag) {
				if !slices.Contains(notConfigured, f.Name) {
					fs[f.Name], all[f.Name] = true, true
				}
			})
			flags[sub.Name()] = fs
			walk(sub)
		}
	}
	walk(root)
	var unknown []string
	for _, k := range c.v.AllKeys() {
		if !c.v.InConfig(k) {
			continue // a variable, not a key of the file
		}
		command, flag, nested := strings.Cut(k, ".")
		switch {
		case !nested && all[k]:
		case nested && flags[command] != nil && flags[command][flag]:
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return exitcode.Usagef("config file %s: unknown key %s: keys are flag names, at the top level or under a command's name", c.File, strings.Join(unknown, ", "))
	}
	return nil
}
