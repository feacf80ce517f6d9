package audit

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"unlearn/noise"
)

// Defaults of [Config].
const (
	// DefaultTrials is the default number of trials per world, n. With the
	// default split, 5000 per world bound each rate on the evaluation
	// split; the largest ε_lb they can show is ≈ 5.96 (docs/audit.md has
	// the table), and the d = 25 audit of `unlearn audit` takes 3.5–4 s of
	// CPU with the secure sampler, 0.35 s with the seeded one
	// (docs/audit.md).
	DefaultTrials = 10000
	// DefaultSelectionFraction is the default share of each world's trials
	// in the selection split.
	DefaultSelectionFraction = 0.5
	// DefaultGamma is the default γ: the probability that an audit of a
	// sound pipeline reports a violation is at most γ = 10⁻⁵, the
	// false-rejection rate the Google DP library's statistical tests are
	// built for. Lowering γ costs little: ε_lb's ceiling falls like
	// ln ln(k/γ) (docs/audit.md).
	DefaultGamma = 1e-5
)

// Names of the two tests, as they appear in a report.
const (
	// TestLikelihoodRatio projects the artifact onto the difference of the
	// worlds' means.
	TestLikelihoodRatio = "likelihood-ratio"
	// TestBlackBox is the best single statistic of the whole artifact.
	TestBlackBox = "black-box"
)

// rateBounds is k, the number of one-sided Clopper–Pearson bounds the audit
// uses: a false-positive and a false-negative rate for each of two tests.
const rateBounds = 4

// Verdicts of a report.
const (
	// Consistent: ε_lb ≤ ε, the trials do not contradict the certificate.
	Consistent = "consistent"
	// Violation: ε_lb > ε, the release leaks more than it certifies (or,
	// with probability at most γ on a sound pipeline, a false alarm).
	Violation = "VIOLATION"
)

// Config configures an audit.
type Config struct {
	// A releases the artifact of world A, unlearned: trained on the full
	// stream, the intervention applied, released. Required.
	A Mechanism
	// B releases the artifact of world B, retrained: trained on the
	// deletion-edited stream, released with the same configuration.
	// Required; B.Dim() must equal A.Dim().
	B Mechanism
	// Epsilon is the certified ε > 0 the release claims. Required.
	Epsilon float64
	// Delta is the certified δ ∈ [0, 1) the release claims. Required (0
	// is a claim of pure ε-indistinguishability).
	Delta float64
	// WDim says how many leading coordinates of an artifact are the
	// parameters w; the rest is the released memory. It only names
	// coordinates in the report and adds the norms of the two parts to the
	// black-box statistics. If WDim is 0, the whole artifact counts as w.
	WDim int
	// Trials is n, the number of trials in each world. Defaults to
	// DefaultTrials. Each split must get at least one trial per world.
	Trials int
	// SelectionFraction is the share of each world's trials, in (0, 1),
	// used to choose the tests (the selection split); the rest (the
	// evaluation split) bounds their error rates. Defaults to
	// DefaultSelectionFraction.
	SelectionFraction float64
	// Gamma is γ ∈ (0, 1): the audit's ε_lb is a lower confidence bound at
	// level 1 − γ. Defaults to DefaultGamma.
	Gamma float64
	// Seeded makes the audit draw its noise from noise.SeededSampler —
	// seeded: for speed, not deployment — with world A's sampler seeded
	// with Seed and world B's with Seed ^ SeedB. Otherwise (the default)
	// noise comes from noise.SecureSampler, as a deployed release's does.
	Seeded bool
	// Seed seeds the samplers when Seeded is set; ignored otherwise.
	Seed uint64
	// Progress, if not nil, is called after every release with the number
	// done and the total, from the goroutine that called Run: 2n releases,
	// plus those of the selection split drawn again when its artifacts do
	// not fit MemoryBudget (the total then grows once, when it is known).
	Progress func(done, total int)
	// MemoryBudget is the number of bytes Run may hold for the artifacts
	// of the selection split, from which the tests are chosen. If the
	// split's artifacts (2·⌊f·n⌉·Dim floats) fit, they are kept; otherwise
	// Run draws the split again, block by block of coordinates (see Run).
	// It also bounds n: the split's per-test columns need
	// [BytesPerSelectionTrial] bytes per trial. Defaults to
	// DefaultMemoryBudget.
	MemoryBudget int64
}

