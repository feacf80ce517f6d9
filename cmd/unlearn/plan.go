package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
	"unlearn/unlearn"
)

func init() { register(newPlanCmd) }

func newPlanCmd() *cobra.Command {
	var (
		streamFile, ages, intervention, calibration, format, taus string
		epsilon, delta, eta, gamma0                               float64
		replayed, steps                                           int
		profile, storeDir, disclosure                             string
		certifiable                                               certifiableFlags
	)
	cmd := &cobra.Command{
		Use:   "plan (--store DIR | --stream FILE [learner flags]) --epsilon E --delta D --ages 'A,B;C'",
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
intervention's allowance, capped by the diameter 2W' of the learner's ball.

With --store DIR (read only; the store may be in use by a service) or
--profile certifiable --steps T, each request is one approximate forget of
inserts of the given true ages at the learner's count T (the store's own
count with --store), and plan prints what the store's certificate would
disclose of them (--ages-disclosure, as forget --ages: pow2 ranges or only
their number) and the α and σ the store would charge: the worst case over
every true age the disclosure allows (docs/theory.md §16.12), not the α of
the true ages; then the same at 10·T.`,
		Example: `  unlearn gen --kind quadratic --kappa 1 --events 300 --out iso.jsonl
  unlearn plan --stream iso.jsonl --epsilon 1 --delta 1e-5 --radius 2 --sample-bound 3 \
      --pair-angle 0.01 --pair-min 0.99 --pair-max 1.01 --eta 1 --tau 3,10 --ages '0;100;0,50,500'
  printf '{"format":"olbfgs-stream/v1","kind":"logistic","d":784,"lambda":1}\n' > images-header.jsonl
  unlearn plan --profile certifiable --stream images-header.jsonl --steps 12000 --epsilon 1 --delta 1e-5 --ages '8999;6000;3000'
  unlearn plan --store model --epsilon 1 --delta 1e-5 --ages '8999;6000;3000'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := cmd.Flags().Changed
			for _, name := range []string{"epsilon", "delta", "ages"} {
				if !changed(name) {
					return flagError(name, "required")
				}
			}
			var how store.AgeDisclosure
			switch disclosure {
			case "pow2":
			case "none":
				how = store.AgesNone
			default:
				return flagError("ages-disclosure", "%q: want pow2 or none (as forget --ages)", disclosure)
			}
			var h stream.Header
			var stored *olbfgs.Config
			switch {
			case storeDir != "" && streamFile != "":
				return flagError("stream", "give --store or --stream, not both")
			case storeDir != "":
				for _, name := range []string{"steps", "profile", "tau", "eta", "gamma0", "radius", "sample-bound"} {
					if changed(name) {
						return flagError(name, "not with --store (the store's learner and insert count are used)")
					}
				}
				s, err := openStore(storeDir)
				if err != nil {
					return err
				}
				st, err := s.State() // read only: works while a service owns the store
				s.Close()
				if err != nil {
					return err
				}
				cfg := st.Config()
				h, stored, steps = s.Header(), &cfg, st.Inserts()
			case streamFile == "":
				return flagError("stream", "required (its header defines the loss), or --store DIR")
			default:
				hist, err := stream.ReadFile(streamFile)
				if err != nil {
					return err
				}
				h = hist.Header
			}
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
			if stored != nil {
				return planStore(cmd.OutOrStdout(), *stored, h, schedules, steps, how, epsilon, delta, cal)
			}
			if profile == profileCertifiable {
				return planCertifiable(cmd, h, schedules, certifiable, steps, how, epsilon, delta, cal, changed("sample-bound"), changed("radius"))
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
	f.StringVar(&streamFile, "stream", "", "a stream file whose header defines the loss (required unless --store)")
	f.StringVar(&storeDir, "store", "", "plan for this model store: its header, learner, insert count T and the forget's age disclosure (read only; the store may be in use)")
	f.StringVar(&disclosure, "ages-disclosure", "pow2", "with --store or --profile certifiable: what the certificate discloses of the ages, as forget --ages: pow2 (rounded down to powers of two) or none (only their number)")
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

// planCertifiable plans for the certifiable profile's learner at --steps
// T for the header's λ (planRows).
func planCertifiable(cmd *cobra.Command, h stream.Header, schedules []certify.Deletion, cf certifiableFlags, steps int, how store.AgeDisclosure, eps, delta float64, cal noise.Calibration, bChanged, wChanged bool) error {
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
	return planRows(cmd.OutOrStdout(), cfg, h, schedules, steps, how, eps, delta, cal)
}

// planStore plans for a model store's learner at its insert count T
// (planRows).
func planStore(w io.Writer, cfg olbfgs.Config, h stream.Header, schedules []certify.Deletion, steps int, how store.AgeDisclosure, eps, delta float64, cal noise.Calibration) error {
	if steps < 1 {
		return flagError("store", "holds no insert yet: nothing to plan a deletion of")
	}
	return planRows(w, cfg, h, schedules, steps, how, eps, delta, cal)
}

// planRows prints, for the learner cfg, every planned request (one
// approximate forget each, no other request pending, the deleted inserts'
// true ages in the request's ages) at the learner's count T and after 9·T
// more inserts (the same deleted inserts, 10·T in all): the ages the
// certificate would disclose under how, and α and σ at (ε, δ) exactly as
// the model store certifies them (store.DescribeDeletion, then
// certify.DerivedAlpha: the worst case over every true age the disclosure
// allows, not the α of the true ages), the decay a user weighs before
// choosing forget --max-replay.
func planRows(w io.Writer, cfg olbfgs.Config, h stream.Header, schedules []certify.Deletion, steps int, how store.AgeDisclosure, eps, delta float64, cal noise.Calibration) error {
	fmt.Fprintf(w, "| request | true ages | disclosed at T = %d | α | σ | disclosed at 10·T = %d | α | σ |\n| --- | --- | --- | ---: | ---: | --- | ---: | ---: |\n", steps, 10*steps)
	for i, s := range schedules {
		row := []string{strconv.Itoa(i + 1), fmt.Sprint(s.Ages)}
		seen := map[int]bool{}
		for _, a := range s.Ages {
			if a >= steps {
				return flagError("ages", "request %d: age %d is not below the insert count T = %d", i+1, a, steps)
			}
			if seen[a] {
				return flagError("ages", "request %d: age %d is listed twice", i+1, a)
			}
			seen[a] = true
		}
		for _, k := range []int{1, 10} {
			ages := make([]int, len(s.Ages))
			for j, a := range s.Ages {
				ages[j] = a + (k-1)*steps
			}
			pr, err := planRelease(cfg, h, k*steps, ages, how, s.Intervention, eps, delta, cal)
			if err != nil {
				return err
			}
			row = append(row, pr.disclosed, fmt.Sprintf("%.4g", pr.alpha), fmt.Sprintf("%.4g", pr.sigma))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "diameter 2W' = %.4g; a score xᵀw moves by N(0, σ²‖x‖²), ‖x‖ ≤ B = %.4g\n", 2*cfg.RadiusBound(), cfg.SampleBound)
	return nil
}

// plannedRelease is what the model store would certify for one
// approximate forget of inserts of the true ages at the learner's count
// steps: the disclosed ages in words, α and σ.
type plannedRelease struct {
	disclosed    string
	alpha, sigma float64
}

func planRelease(cfg olbfgs.Config, h stream.Header, steps int, ages []int, how store.AgeDisclosure, b unlearn.Builtin, eps, delta float64, cal noise.Calibration) (plannedRelease, error) {
	del, _, err := store.DescribeDeletion(cfg, h, steps, ages, how, b)
	if err != nil {
		return plannedRelease{}, certifyFlagError(err)
	}
	var pr plannedRelease
	switch {
	case del == nil:
		pr.disclosed = "none (the diameter)"
	case del.Disclosed == "pow2":
		pr.disclosed = pow2Ranges(del.Ages, del.Steps)
	case del.Disclosed == "none":
		pr.disclosed = fmt.Sprintf("%d of [0, %d]", len(del.Ages), del.Steps-1)
	case del.Disclosed == "" && how == store.AgesNone:
		pr.disclosed = fmt.Sprintf("%d (their number)", len(del.Ages))
	default:
		pr.disclosed = fmt.Sprintf("≥ %v", del.Ages)
	}
	sens, err := certify.DerivedAlpha(cfg, h, del)
	if err != nil {
		return plannedRelease{}, certifyFlagError(err)
	}
	pr.alpha = sens.Alpha
	if pr.sigma, err = noise.Sigma(cal, sens.Alpha, eps, delta); err != nil {
		return plannedRelease{}, certifyFlagError(err)
	}
	return pr, nil
}

// pow2Ranges writes ages disclosed as pow2 (store.DiscloseAges: a bucket
// [2^k, 2^(k+1)) holding c deleted inserts listed as 2^k, …, 2^k + c − 1)
// as the ranges they stand for, clipped below steps: "[4096, 8191]",
// "2×[8192, 11999]".
func pow2Ranges(listed []int, steps int) string {
	asc := slices.Clone(listed)
	slices.Sort(asc)
	var parts []string
	for i := 0; i < len(asc); {
		b := asc[i]
		j := i + 1
		for j < len(asc) && asc[j] < max(2*b, b+1) {
			j++
		}
		hi := min(max(2*b-1, b), steps-1)
		r := fmt.Sprintf("[%d, %d]", b, hi)
		if j-i > 1 {
			r = fmt.Sprintf("%d×%s", j-i, r)
		}
		parts = append(parts, r)
		i = j
	}
	return strings.Join(parts, " ")
}
