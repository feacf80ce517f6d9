// Command unlearn is the command-line front end of the toolkit for certified
// machine unlearning in online L-BFGS: it generates and trains on event
// streams, runs the paper's experiments and benchmark grid, and computes,
// applies and verifies certificates. It holds no science of its own: every
// subcommand parses flags, reads and writes files, and calls the library.
//
// Run `unlearn --help` or `unlearn COMMAND --help` for the flags, and see
// docs/cli.md for the reference.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// version is the toolkit version recorded in outputs; it is overridden at
// link time by release builds (-ldflags "-X main.version=…").
var version = "0.1.0-dev"

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "unlearn:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "unlearn",
		Short: "Certified machine unlearning for online L-BFGS",
		Long: `unlearn generates event streams, trains an online L-BFGS learner on them,
measures how unlearning interventions align the optimizer state (w, Z) with the
deletion-edited counterfactual, and certifies unlearned states.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(flagParseError)
	root.AddCommand(
		newGenCmd(),
		newTrainCmd(),
		newRunCmd(),
		newDecayCmd(),
		newBenchCmd(),
		newMergeCmd(),
		newSigmaCmd(),
		newBoundCmd(),
		newCertifyCmd(),
		newVerifyCmd(),
		newReportCmd(),
		newDocsCmd(),
	)
	for _, c := range registered {
		root.AddCommand(c())
	}
	plainWords(root)
	return root
}

// registered holds the constructors of commands that register themselves
// from their own file (func init() { register(newXCmd) }), so that adding
// a command does not touch this file. They are added after the built-in
// ones, in the order the files' init functions run (file name order).
var registered []func() *cobra.Command

// register adds a command constructor to the root command.
func register(c func() *cobra.Command) { registered = append(registered, c) }

// usageError marks a bad command line (exit status 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// flagError reports a bad value of flag name.
func flagError(name string, format string, args ...any) error {
	return usageError{fmt.Errorf("--%s: %s", name, fmt.Sprintf(format, args...))}
}

// firstStepsError checks that a learner configured as cfg can take a
// finite, meaningful first step on the loss of header h
// (olbfgs.Config.CheckFirstSteps), and turns a refusal into an error
// naming what the user wrote: the flag that sets the field — of η, γ₀ and
// λ, whose product is refused together, the one given on the command line
// — or, for the loss's constants, the file whose header holds them (from,
// such as "--header q.jsonl"; "" when they come from flags).
func firstStepsError(cfg olbfgs.Config, h stream.Header, changed func(string) bool, from string) error {
	err := cfg.CheckFirstSteps(h)
	var ce *olbfgs.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Field {
	case "Loss.Lambda", "Loss.H0":
		if from == "" || (ce.Field == "Loss.Lambda" && changed("lambda")) {
			return flagError("lambda", "%v: %s", ce.Value, ce.Want)
		}
		return usageError{fmt.Errorf("%s: the header's loss (curvature floor μ = %v): %s", from, ce.Value, ce.Want)}
	case "StepSize":
		for _, name := range []string{"eta", "gamma0", "lambda"} {
			if changed(name) {
				return flagError(name, "%s", ce.Want)
			}
		}
		return flagError("eta", "%s", ce.Want)
	}
	return configFlagError(err)
}

// configFlagError turns an olbfgs configuration error into an error naming
// the command-line flag that sets the field.
func configFlagError(err error) error {
	var ce *olbfgs.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	flag := fieldFlags[ce.Field]
	if flag == "" {
		return err
	}
	return flagError(flag, "%v: %s", ce.Value, ce.Want)
}