// DefaultMemoryBudget is the default Config.MemoryBudget, 128 MiB: the
// audit of a d = 784 store (an artifact of 16,464 numbers with τ = 10) with
// 10⁴ trials then stays under 300 MB of memory in all (docs/audit.md).
const DefaultMemoryBudget = 128 << 20

// BytesPerSelectionTrial is the memory Run needs per trial of the selection
// split whatever the artifact's length: the two worlds' values of the
// statistic being scored, of one coordinate (streamed), of the likelihood
// ratio and of three norms, and the Clopper–Pearson table (13 float64s).
const BytesPerSelectionTrial = 13 * 8

// MaxTrials returns the largest Config.Trials that Run accepts at the
// selection fraction f and the memory budget (0: DefaultMemoryBudget): the
// selection split must fit the budget at BytesPerSelectionTrial per trial,
// and 2n must be an int with room to spare (n ≤ MaxInt/4).
func MaxTrials(f float64, budget int64) int {
	if budget == 0 {
		budget = DefaultMemoryBudget
	}
	if !(f > 0 && f < 1) || budget < BytesPerSelectionTrial {
		return 0
	}
	// ⌊f·n⌉ ≤ sel ⇔ f·n < sel + 1/2.
	sel := float64(budget / BytesPerSelectionTrial)
	n := math.Floor((sel + 0.5) / f)
	if n >= math.MaxInt/4 || math.IsInf(n, 0) {
		return math.MaxInt / 4
	}
	return int(n)
}

// SeedB is XORed into Config.Seed to seed world B's sampler, so that the
// worlds draw different noise from one seed.
const SeedB uint64 = 0x5851f42d4c957f2d

// TestResult is what one test did on the evaluation split.
type TestResult struct {
	// Name is TestLikelihoodRatio or TestBlackBox.
	Name string `json:"name"`
	// Statistic describes the scalar the test thresholds, such as
	// "projection on the mean difference", "w[3]", "memory[17]" or "‖x‖".
	Statistic string `json:"statistic"`
	// Threshold is t: the test guesses world A when the statistic is > t
	// (GuessAAbove) or ≤ t (otherwise).
	Threshold   float64 `json:"threshold"`
	GuessAAbove bool    `json:"guess_a_above"`
	// SelectionScore is the ε lower bound the test reached on the
	// selection split, by which it was chosen.
	SelectionScore float64 `json:"selection_score"`
	// FalsePositives counts evaluation trials of world B guessed A, of
	// NegativesB; FalseNegatives counts trials of A guessed B, of
	// PositivesA.
	FalsePositives int `json:"false_positives"`
	NegativesB     int `json:"negatives_b"`
	FalseNegatives int `json:"false_negatives"`
	PositivesA     int `json:"positives_a"`
	// FPRUpper and FNRUpper are the one-sided Clopper–Pearson upper bounds
	// on the false-positive and false-negative rates, each at confidence
	// 1 − γ/k.
	FPRUpper float64 `json:"fpr_upper"`
	FNRUpper float64 `json:"fnr_upper"`
	// EpsilonLB is EpsilonLowerBound(FPRUpper, FNRUpper, δ).
	EpsilonLB float64 `json:"epsilon_lb"`
}

