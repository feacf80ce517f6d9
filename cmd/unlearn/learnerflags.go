package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// The learner profiles of --profile.
const (
	profilePaper        = "paper"
	profilePractitioner = "practitioner"
	profileCertifiable  = "certifiable"
)

// learnerFlags are the flags that configure the learner in train and init:
// τ, η, γ0, the curvature guard, the certifiable options, the
// practitioner's options and the profile they start from. A flag given on
// the command line always wins over the profile.
type learnerFlags struct {
	profile                        string
	tau, averageStart              int
	eta, gamma0, curvatureTol      float64
	damping, stepDecay, stepPower  float64
	averagePower                   float64
	intercept, ridgeIntercept      bool
	standardize, average, progress bool
	certifiable                    certifiableFlags
	// etaGrid, set before register, leaves --eta out (tune's --etas gives
	// the step sizes) and makes config take eta as given.
	etaGrid bool
}

func (lf *learnerFlags) register(f *pflag.FlagSet) {
	f.StringVar(&lf.profile, "profile", profilePaper, "learner profile: paper (the paper's o-LBFGS: constant η, last iterate, raw features), practitioner "+
		"(an intercept, standardized features, averaged iterates, damped pairs, a decaying step and progressive statistics, with defaults that need no tuning; docs/data.md) "+
		"or certifiable (logistic: the practitioner's learner as docs/theory.md §16.10 proves it — no curvature memory, a ridged intercept, η₀/(1 + η₀λt), "+
		"polynomial-decay averaging, radius B̂/(2λ), sample bound --sample-bound, √d/2 unless given (features in [0, 1]; rows above it clipped onto it at ingest and train), λ = 1 unless --lambda; features scaled only by the data's fixed --scale, never standardized — "+
		"so that a noised release after an approximate forget derives an α that shrinks with the stream); the flags below override it")
	f.IntVar(&lf.tau, "tau", olbfgs.DefaultMemory, "memory size τ (number of curvature pairs)")
	if !lf.etaGrid {
		f.Float64Var(&lf.eta, "eta", olbfgs.DefaultStepSize, "step size η (the practitioner profile: 0.1)")
	}
	f.Float64Var(&lf.gamma0, "gamma0", olbfgs.DefaultInitialScale, "initial inverse-Hessian scale γ0 (empty memory)")
	f.Float64Var(&lf.curvatureTol, "curvature-tol", olbfgs.DefaultCurvatureTol, "relative curvature guard: store a pair only if sᵀy > tol·‖s‖‖y‖")
	f.BoolVar(&lf.intercept, "intercept", false, "learn an intercept (bias) per output, not regularized (practitioner: on)")
	f.BoolVar(&lf.ridgeIntercept, "ridge-intercept", false, "apply the ridge λ to the intercepts too")
	f.BoolVar(&lf.standardize, "standardize", false, "standardize features online: x̃ = (x − mean)/std over the inserts so far, the statistics part of the state (practitioner: on)")
	f.BoolVar(&lf.average, "average", false, "predict with the average of the iterates (Polyak–Ruppert) instead of the last one (practitioner: on)")
	f.IntVar(&lf.averageStart, "average-start", 0, "with --average: average the iterates after this many inserts only")
	f.Float64Var(&lf.averagePower, "average-power", 0, "with --average: polynomial-decay averaging γ, weighing iterate i as (i/k)^γ so the average forgets early iterates (0: the uniform average; practitioner: 10)")
	f.Float64Var(&lf.damping, "damping", 0, "pair damping δ: y = ∇ℓ(w⁺) − ∇ℓ(w) + δs, bounding a pair's curvature below (practitioner: 10)")
	f.Float64Var(&lf.stepDecay, "step-decay", 0, "step schedule η_t = η·(1 + a·η·t)^(−c): the decay a (0: constant η; practitioner: 0.003)")
	f.Float64Var(&lf.stepPower, "step-power", 0, "step schedule exponent c in (0, 1] (0: 1 with --step-decay; practitioner: 0.75)")
	f.BoolVar(&lf.progress, "progress", false, "keep progressive (predict-then-train) loss and accuracy in the state, with warnings when the model diverges (practitioner: on)")
	lf.certifiable.register(f)
}

// practitioner reports whether --profile practitioner was chosen, and
// checks the flag's value.
func (lf *learnerFlags) practitioner() (bool, error) {
	switch lf.profile {
	case profilePaper, profileCertifiable:
		return false, nil
	case profilePractitioner:
		return true, nil
	}
	return false, flagError("profile", "%q: want paper, practitioner or certifiable", lf.profile)
}

// certifiableProfile reports whether --profile certifiable was chosen.
func (lf *learnerFlags) certifiableProfile() bool { return lf.profile == profileCertifiable }

