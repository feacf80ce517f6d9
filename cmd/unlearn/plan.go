package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

func init() { register(newPlanCmd) }

func newPlanCmd() *cobra.Command {
	var (
		streamFile, ages, intervention, calibration, format, taus string
		epsilon, delta, eta, gamma0                               float64
		replayed, steps                                           int
		profile                                                   string
		certifiable                                               certifiableFlags
	)
	cmd := &cobra.Command{
		Use:   "plan --stream FILE --epsilon E --delta D --ages 'A,B;C' [learner flags]",
		Short: "Print the σ a certifiable learner needs for planned deletion requests",
		Long: `plan answers "how much noise will a release need?" before any deletion happens.
For the learner configuration given by the flags (the certifiable options decide
what the toolkit can prove) and the loss of --stream's header, it derives, for
every memory size (--tau, a comma-separated list) and every planned request
(--ages: requests separated by ';', each a comma-separated list of deletion ages
in update steps at the release time — any schedule, not only consecutive ages),
the α a certified release of that request is calibrated to, and σ at (ε, δ).
The last line is the worst case: the σ that covers every planned request.

Every α is derived from public quantities (docs/theory.md): the recursion of
Theorem "Bounded counterfactual state deviation" for a guarded learner, plus the
intervention's allowance, capped by the diameter 2W' of the learner's ball.`,
		Example: `  unlearn gen --kind quadratic --kappa 1 --events 300 --out iso.jsonl
  unlearn plan --stream iso.jsonl --epsilon 1 --delta 1e-5 --radius 2 --sample-bound 3 \
      --pair-angle 0.01 --pair-min 0.99 --pair-max 1.01 --eta 1 --tau 3,10 --ages '0;100;0,50,500'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := cmd.Flags().Changed
			if streamFile == "" {
				return flagError("stream", "required (its header defines the loss)")
			}
			for _, name := range []string{"epsilon", "delta", "ages"} {
				if !changed(name) {
					return flagError(name, "required")
				}
			}
			hist, err := stream.ReadFile(streamFile)
			if err != nil {
				return err
			}
			h := hist.Header
			cal, err := noise.ParseCalibration(calibration)
			if err != nil {
				return flagError("calibration", "%q: want analytic or classic", calibration)
			}
			b, ok := builtinByName(intervention)
			if !ok {
				return flagError("intervention", "%q: want noop, param-only, pair-drop, memory-reset, retain-ft or drop-refill", intervention)
			}
			var schedules []certify.Deletion
			for i, part := range strings.Split(ages, ";") {
				var a []int
				for _, f := range strings.Split(strings.TrimSpace(part), ",") {
					if f = strings.TrimSpace(f); f == "" {
						continue
					}
					v, err := strconv.Atoi(f)
					if err != nil || v < 0 {
						return flagError("ages", "request %d: %q is not a non-negative integer", i+1, f)
					}
					a = append(a, v)
				}
				schedules = append(schedules, certify.Deletion{Ages: a, Intervention: b, Replayed: replayed})
			}
			if profile == profileCertifiable {
				return planCertifiable(cmd, h, schedules, certifiable, steps, epsilon, delta, cal, changed("sample-bound"), changed("radius"))
			} else if profile != profilePaper {
				return flagError("profile", "%q: want paper or certifiable", profile)
			}
			var tauList []int
			for _, f := range strings.Split(taus, ",") {
				v, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || v < 1 {
					return flagError("tau", "%q is not an integer ≥ 1", f)
				}
				tauList = append(tauList, v)
			}
			cfg := olbfgs.DefaultConfig(h.D)
			cfg.Memory, cfg.StepSize, cfg.InitialScale = tauList[0], eta, gamma0
			certifiable.apply(&cfg)
			if err := cfg.Validate(); err != nil {
				return configFlagError(err)
			}
			t, err := certify.RequiredSigma(certify.PlanSpec{Epsilon: epsilon, Delta: delta, Calibration: cal, Config: cfg, Header: h, Schedules: schedules, Taus: tauList})
			if err != nil {
				return certifyFlagError(err)
			}
			w := cmd.OutOrStdout()
			switch format {
			case "markdown", "md":
				return t.WriteMarkdown(w)
			case "csv":
				return t.WriteCSV(w)
			case "json":
				return t.WriteJSON(w)
			}
			return flagError("format", "%q: want markdown, csv or json", format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&streamFile, "stream", "", "a stream file whose header defines the loss (required)")
	f.Float64Var(&epsilon, "epsilon", 0, "privacy parameter ε > 0 (required)")
	f.Float64Var(&delta, "delta", 0, "privacy parameter δ ∈ (0, 1) (required)")
	f.StringVar(&ages, "ages", "", "planned requests: ';'-separated lists of ','-separated deletion ages (required)")
	f.StringVar(&intervention, "intervention", "noop", "intervention applied at each request")
	f.IntVar(&replayed, "replayed", 0, "inserts replayed by retain-ft")
	f.StringVar(&taus, "tau", strconv.Itoa(olbfgs.DefaultMemory), "memory sizes τ, comma-separated")
	f.Float64Var(&eta, "eta", olbfgs.DefaultStepSize, "step size η")
	f.Float64Var(&gamma0, "gamma0", olbfgs.DefaultInitialScale, "initial inverse-Hessian scale γ0")
	f.StringVar(&calibration, "calibration", "analytic", "noise calibration: analytic or classic (ε < 1)")
	f.StringVar(&format, "format", "markdown", "output: markdown, csv or json")
	f.StringVar(&profile, "profile", profilePaper, "paper (the flags below configure the learner) or certifiable (the init --profile certifiable learner for the header's λ: prints α at --steps T and at 10·T)")
	f.IntVar(&steps, "steps", 0, "with --profile certifiable: the learner's count of inserts T at the request (required)")
	certifiable.register(f)
	return cmd
}

// planCertifiable prints, for the certifiable profile's learner, the α of
// every planned request at the learner's count T and after 9·T more
// inserts (the same deleted inserts, 10·T in all), with σ at (ε, δ): the
// decay a user weighs before choosing forget --max-replay.
func planCertifiable(cmd *cobra.Command, h stream.Header, schedules []certify.Deletion, cf certifiableFlags, steps int, eps, delta float64, cal noise.Calibration, bChanged, wChanged bool) error {
	if steps < 1 || steps > 1<<24 {
		return flagError("steps", "%d: the learner's insert count T, in [1, 2^24], is required with --profile certifiable", steps)
	}
	if h.Kind != stream.KindLogistic || !(h.Lambda > 0) {
		return flagError("profile", "certifiable: a logistic loss with λ > 0, not %s (λ = %v)", h.Kind, h.Lambda)
	}
	cfg := olbfgs.DefaultConfig(h.D)
	cfg.SampleBound = olbfgs.CertifiableSampleBound(h.D) // as init --profile certifiable
	if bChanged {
		cfg.SampleBound = cf.sampleBound
	}
	cfg = cfg.CertifiableProfile(h.Lambda)
	if wChanged {
		cfg.Radius = cf.radius
	}
	if err := cfg.Validate(); err != nil {
		return configFlagError(err)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "| request | ages | α at T = %d | σ | α at 10·T = %d | σ |\n| --- | --- | ---: | ---: | ---: | ---: |\n", steps, 10*steps)
	for i, s := range schedules {
		row := []string{strconv.Itoa(i + 1), fmt.Sprint(s.Ages)}
		for _, k := range []int{1, 10} {
			d := s
			d.Steps = k * steps
			d.Ages = make([]int, len(s.Ages))
			for j, a := range s.Ages {
				if a >= steps {
					return flagError("ages", "request %d: age %d is not below --steps %d", i+1, a, steps)
				}
				d.Ages[j] = a + (k-1)*steps
			}
			sens, err := certify.DerivedAlpha(cfg, h, &d)
			if err != nil {
				return certifyFlagError(err)
			}
			sigma, err := noise.Sigma(cal, sens.Alpha, eps, delta)
			if err != nil {
				return certifyFlagError(err)
			}
			row = append(row, fmt.Sprintf("%.4g", sens.Alpha), fmt.Sprintf("%.4g", sigma))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "diameter 2W' = %.4g; a score xᵀw moves by N(0, σ²‖x‖²), ‖x‖ ≤ B = %.4g\n", 2*cfg.RadiusBound(), cfg.SampleBound)
	return nil
}