// Report is the outcome of an audit.
type Report struct {
	// EpsilonLB is the largest of the tests' ε lower bounds: with
	// probability at least 1 − γ, the release is not (ε', δ)-certified for
	// any ε' < EpsilonLB.
	EpsilonLB float64 `json:"epsilon_lb"`
	// Epsilon and Delta are the certified (ε, δ) the audit tested.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Verdict is Consistent (EpsilonLB ≤ Epsilon) or Violation.
	Verdict string `json:"verdict"`
	// Trials is n per world; Selection and Evaluation its split.
	Trials     int `json:"trials_per_world"`
	Selection  int `json:"selection_per_world"`
	Evaluation int `json:"evaluation_per_world"`
	// Dim is the length of an artifact, WDim that of its w part.
	Dim  int `json:"dim"`
	WDim int `json:"w_dim"`
	// Gamma is γ; RateBounds is k, the number of Clopper–Pearson bounds
	// (each at confidence 1 − γ/k, Bonferroni); FalseAlarm is the
	// probability bound of a VIOLATION verdict on a sound pipeline, γ.
	Gamma      float64 `json:"gamma"`
	RateBounds int     `json:"rate_bounds"`
	FalseAlarm float64 `json:"false_alarm"`
	// Ceiling is the largest ε_lb these split sizes and γ can show: the
	// bound of a test that makes no error on the evaluation split.
	Ceiling float64 `json:"ceiling"`
	// Thresholds says how thresholds were chosen.
	Thresholds string `json:"thresholds"`
	// Sampler is "secure" or "seeded"; Seed is set for "seeded", and
	// SamplerNote says what that means.
	Sampler     string  `json:"sampler"`
	Seed        *uint64 `json:"seed,omitempty"`
	SamplerNote string  `json:"sampler_note"`
	// Tests are the likelihood-ratio and the black-box test, in that
	// order.
	Tests []TestResult `json:"tests"`
}

// resolved is a Config with its defaults filled in.
type resolved struct {
	Config
	dim, sel, eval int
}

func (c Config) resolve() (resolved, error) {
	if c.Trials == 0 {
		c.Trials = DefaultTrials
	}
	if c.SelectionFraction == 0 {
		c.SelectionFraction = DefaultSelectionFraction
	}
	if c.Gamma == 0 {
		c.Gamma = DefaultGamma
	}
	if c.MemoryBudget == 0 {
		c.MemoryBudget = DefaultMemoryBudget
	}
	switch {
	case c.A == nil:
		return resolved{}, configErr("A", "nil", "required")
	case c.B == nil:
		return resolved{}, configErr("B", "nil", "required")
	case !(c.Epsilon > 0) || math.IsInf(c.Epsilon, 0):
		return resolved{}, configErr("Epsilon", c.Epsilon, "must be positive and finite")
	case !(c.Delta >= 0 && c.Delta < 1):
		return resolved{}, configErr("Delta", c.Delta, "must be in [0, 1)")
	case !(c.Gamma > 0 && c.Gamma < 1):
		return resolved{}, configErr("Gamma", c.Gamma, "must be in (0, 1)")
	case c.Gamma/rateBounds == 0:
		return resolved{}, configErr("Gamma", c.Gamma, fmt.Sprintf("must be at least %v: each of the %d Clopper–Pearson bounds is at level γ/%d, which must be a positive float64", rateBounds*0x1p-1074, rateBounds, rateBounds))
	case !(c.SelectionFraction > 0 && c.SelectionFraction < 1):
		return resolved{}, configErr("SelectionFraction", c.SelectionFraction, "must be in (0, 1)")
	case c.Trials < 2:
		return resolved{}, configErr("Trials", c.Trials, "must be at least 2")
	case c.MemoryBudget < 16*BytesPerSelectionTrial:
		return resolved{}, configErr("MemoryBudget", c.MemoryBudget, fmt.Sprintf("must be at least %d bytes", 16*BytesPerSelectionTrial))
	case c.Trials > MaxTrials(c.SelectionFraction, c.MemoryBudget):
		return resolved{}, configErr("Trials", c.Trials, fmt.Sprintf("must be at most %d at selection fraction %v: the selection split needs %d bytes per trial within the memory budget of %d bytes",
			MaxTrials(c.SelectionFraction, c.MemoryBudget), c.SelectionFraction, BytesPerSelectionTrial, c.MemoryBudget))
	}
	r := resolved{Config: c, dim: c.A.Dim()}
	if d := c.B.Dim(); d != r.dim || r.dim < 1 {
		return resolved{}, fmt.Errorf("%w: world A releases %d numbers, world B %d", ErrDim, r.dim, d)
	}
	if c.WDim < 0 || c.WDim > r.dim {
		return resolved{}, configErr("WDim", c.WDim, fmt.Sprintf("must be in [0, %d], the artifact's length", r.dim))
	}
	if r.WDim == 0 {
		r.WDim = r.dim
	}
	r.sel = int(math.Round(c.SelectionFraction * float64(c.Trials)))
	r.eval = c.Trials - r.sel
	if r.sel < 1 || r.eval < 1 {
		return resolved{}, configErr("Trials", c.Trials, fmt.Sprintf("too few to split at selection_fraction = %v: each split needs a trial per world", c.SelectionFraction))
	}
	return r, nil
}