// lambdaDefault sets the data flags' λ to the profile's when --lambda is
// not given (the practitioner profile recommends PractitionerLambda).
func (lf *learnerFlags) lambdaDefault(fl *pflag.FlagSet, df *dataFlags) error {
	prac, err := lf.practitioner()
	if err != nil {
		return err
	}
	if prac && !fl.Changed("lambda") {
		df.lambda = olbfgs.PractitionerLambda
	}
	if lf.certifiableProfile() && !fl.Changed("lambda") {
		df.lambda = olbfgs.CertifiableLambda
	}
	return nil
}

// check checks the flags that need no data: the profile, τ ≥ 1 and a
// positive η (never 0 for "default"), as in run and decay.
func (lf *learnerFlags) check() error {
	if _, err := lf.practitioner(); err != nil {
		return err
	}
	if lf.tau < 1 && !lf.certifiableProfile() {
		return flagError("tau", "%d must be at least 1", lf.tau)
	}
	if !(lf.eta > 0) || math.IsInf(lf.eta, 0) {
		return flagError("eta", "%v must be positive and finite", lf.eta)
	}
	return nil
}

// config returns the learner configuration of the flags for the loss of
// header h: the profile's, then each flag given on the command line, with
// Dim and Outputs from the loss.
func (lf *learnerFlags) config(fl *pflag.FlagSet, h stream.Header) (olbfgs.Config, error) {
	if err := lf.check(); err != nil {
		return olbfgs.Config{}, err
	}
	if lf.certifiableProfile() {
		return lf.certifiableConfig(fl, h)
	}
	prac, _ := lf.practitioner()
	cfg := olbfgs.Config{Dim: h.D, Memory: lf.tau, StepSize: lf.eta, InitialScale: lf.gamma0, CurvatureTol: lf.curvatureTol}
	if h.Kind == stream.KindMultinomial {
		cfg.Outputs = h.K
	}
	if prac {
		if h.Kind == stream.KindQuadratic {
			return olbfgs.Config{}, flagError("profile", "practitioner: a quadratic stream has no features to standardize and no intercept; use the paper profile (with --average or --step-decay if wanted)")
		}
		cfg = cfg.Practitioner()
		if lf.etaGrid || fl.Changed("eta") {
			cfg.StepSize = lf.eta
		}
	}
	for _, b := range []struct {
		name string
		dst  *bool
		v    bool
	}{
		{"intercept", &cfg.Intercept, lf.intercept}, {"ridge-intercept", &cfg.RidgeIntercept, lf.ridgeIntercept},
		{"standardize", &cfg.Standardize, lf.standardize}, {"average", &cfg.Average, lf.average},
		{"progress", &cfg.Progress, lf.progress},
	} {
		if !prac || fl.Changed(b.name) {
			*b.dst = b.v
		}
	}
	for _, v := range []struct {
		name string
		dst  *float64
		v    float64
	}{{"damping", &cfg.Damping, lf.damping}, {"step-decay", &cfg.StepDecay, lf.stepDecay}, {"step-power", &cfg.StepPower, lf.stepPower},
		{"average-power", &cfg.AveragePower, lf.averagePower}} {
		if !prac || fl.Changed(v.name) {
			*v.dst = v.v
		}
	}
	if fl.Changed("step-decay") && lf.stepDecay == 0 && !fl.Changed("step-power") {
		cfg.StepPower = 0 // a constant step has no exponent
	}
	if !prac || fl.Changed("average-start") {
		cfg.AverageStart = lf.averageStart
	}
	if !cfg.Average && !fl.Changed("average-power") {
		cfg.AveragePower = 0 // --average=false drops the profile's γ too
	}
	lf.certifiable.apply(&cfg)
	if err := cfg.Validate(); err != nil {
		var ce *olbfgs.ConfigError
		if errors.As(err, &ce) && ce.Field == "Dim" {
			return cfg, err // the data's d: the caller names the file
		}
		return cfg, configFlagError(err)
	}
	if loss, err := h.Loss(); err == nil {
		if err := cfg.ValidateFor(loss); err != nil {
			return cfg, configFlagError(err)
		}
	}
	return cfg, nil
}

// optionsSummary describes the practitioner's options of cfg in one line,
// or says that the learner is the paper's.
func optionsSummary(cfg olbfgs.Config) string {
	var on []string
	if cfg.Intercept {
		s := "intercept"
		if cfg.RidgeIntercept {
			s += " (with ridge)"
		}
		on = append(on, s)
	}
	if cfg.Standardize {
		on = append(on, "standardized features")
	}
	if cfg.Average {
		s := "averaged iterates"
		if cfg.AveragePower > 0 {
			s = fmt.Sprintf("averaged iterates (polynomial decay γ = %.4g)", cfg.AveragePower)
		}
		if cfg.AverageStart > 0 {
			s += fmt.Sprintf(" after %d inserts", cfg.AverageStart)
		}
		on = append(on, s)
	}
	if cfg.Damping > 0 {
		on = append(on, fmt.Sprintf("pair damping δ = %.4g", cfg.Damping))
	}
	if cfg.StepDecay > 0 {
		c := cfg.StepPower
		if c == 0 {
			c = 1
		}
		on = append(on, fmt.Sprintf("step η_t = η·(1 + %.4g·η·t)^−%.4g", cfg.StepDecay, c))
	}
	if cfg.Progress {
		on = append(on, "progressive statistics")
	}
	if len(on) == 0 {
		return "learner: the paper's o-LBFGS (constant η, last iterate, raw features)"
	}
	return "learner options: " + strings.Join(on, ", ")
}

