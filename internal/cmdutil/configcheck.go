package cmdutil

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mimoplan/mimoplan/internal/english"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/safetext"
)

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
	var unknown, local []string
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
			continue
		}
		if !nested {
			flag = k
		}
		if c.Local && !slices.Contains(LocalFlags, flag) {
			local = append(local, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		var names []string
		for name := range all {
			names = append(names, name)
		}
		for command := range flags {
			names = append(names, command)
		}
		slices.Sort(names)
		for i, k := range unknown {
			command, flag, nested := strings.Cut(k, ".")
			var guess string
			switch {
			case !nested:
				guess = english.Closest(k, names)
			case flags[command] == nil:
				if g := english.Closest(command, names); g != "" {
					guess = g + "." + flag
				}
			default:
				guess = command + "." + english.Closest(flag, slices.Sorted(maps.Keys(flags[command])))
				if guess == command+"." {
					guess = ""
				}
			}
			if guess != "" {
				unknown[i] += fmt.Sprintf(" (did you mean %s?)", guess)
			}
		}
		return exitcode.Usagef("config file %s: unknown key %s: keys are flag names, at the top level or under a command's name", safetext.Text(c.File), strings.Join(unknown, ", "))
	}
	if len(local) > 0 {
		slices.Sort(local)
		return exitcode.Usagef("config file %s: %s: a config file found in the working directory may not set what runs, where output goes or what is read (--%s); pass the flag, or put it in --config FILE or the user's config file", safetext.Text(c.File), strings.Join(local, ", "), flagOf(local[0]))
	}
	return nil
}

func flagOf(key string) string {
	if _, flag, ok := strings.Cut(key, "."); ok {
		return flag
	}
	return key
}