// Ceiling returns the largest ε lower bound an audit with eval evaluation
// trials per world, γ and δ can report: that of a test with no error on
// the evaluation split, EpsilonLowerBound(p, p, δ) with
// p = 1 − (γ/k)^{1/eval}. It is ≈ ln(eval / ln(k/γ)) and grows only
// logarithmically with the number of trials. It panics on out-of-range
// arguments (programmer errors).
func Ceiling(eval int, gamma, delta float64) float64 {
	p := ClopperPearsonUpper(0, eval, gamma/rateBounds)
	return EpsilonLowerBound(p, p, delta)
}

// statistic is a scalar function of an artifact: coordinate coord of it
// (coord ≥ 0), or f.
type statistic struct {
	name  string // if coord < 0
	coord int
	wDim  int // for a coordinate's name
	f     func(x []float64) float64
}

// value returns the statistic of the artifact x.
func (s statistic) value(x []float64) float64 {
	if s.coord >= 0 {
		return x[s.coord]
	}
	return s.f(x)
}

// label names the statistic in a report: "w[3]", "memory[17]", "‖x‖", ….
func (s statistic) label() string {
	switch {
	case s.coord < 0:
		return s.name
	case s.coord < s.wDim:
		return fmt.Sprintf("w[%d]", s.coord)
	}
	return fmt.Sprintf("memory[%d]", s.coord-s.wDim)
}

// world is one world's mechanism and sampler.
type world struct {
	name string
	m    Mechanism
	s    noise.Sampler
}

// release draws one artifact into dst and checks it is finite.
func (w world) release(dst []float64, trial int) error {
	if err := w.m.Release(dst, w.s); err != nil {
		return fmt.Errorf("audit: %w: world %s, trial %d: %w", ErrRelease, w.name, trial, err)
	}
	for i, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("audit: %w: world %s, trial %d: coordinate %d is %v", ErrRelease, w.name, trial, i, v)
		}
	}
	return nil
}

