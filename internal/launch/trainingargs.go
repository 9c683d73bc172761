package launch

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
)

// trainingArgs are the layout's training settings that differ from
// Megatron-LM's defaults, as Megatron-LM arguments: what validate,
// estimate and suggest assumed, so that the job runs with it.
func trainingArgs(l *layout.Layout) []string {
	if l.Training == nil {
		return nil
	}
	return megatron.TrainingArgs(l.Training.Spelled())
}

// trainingConflicts reports every program argument that sets a training
// setting to another value than the layout's (Megatron's default when the
// layout leaves the key out): the job would run with what mimoplan did
// not check. One that agrees is left to the clash check (a repeat of what
// launch-plan writes) or, when launch-plan writes nothing for it (a
// default), accepted.
func trainingConflicts(d *diag.List, l *layout.Layout, user []string) (found bool) {
	t := l.Training
	if t == nil {
		t = &layout.Training{}
	}
	for _, k := range layout.TrainingKeys() {
		f, ok := megatron.TrainingFlagOf(k.Name)
		if !ok {
			continue
		}
		want := k.Value(t)
		for _, a := range append([]megatron.Alias{{Flag: f.Flag, Value: f.On}}, f.Aliases...) {
			got, given := a.Value, false
			if a.Value == "" {
				got, given = flagValue(user, a.Flag)
			} else {
				given = flagGiven(user, a.Flag)
			}
			if !given || got == want {
				continue
			}
			pos, where := l.Pos("training."+k.Name), "training."+k.Name+" is "+want
			if !l.Given("training") || !hasStated(l, k.Name) {
				where = "the layout leaves training." + k.Name + " at Megatron's default, " + want
			}
			found = true
			d.Add(diag.RuleTrainingArgumentConflict, pos, "",
				fmt.Sprintf("set training.%s: %s in the layout (validate, estimate and suggest read it there), and drop %s from the program arguments", k.Name, got, a.Flag),
				"the program argument %s sets %s to %s, but %s: the job would not run what mimoplan checked", shown(a.Flag, got, a.Value), k.Name, got, where)
		}
	}
	return found
}

// hasStated reports whether the layout wrote training key k.
func hasStated(l *layout.Layout, k string) bool {
	return l.Pos("training."+k) != l.Pos("training")
}

// shown is a program argument as given: the flag, with its value when it
// takes one.
func shown(flag, value, fixed string) string {
	if fixed != "" {
		return flag
	}
	return flag + " " + value
}

// flagGiven reports whether a flag without a value is among args.
func flagGiven(args []string, name string) bool {
	for _, a := range args {
		if a == name {
			return true
		}
	}
	return false
}
