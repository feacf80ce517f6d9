package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"unlearn/olbfgs"
)

// certifiableFlags are the learner options that make a state certifiable
// (olbfgs.Config.Radius, SampleBound, PairAngle, PairMin, PairMax): each is
// off at 0, the paper's learner.
type certifiableFlags struct {
	radius, sampleBound, pairAngle, pairMin, pairMax float64
}

func (c *certifiableFlags) register(f *pflag.FlagSet) {
	f.Float64Var(&c.radius, "radius", 0, "certifiable learner: project w onto the ball ‖w‖ ≤ W after every step (0: off)")
	f.Float64Var(&c.sampleBound, "sample-bound", 0, "certifiable learner: refuse inserts whose payload norm exceeds B (0: off); --profile certifiable: √d/2 unless given, rows above it clipped onto it (init, train) instead of refused")
	f.Float64Var(&c.pairAngle, "pair-angle", 0, "certifiable learner: store only curvature pairs with tan∠(s,y) ≤ r̄ < 1 (0: off; needs --pair-min, --pair-max)")
	f.Float64Var(&c.pairMin, "pair-min", 0, "certifiable learner: smallest sᵀy/‖s‖² of a stored pair (with --pair-angle)")
	f.Float64Var(&c.pairMax, "pair-max", 0, "certifiable learner: largest sᵀy/‖s‖² of a stored pair (with --pair-angle)")
}

// apply sets the options on cfg.
func (c *certifiableFlags) apply(cfg *olbfgs.Config) {
	cfg.Radius, cfg.SampleBound = c.radius, c.sampleBound
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = c.pairAngle, c.pairMin, c.pairMax
}

// certifiableSummary says in one line whether a learner configured as cfg
// can have a noised release certified, and with which settings.
// clipWords says that ingest clips rows to the sample bound (a store of
// the certifiable profile: store.Config.ClipToBound).
func clipWords(cfg olbfgs.Config) string {
	return fmt.Sprintf("rows clipped to the sample bound: ingest scales a row with ‖x‖ > B = %.4g onto the ball ‖x‖ = B (a map of the row alone: B stays a fact of every logged row)", cfg.SampleBound)
}

func certifiableSummary(cfg olbfgs.Config) string {
	if cfg.Radius <= 0 || cfg.SampleBound <= 0 {
		return "not certifiable: a noised release needs --radius and --sample-bound (init); only exact releases (every forget served by replay) can be published"
	}
	s := fmt.Sprintf("certifiable: radius W = %.4g, sample bound B = %.4g, ", cfg.Radius, cfg.SampleBound)
	if cfg.CheckCertifiableProfile() == nil {
		return s + "no curvature memory, schedule η₀/(1 + η₀·a·t) (a noised release after an approximate forget derives α from the step count: it shrinks with the stream; docs/theory.md §16)"
	}
	if cfg.PairAngle > 0 {
		return s + fmt.Sprintf("pair guard r̄ = %.4g with sᵀy/‖s‖² in [%.4g, %.4g] (a noised release can derive α below the diameter)", cfg.PairAngle, cfg.PairMin, cfg.PairMax)
	}
	return s + "no pair guard (a noised release's α is the diameter 2W; --pair-angle, --pair-min, --pair-max can make it smaller)"
}