// classNamer returns the names of a model's classes (stream.Linear.Class
// indices): the labels of the data's --classes recorded in the header's
// source metadata, else −1/+1 (logistic) or the index (multinomial).
func classNamer(h stream.Header) func(k int) string {
	var src struct {
		Classes []string `json:"classes"`
	}
	h.MetaValue("source", &src) //nolint:errcheck // absent or malformed metadata: default names
	return func(k int) string {
		switch {
		case k < len(src.Classes):
			return fmt.Sprintf("%q", src.Classes[k])
		case h.Kind == stream.KindLogistic:
			return []string{"-1", "+1"}[min(k, 1)]
		}
		return fmt.Sprintf("class %d", k)
	}
}

// printProgress prints a learner's progressive statistics and their
// warnings, if it keeps them.
func printProgress(out, errw io.Writer, l *olbfgs.Learner, h stream.Header) {
	p, ok := l.Progress()
	if !ok {
		return
	}
	printProgressOf(out, errw, p, h)
}

// printProgressOf prints progressive statistics (see printProgress).
func printProgressOf(out, errw io.Writer, p olbfgs.Progress, h stream.Header) {
	if p.N == 0 {
		fmt.Fprintln(out, "progressive: no insert scored yet")
		return
	}
	recent := min(p.N, olbfgs.ProgressWindow)
	if acc, ok := p.Accuracy(); ok {
		fmt.Fprintf(out, "progressive (predict, then train; %d inserts): loss %.4g, accuracy %.4f; last %d: loss %.4g (zero model %.4g), accuracy %.4f\n",
			p.N, p.MeanLoss(), acc, recent, p.RecentLoss, p.RecentZeroLoss, p.RecentAccuracy)
	} else {
		fmt.Fprintf(out, "progressive (predict, then train; %d inserts): loss %.4g; last %d: loss %.4g (zero model %.4g)\n",
			p.N, p.MeanLoss(), recent, p.RecentLoss, p.RecentZeroLoss)
	}
	for _, w := range p.Warnings(classNamer(h)) {
		fmt.Fprintf(errw, "warning: %s\n", w)
	}
}

// finalCheckRows is the number of rows train scores with the model it
// trained to check that it does not predict a single class.
const finalCheckRows = 1000

// warnSingleClass scores samples (at most finalCheckRows of them) with the
// trained model and warns on w when it predicts one class for at least 99%
// of them while at most 90% of them have that label — a model that learned
// nothing but a constant, whatever its progressive statistics say (a
// learner whose step is too large for its features can end on such a
// model even when it predicted both classes along the way). Nothing for a
// loss without classes.
func warnSingleClass(w io.Writer, l *olbfgs.Learner, h stream.Header, next func() (stream.Sample, bool)) {
	lin, ok := l.Loss().(stream.Linear)
	if !ok {
		return
	}
	_, classes := lin.Class(0)
	if classes == 0 {
		return
	}
	pred, lab := make([]int, classes), make([]int, classes)
	u := make([]float64, l.Outputs())
	sc := l.Scorer()
	n := 0
	for n < finalCheckRows {
		z, ok := next()
		if !ok {
			break
		}
		sc.Scores(u, z)
		y, _ := lin.Predict(u)
		k, _ := lin.Class(y)
		c, _ := lin.Class(z.S)
		pred[k]++
		lab[c]++
		n++
	}
	if n < 100 {
		return
	}
	name := classNamer(h)
	for k := range pred {
		if float64(pred[k]) >= 0.99*float64(n) && float64(lab[k]) <= 0.9*float64(n) {
			fmt.Fprintf(w, "warning: the trained model predicts a single class: %.1f%% of %d rows of the data are predicted as %s, while %.1f%% of them are; %s\n",
				100*float64(pred[k])/float64(n), n, name(k), 100*float64(lab[k])/float64(n), singleClassAdvice(l.Config()))
		}
	}
}