// Run audits a release: it draws cfg.Trials artifacts from each world with
// fresh noise in every trial, chooses two tests on the selection split,
// bounds their error rates on the evaluation split and returns the lower
// confidence bound ε_lb beside the certified ε.
//
// # The procedure
//
//  1. Selection split (the first ⌊f·n⌉ trials of each world, f =
//     SelectionFraction): the artifacts are kept. Two tests are chosen on
//     them. (1) The likelihood-ratio test along the mean difference: the
//     statistic is ⟨m̂_A − m̂_B, x⟩ with m̂ the worlds' selection means. For
//     Gaussian releases N(μ_A, σ²I) and N(μ_B, σ²I) the log-likelihood
//     ratio is an increasing affine function of ⟨μ_A − μ_B, x⟩, so by
//     Neyman–Pearson this family of tests is the most powerful at every
//     false-positive rate (up to the error of m̂). (2) The black-box test:
//     of every coordinate of the artifact (memory included), its L2 norm
//     and (with WDim) the norms of its w and memory parts, the one statistic
//     whose best threshold scores highest. A coordinate that is constant
//     within each world but differs between them — an un-noised released
//     memory, say — separates the worlds without error and is found here.
//     Each test's threshold and orientation maximise the ε lower bound
//     computed on the selection split (with Clopper–Pearson bounds at the
//     same confidence as below); ties go to the smallest threshold.
//  2. Evaluation split (the other trials): artifacts are drawn afresh and
//     only the two chosen statistics are kept. For each test the
//     false-positive rate (B guessed A) and the false-negative rate (A
//     guessed B) get a one-sided Clopper–Pearson upper bound
//     ([ClopperPearsonUpper]) at confidence 1 − γ/k, k = 4 (Bonferroni over
//     the two rates of the two tests), and the test's ε lower bound is
//     [EpsilonLowerBound] of them and the certified δ.
//  3. ε_lb is the larger of the two; the verdict is VIOLATION if
//     ε_lb > Epsilon.
//
// # False alarms
//
// The tests are fixed before any evaluation trial is drawn, so on the
// evaluation split each error count is binomial with the test's true rate.
// With probability at least 1 − γ all k upper bounds hold at once
// (Bonferroni), and then each test's ε lower bound is at most
// ln((1 − δ − FNR)/FPR) and ln((1 − δ − FPR)/FNR) of its TRUE rates,
// which an (ε, δ)-certified release keeps ≤ ε ([EpsilonLowerBound]). So
// on a sound pipeline Run reports a violation with probability at most γ
// — whatever the mechanism, the dimension or the number of trials.
//
// # Cost
//
// 2n releases (the secure sampler costs ≈ 7 µs per noised coordinate, the
// seeded one ≈ 0.1 µs with its per-release overhead), O(2·f·n·Dim) memory
// for the selection artifacts (8 bytes each: a released τ = 10 memory at
// d = 10⁴ makes Dim ≈ 2·10⁵, 16 GB at the default n — audit such releases
// with fewer trials or a mechanism that releases a summary) and
// O(f·n·log(f·n)·Dim) time to choose the black-box statistic. Trials run
// one after another on the calling goroutine: the secure sampler
// serializes its randomness anyway (package noise).
//
// Run returns a *ConfigError (ErrConfig) for a bad Config, ErrDim if the
// worlds' artifacts differ in length, an error wrapping ErrRelease if a
// mechanism fails or releases a non-finite value, and ctx.Err() if ctx is
// cancelled between trials.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	r, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	rep := &Report{
		Epsilon: r.Epsilon, Delta: r.Delta, Trials: r.Trials, Selection: r.sel, Evaluation: r.eval,
		Dim: r.dim, WDim: r.WDim, Gamma: r.Gamma, RateBounds: rateBounds, FalseAlarm: r.Gamma,
		Ceiling:    Ceiling(r.eval, r.Gamma, r.Delta),
		Thresholds: "chosen on the held-out selection split; Clopper–Pearson bounds on the evaluation split at confidence 1 − γ/k each (Bonferroni, k = 4)",
	}
	a := world{name: "A", m: r.A}
	b := world{name: "B", m: r.B}
	if r.Seeded {
		a.s = noise.NewSeededSampler(r.Seed, noise.SamplerOptions{})
		b.s = noise.NewSeededSampler(r.Seed^SeedB, noise.SamplerOptions{})
		rep.Sampler, rep.Seed = noise.NameSeeded, new(r.Seed)
		rep.SamplerNote = "seeded: for speed, not deployment (anyone with the seed can regenerate the noise)"
	} else {
		a.s = noise.NewSecureSampler(noise.SamplerOptions{})
		b.s = a.s
		rep.Sampler = noise.NameSecure
		rep.SamplerNote = "secure: the Google DP library's sampler, as a deployed release uses"
	}

	total, done := 2*r.Trials, 0
	step := func(w world, dst []float64, trial int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.release(dst, trial); err != nil {
			return err
		}
		done++
		if r.Progress != nil {
			r.Progress(done, total)
		}
		return nil
	}
	grow := func(extra int) { total += extra }
	dim := r.dim

	// 1. Selection split.
	var (
		chosen *selection
		err2   error
	)
	if int64(r.sel)*int64(r.dim)*16 <= r.MemoryBudget {
		chosen, err2 = selectKept(r, a, b, step)
	} else {
		chosen, err2 = selectStreamed(r, &a, &b, step, grow)
		if err2 == nil && chosen.note != "" {
			rep.SamplerNote += "; " + chosen.note
		}
	}
	if err2 != nil {
		return nil, err2
	}
	lr, lrRule, lrScore := chosen.lr, chosen.lrRule, chosen.lrScore
	bb, bbRule, bbScore := chosen.bb, chosen.bbRule, chosen.bbScore
	level := r.Gamma / rateBounds

	// 2. Evaluation split.
	tests := []struct {
		st     statistic
		ru     rule
		name   string
		score  float64
		fp, fn int
	}{
		{st: lr, ru: lrRule, name: TestLikelihoodRatio, score: lrScore},
		{st: bb, ru: bbRule, name: TestBlackBox, score: bbScore},
	}
	x := make([]float64, dim)
	for i := range r.eval {
		if err := step(a, x, r.sel+i); err != nil {
			return nil, err
		}
		for k := range tests {
			if !tests[k].ru.guessA(tests[k].st.value(x)) {
				tests[k].fn++
			}
		}
		if err := step(b, x, r.sel+i); err != nil {
			return nil, err
		}
		for k := range tests {
			if tests[k].ru.guessA(tests[k].st.value(x)) {
				tests[k].fp++
			}
		}
	}

	// 3. Bounds and ε_lb.
	for _, t := range tests {
		res := TestResult{
			Name: t.name, Statistic: t.st.label(), Threshold: t.ru.threshold, GuessAAbove: t.ru.above,
			SelectionScore: t.score,
			FalsePositives: t.fp, NegativesB: r.eval, FalseNegatives: t.fn, PositivesA: r.eval,
			FPRUpper: ClopperPearsonUpper(t.fp, r.eval, level),
			FNRUpper: ClopperPearsonUpper(t.fn, r.eval, level),
		}
		res.EpsilonLB = EpsilonLowerBound(res.FPRUpper, res.FNRUpper, r.Delta)
		rep.EpsilonLB = max(rep.EpsilonLB, res.EpsilonLB)
		rep.Tests = append(rep.Tests, res)
	}
	rep.Verdict = Consistent
	if rep.EpsilonLB > rep.Epsilon {
		rep.Verdict = Violation
	}
	return rep, nil
}

// candidates returns the black-box statistics of an artifact of length dim
// whose first wDim coordinates are w: every coordinate, then ‖x‖, then
// (if there is a memory part) ‖w‖ and ‖memory‖.
func candidates(dim, wDim int) []statistic {
	out := make([]statistic, 0, dim+3)
	for i := range dim {
		out = append(out, statistic{coord: i, wDim: wDim})
	}
	out = append(out, statistic{name: "‖x‖", coord: -1, f: func(x []float64) float64 { return norm(x) }})
	if wDim < dim {
		out = append(out,
			statistic{name: "‖w‖", coord: -1, f: func(x []float64) float64 { return norm(x[:wDim]) }},
			statistic{name: "‖memory‖", coord: -1, f: func(x []float64) float64 { return norm(x[wDim:]) }})
	}
	return out
}

func dot(u, v []float64) float64 {
	s := 0.0
	for i, x := range u {
		s += x * v[i]
	}
	return s
}

// norm is the L2 norm, computed without overflow for large finite values.
func norm(x []float64) float64 { return floats.Norm(x, 2) }
