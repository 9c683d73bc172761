package cmdutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/safetext"
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
	// Local is set when File was found in the working directory (not
	// named by --config or MIMOPLAN_CONFIG, nor the user's own): such a
	// file may set only LocalFlags.
	Local bool
}

// MaxConfigSize bounds a config file: a few flags' defaults fit in a
// kilobyte.
const MaxConfigSize = 1 << 20

// LocalFlags are the flags a config file found in the working directory
// may set: how to show and plan, never what runs (entrypoint, image,
// env, sbatch, run, ...), where output goes (out, emit, topology-out) or
// what is read or reached (hostfile, hosts, master-addr, from-script). A
// repository one clones cannot make mimoplan run or overwrite anything.
var LocalFlags = []string{
	"format", "strict", "target-version", "all-groups", "by", "full", "group", "limit", "module", "offset", "rank",
	"top", "all", "gtp", "gpu", "peak-tflops", "efficiency", "nvlink-gbps", "network-gbps", "max-nodes", "progress",
	"bytes", "iters", "timeout", "lazy-init", "name", "encoder", "omp-num-threads", "cpus-per-task", "cpu", "memory",
	"shm-size", "rendezvous", "master-port", "runtime", "headroom", "step-model", "measured-run",
}

// sourceAnnotation marks a flag set by Apply, with where its value came
// from: FromDefaults reads it.
const sourceAnnotation = "mimoplan-source"

// ConfigFile finds the config file: explicit when given (--config or
// MIMOPLAN_CONFIG), else mimoplan/config.yaml in the user's configuration
// directory, else .mimoplan.yaml in the current directory (local); ""
// when there is none.
func ConfigFile(explicit string, configDir func() (string, error)) (path string, local bool) {
	if explicit != "" {
		return explicit, false
	}
	if configDir != nil {
		if dir, err := configDir(); err == nil && dir != "" {
			p := filepath.Join(dir, "mimoplan", "config.yaml")
			if _, err := os.Lstat(p); err == nil {
				return p, false
			}
		}
	}
	if _, err := os.Lstat(LocalConfigFile); err == nil {
		return LocalConfigFile, true
	}
	return "", false
}

// LoadConfig reads the config file at path ("" for none): a regular file
// (a FIFO or a device is refused before it is opened) of at most
// MaxConfigSize bytes. A file that cannot be read or parsed is a usage
// error.
func LoadConfig(path string, local bool) (*Config, error) {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	c := &Config{v: v, File: path, Local: local}
	if path == "" {
		return c, nil
	}
	f, err := layout.OpenRegular(path)
	if err != nil {
		return nil, exitcode.Usagef("config file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, exitcode.Usagef("config file %s: %v", path, err)
	}
	if len(data) > MaxConfigSize {
		return nil, exitcode.Usagef("config file %s: larger than %d bytes: a config file holds flag defaults", path, MaxConfigSize)
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, exitcode.Usagef("config file %s: %v", path, err)
	}
	return c, nil
}

// Describe is the line --verbose writes about the config file: which one
// was read, and why.
func (c *Config) Describe() string {
	switch {
	case c.File == "":
		return "mimoplan: no config file read"
	case c.Local:
		return fmt.Sprintf("mimoplan: config file read: %s (found in the working directory: it may not set what runs or where output goes)", safetext.Text(c.File))
	}
	return "mimoplan: config file read: " + safetext.Text(c.File)
}

// FromDefaults reports where flag name's value came from when Apply set it
// (its MIMOPLAN_* variable or the config file), "" when the command line
// set it or it kept its default. A command drops such a value where it
// does not apply (a config file's hosts under --format k8s), where it
// would refuse the same from the command line.
func FromDefaults(fs *pflag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil || f.Annotations == nil {
		return ""
	}
	if v := f.Annotations[sourceAnnotation]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// EnvKey is the variable of a flag: --master-port is MIMOPLAN_MASTER_PORT.
func EnvKey(flag string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// notConfigured are the flags that only the command line sets.
var notConfigured = []string{"help", "version", "config", "verbose"}

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
				err = exitcode.Usagef("invalid %s (for --%s): %s", from, f.Name, valueProblem(f, e))
				return
			}
		}
		if e := cmd.Flags().SetAnnotation(f.Name, sourceAnnotation, []string{from}); e != nil {
			err = e
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

// DropDefaults puts back the default of each flag in names that Apply set
// (from its MIMOPLAN_* variable or the config file): for a command whose
// other flags make them not apply, as a config file's hosts under
// --format k8s, where the operator names the pods. The command line's
// values stay, and are refused as before.
func DropDefaults(fs *pflag.FlagSet, names ...string) error {
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil || FromDefaults(fs, name) == "" {
			continue
		}
		var err error
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			err = sv.Replace(nil)
		} else {
			err = f.Value.Set(f.DefValue)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// valueProblem says what is wrong with a value flag f refused, in words
// rather than Go's parse errors ("strconv.ParseInt: parsing ...").
func valueProblem(f *pflag.Flag, err error) string {
	var enum *EnumError
	var pe *PortError
	switch {
	case errors.As(err, &enum):
		return enum.Error()
	case errors.As(err, &pe):
		return pe.Error()
	}
	switch f.Value.Type() {
	case "int", "int64", "int32", "uint", "uint64":
		return "want a whole number"
	case "float64", "float32":
		return "want a number"
	case "bool":
		return "want true or false"
	case "duration":
		return "want a duration such as 90s or 5m"
	}
	return err.Error()
}