// singleClassAdvice is what to try when a model of configuration c
// predicts one class: a learner within the certifiable profile allows neither
// standardization nor another schedule, so its levers are the
// regularization, the declared feature scale and more data.
func singleClassAdvice(c olbfgs.Config) string {
	if c.CheckCertifiableProfile() == nil {
		return "with the certifiable profile, lower the regularization (--lambda), declare a feature scale that spreads the features over [0, 1] (--feature-scale), or ingest more rows"
	}
	return "lower the step size (--eta), standardize the features (--standardize), or use --profile practitioner"
}

// certifiableConfig is config for --profile certifiable: the profile of
// olbfgs.Config.CertifiableProfile for the header's λ and the sample bound
// (--sample-bound, default √d/2: olbfgs.CertifiableSampleBound; the
// store and train clip rows above it onto it), then each flag
// given on the command line that the scheduled bound covers; a flag it
// does not cover (a curvature memory, standardization, an unridged
// intercept, a schedule exponent other than 1, pair damping, a pair guard
// or curvature tolerance, a loss other than logistic) is refused, naming
// it.
func (lf *learnerFlags) certifiableConfig(fl *pflag.FlagSet, h stream.Header) (olbfgs.Config, error) {
	if h.Kind != stream.KindLogistic {
		return olbfgs.Config{}, flagError("profile", "certifiable: the scheduled bound is derived here for the logistic loss only, not %s", h.Kind)
	}
	refuse := []struct {
		name string
		bad  bool
		why  string
	}{
		{"tau", fl.Changed("tau") && lf.tau != 0, "must be 0 in the certifiable profile: a curvature memory leaves α at the diameter or at a floor that does not decay (docs/theory.md §16.9)"},
		{"standardize", lf.standardize, "is refused in the certifiable profile: its statistics are functions of every row, the deleted ones included; use the data's fixed --scale or --feature-scale"},
		{"ridge-intercept", fl.Changed("ridge-intercept") && !lf.ridgeIntercept, "must stay on in the certifiable profile: an unregularized intercept has no contraction (μ = 0)"},
		{"step-power", fl.Changed("step-power") && lf.stepPower != 1, "must be 1 in the certifiable profile: the proved schedule is η₀/(1 + η₀·a·t)"},
		{"damping", fl.Changed("damping") && lf.damping != 0, "has no effect without a curvature memory and is refused in the certifiable profile"},
		{"pair-angle", lf.certifiable.pairAngle != 0, "is refused in the certifiable profile: it has no curvature memory to guard"},
		{"pair-min", fl.Changed("pair-min"), "is refused in the certifiable profile: it has no curvature memory to guard"},
		{"pair-max", fl.Changed("pair-max"), "is refused in the certifiable profile: it has no curvature memory to guard"},
		{"curvature-tol", fl.Changed("curvature-tol"), "is refused in the certifiable profile: it has no curvature memory to guard"},
	}
	for _, r := range refuse {
		if r.bad {
			return olbfgs.Config{}, flagError(r.name, "%s", r.why)
		}
	}
	cfg := olbfgs.Config{Dim: h.D, StepSize: lf.eta, InitialScale: lf.gamma0, CurvatureTol: lf.curvatureTol, Progress: lf.progress}
	cfg.SampleBound = olbfgs.CertifiableSampleBound(h.D)
	if fl.Changed("sample-bound") {
		cfg.SampleBound = lf.certifiable.sampleBound
	}
	if !(cfg.SampleBound > 0) || math.IsInf(cfg.SampleBound, 0) {
		return cfg, flagError("sample-bound", "%v must be positive and finite in the certifiable profile", cfg.SampleBound)
	}
	if !(h.Lambda > 0) {
		return cfg, flagError("lambda", "%v must be positive in the certifiable profile (μ = λ: the bound's contraction)", h.Lambda)
	}
	cfg = cfg.CertifiableProfile(h.Lambda)
	if fl.Changed("radius") {
		cfg.Radius = lf.certifiable.radius
	}
	if fl.Changed("eta") {
		cfg.StepSize = lf.eta
	}
	if fl.Changed("step-decay") {
		cfg.StepDecay = lf.stepDecay
	}
	if fl.Changed("intercept") {
		cfg.Intercept, cfg.RidgeIntercept = lf.intercept, lf.intercept
	}
	if fl.Changed("average") {
		cfg.Average = lf.average
	}
	if fl.Changed("average-power") {
		cfg.AveragePower = lf.averagePower
	}
	if fl.Changed("average-start") {
		cfg.AverageStart = lf.averageStart
	}
	if !cfg.Average {
		cfg.AveragePower, cfg.AverageStart = 0, 0
	}
	if err := cfg.Validate(); err != nil {
		return cfg, configFlagError(err)
	}
	if err := cfg.CheckCertifiableProfile(); err != nil {
		return cfg, configFlagError(err)
	}
	if loss, err := h.Loss(); err == nil {
		if err := cfg.ValidateFor(loss); err != nil {
			return cfg, configFlagError(err)
		}
	}
	return cfg, nil
}
