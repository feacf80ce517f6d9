package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/dataset"
	"unlearn/experiment"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// fieldFlags is the one table from the libraries' names of a field to the
// flag that sets it: the Go field a typed error carries (the last element
// of a path such as Schedules[0].Deletion.Replayed) and the spec's name a
// library message uses (pair_angle, skip_lines). A command whose flag is
// the plural (bench --taus) is found by flagFor.
var fieldFlags = map[string]string{
	// olbfgs.Config
	"Dim": "d", "Memory": "tau", "StepSize": "eta", "InitialScale": "gamma0",
	"CurvatureTol": "curvature-tol", "Radius": "radius", "SampleBound": "sample-bound",
	"PairAngle": "pair-angle", "PairMin": "pair-min", "PairMax": "pair-max",
	"Intercept": "intercept", "RidgeIntercept": "ridge-intercept", "Standardize": "standardize",
	"Average": "average", "AverageStart": "average-start", "AveragePower": "average-power",
	"Damping": "damping", "StepDecay": "step-decay", "StepPower": "step-power", "Progress": "progress",
	// dataset.Options
	"Format": "format", "Kind": "kind", "Lambda": "lambda", "Label": "label", "ID": "id",
	"Exclude": "exclude", "Comma": "comma", "D": "d", "Labels": "labels", "Scale": "scale",
	"Classes": "classes", "Limit": "limit", "Shuffle": "shuffle-seed", "SkipLines": "skip-lines",
	"NoHeader": "no-header", "Sparse": "sparse", "FeatureScale": "feature-scale",
	// experiment.Config and certify's specs
	"Tau": "tau", "Probes": "mq", "TDel": "t-del", "Horizon": "horizon", "Count": "count",
	"T": "events", "Kappa": "kappa", "Replayed": "replayed", "Epsilon": "epsilon",
	"Delta": "delta", "Alpha": "alpha", "Beta": "beta",
	// the spec's names in library messages
	"pair_angle": "pair-angle", "pair_min": "pair-min", "pair_max": "pair-max",
	"step_decay": "step-decay", "skip_lines": "skip-lines", "sample_bound": "sample-bound",
	"h_min": "hmin", "h_max": "hmax", "selection_fraction": "selection",
}

// causeFlags are, for refusals caused by several settings together rather
// than one field, the flags whose values set the cause.
var causeFlags = []struct {
	err   error
	flags []string
}{
	{olbfgs.ErrDiverged, []string{"eta", "gamma0", "lambda", "step-decay", "step-power", "damping"}},
	{olbfgs.ErrSampleBound, []string{"sample-bound"}},
	{certify.ErrResolution, []string{"epsilon", "delta", "alpha", "radius", "sample-bound"}},
	{noise.ErrRange, []string{"epsilon", "delta", "alpha", "radius", "sample-bound"}},
	{noise.ErrSensitivity, []string{"alpha", "radius", "sample-bound"}},
	{stream.ErrNotSPD, []string{"kappa"}},
}

// causeHint appends to a refusal caused by several settings (causeFlags)
// the values of those flags the user gave ("given --eta 1e+308"), so the
// message names what the user wrote.
func causeHint(cmd *cobra.Command, err error) error {
	if err == nil || cmd == nil {
		return err
	}
	for _, c := range causeFlags {
		if !errors.Is(err, c.err) {
			continue
		}
		var given []string
		for _, name := range c.flags {
			if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
				given = append(given, "--"+name+" "+f.Value.String())
			}
		}
		if len(given) == 0 {
			return err
		}
		return &wordedError{msg: err.Error() + " (given " + strings.Join(given, ", ") + ")", err: err}
	}
	return err
}

// flagFor returns the flag of cmd that sets the library field (a Go field
// path or a spec name), or "" if cmd has none.
func flagFor(cmd *cobra.Command, field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		field = field[i+1:]
	}
	if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i]
	}
	name, ok := fieldFlags[field]
	if !ok || cmd == nil {
		return ""
	}
	for _, n := range []string{name, name + "s"} {
		if cmd.Flags().Lookup(n) != nil {
			return n
		}
	}
	return ""
}

// specName matches the spec's snake_case names in library messages.
var specName = regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`)

// rewordFields says a library's field error in the words of cmd's flags:
// a typed error naming a field (olbfgs, experiment, certify, dataset)
// becomes "--flag: value: what it must be" where it stands in the
// message, and the spec's names of fields (pair_angle) become their flags.
// errors.Is and errors.As see err through it, so its exit status is kept.
func rewordFields(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, fe := range fieldErrors(err) {
		if flag := flagFor(cmd, fe.field); flag != "" {
			msg = strings.Replace(msg, fe.err.Error(), fmt.Sprintf("--%s: %s", flag, fe.words), 1)
		}
	}
	msg = specName.ReplaceAllStringFunc(msg, func(w string) string {
		if flag := flagFor(cmd, w); flag != "" {
			return "--" + flag
		}
		return w
	})
	if msg == err.Error() {
		return err
	}
	return &wordedError{msg: msg, err: err}
}

// fieldError is a library error naming a field, and what it says of the
// field's value.
type fieldError struct {
	err   error
	field string
	words string
}

// fieldErrors returns the libraries' field errors err holds.
func fieldErrors(err error) []fieldError {
	var out []fieldError
	var oc *olbfgs.ConfigError
	if errors.As(err, &oc) {
		out = append(out, fieldError{oc, oc.Field, fmt.Sprintf("%v: %s", oc.Value, oc.Want)})
	}
	var ec *experiment.ConfigError
	if errors.As(err, &ec) {
		out = append(out, fieldError{ec, ec.Field, fmt.Sprintf("%v: %s", ec.Value, ec.Want)})
	}
	var se *certify.SpecError
	if errors.As(err, &se) {
		w := se.Err.Error()
		if se.Value != nil {
			w = fmt.Sprintf("%v: %s", se.Value, w)
		}
		out = append(out, fieldError{se, se.Field, w})
	}
	var do *dataset.OptionError
	if errors.As(err, &do) {
		out = append(out, fieldError{do, do.Field, do.Msg})
	}
	return out
}
