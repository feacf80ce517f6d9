package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unlearn/internal/floatbits"
	"unlearn/internal/strictjson"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// TightnessFormat is the format of a tightness file ([Tightness]).
const TightnessFormat = "unlearn-tightness/v1"

// TightnessFile is the name of the tightness file in a results folder.
const TightnessFile = "tightness.json"

// SampleTail is t in the sample bound B = E-bound + σ·(√d + t) of
// [CertifiableConfig]: a payload of the paper's generators exceeds B with
// probability at most exp(−t²/2) ≈ 2·10⁻²² per event (Gaussian
// concentration of a Lipschitz function, see CertifiableConfig).
const SampleTail = 10

// Pair-guard angles r̄ of [CertifiableConfig]: on an isotropic stream
// (κ = 1) every curvature pair is parallel up to round-off; otherwise the
// angle admits the pairs of moderately conditioned curvature.
const (
	IsotropicPairAngle   = 1e-6
	AnisotropicPairAngle = 0.5
)

// CertifiableConfig returns the certifiable variant of the learner of a
// configuration c on its generated stream (c.Stream, defaults resolved):
// spec §2's learner with c's τ and η, plus the options that let package
// certify derive a sensitivity α from public quantities (docs/theory.md
// §15.2) — all computed from the generator's public parameters
// (stream.DefaultQuadraticOptions, stream.DefaultLogisticOptions and
// c.Stream), never from the events:
//
//   - SampleBound B. Quadratic: a_t = a0 + δa·(sin·u1 + cos·u2) + σa·ξ_t
//     with u1 ⊥ u2 unit, so ‖a_t‖ ≤ ‖a0‖ + δa + σa·‖ξ_t‖; logistic:
//     x_t = √(1−α)L0 z + √α L1 z′ is a √s-Lipschitz function of the 2d
//     standard normals (z, z′) with E‖x_t‖ ≤ √(tr Σ_t) ≤ √(s·d), s the
//     feature scale. By the Gaussian concentration inequality for
//     Lipschitz functions (Tsirelson–Ibragimov–Sudakov; Boucheron, Lugosi
//     & Massart, "Concentration Inequalities", 2013, Thm 5.6),
//     P(‖ξ‖ ≥ √d + t) ≤ exp(−t²/2); with t = [SampleTail] = 10,
//     B = ‖a0‖ + δa + σa(√d + 10) or √s(√d + 10). The learner refuses a
//     larger payload (olbfgs.ErrSampleBound), so the bound is enforced, not
//     assumed: a run that met one would fail, not certify wrongly.
//   - Radius W = 2B (quadratic: a choice, twice the radius of the ball
//     that holds every event's minimizer a_t) or W = B/λ (logistic: the
//     ridge minimizer of any data with ‖x‖ ≤ B has ‖w*‖ ≤ B/λ). α = 2W'
//     wherever only the diameter is proved, so W trades the learner's
//     freedom against the noise.
//   - The pair guard: window [μ̄, L̄] = [μ, κμ] (quadratic: the Hessians'
//     spectrum) or [λ, λ + B²/4] (logistic), each widened by a relative
//     10⁻⁹, and angle r̄ = [IsotropicPairAngle] at κ = 1,
//     [AnisotropicPairAngle] otherwise; γ₀ stays 1.
//
// The benchmark's own runs ([RunGrid]) use the plain spec §2 learner,
// which is not certifiable (no radius); this variant serves the tightness
// table only ([RunTightness]). Errors: c invalid (*ConfigError).
func CertifiableConfig(c Config) (olbfgs.Config, error) {
	r := c.resolve(0)
	if err := r.Stream.validate(); err != nil {
		return olbfgs.Config{}, err
	}
	s := r.Stream
	lcfg := r.learnerConfig(s.D)
	tail := math.Sqrt(float64(s.D)) + SampleTail
	var lo, hi float64
	switch s.Kind {
	case stream.KindQuadratic:
		q := stream.DefaultQuadraticOptions()
		lcfg.SampleBound = *q.A0Norm + *q.DeltaA + *q.SigmaA*tail
		lcfg.Radius = 2 * lcfg.SampleBound
		lo, hi = q.Mu, s.Kappa*q.Mu
	default:
		l := stream.DefaultLogisticOptions()
		fs := s.FeatureScale
		if fs == 0 {
			fs = 1
		}
		lcfg.SampleBound = math.Sqrt(fs) * tail
		lcfg.Radius = lcfg.SampleBound / *l.Lambda
		lo, hi = *l.Lambda, *l.Lambda+lcfg.SampleBound*lcfg.SampleBound/4
	}
	lcfg.PairMin, lcfg.PairMax = lo*(1-1e-9), hi*(1+1e-9)
	lcfg.PairAngle = AnisotropicPairAngle
	if s.Kappa == 1 {
		lcfg.PairAngle = IsotropicPairAngle
	}
	if err := lcfg.Validate(); err != nil {
		return olbfgs.Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return lcfg, nil
}

// IsotropicGrid is the tightness companion of [DefaultGrid] on which the
// toolkit's recursion (not the diameter) gives α: quadratic streams with
// κ = 1 (H0 and H1 within round-off of I, so hMax/hMin of the guarded
// memory is within 10⁻⁵ of 1 and the general-case contraction is
// below 1) × τ {5, 10, 20} × mode {recent, random, high-gradient} × seed
// {1, 2, 3}: 27 configurations at the paper's sizes.
func IsotropicGrid() Grid {
	a := DefaultAxes()
	a.Kinds, a.Kappas = []stream.Kind{stream.KindQuadratic}, []float64{1}
	return a.Grid("isotropic", ExperimentBenchmark, Experiment2())
}

// Tightness is the certified α of every intervention beside its actual
// deviation from the counterfactual, over the configurations of a grid:
// how tight the toolkit's derived bound is (issue 13). It encodes as JSON
// (format [TightnessFormat]).
type Tightness struct {
	Format string `json:"format"`
	// Grid is the grid's name; Learner says which learner made the states.
	Grid    string `json:"grid"`
	Learner string `json:"learner"`
	// Records are one per configuration, in grid order.
	Records []TightnessRecord `json:"records"`
}

// TightnessRecord is one configuration's interventions.
type TightnessRecord struct {
	// Index is the configuration's index in the grid; ID its Config.ID().
	Index int    `json:"index"`
	ID    string `json:"id"`
	// Config is the resolved configuration.
	Config Config `json:"config"`
	// Learner holds the certifiable options of the learner
	// ([CertifiableConfig]).
	Learner CertifiableOptions `json:"learner"`
	// U is the deletion set, ascending.
	U []int64 `json:"U"`
	// Methods are the interventions, in operator order.
	Methods []TightnessMethod `json:"methods"`
}

// CertifiableOptions are the certifiable fields of an olbfgs.Config.
type CertifiableOptions struct {
	Radius      float64 `json:"radius"`
	SampleBound float64 `json:"sample_bound"`
	PairAngle   float64 `json:"pair_angle"`
	PairMin     float64 `json:"pair_min"`
	PairMax     float64 `json:"pair_max"`
}

// TightnessMethod is one intervention's certified α and actual deviation
// at the release (k = 0, right after the intervention).
type TightnessMethod struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Alpha is the α a certified release of the state is calibrated to:
	// 0 when the toolkit establishes exactness (certify.Describe), else
	// certify.DerivedAlpha of the request's public description.
	Alpha float64 `json:"alpha"`
	// Source is "exact" or "derived"; Binding which bound gives a derived α
	// ("recursion", "diameter" or "radius").
	Source  string `json:"source"`
	Binding string `json:"binding,omitempty"`
	// Deviation is ‖P(w̃) − w⁻‖₂: the intervened parameters, projected onto
	// the learner's ball as a release projects them, against the
	// counterfactual's, computed exactly (math/big) and rounded up.
	Deviation float64 `json:"deviation"`
}

// Holds reports whether α ≥ deviation: the certificate's claim about this
// state.
func (m TightnessMethod) Holds() bool { return m.Alpha >= m.Deviation }

// Ratio returns α ÷ deviation (the bound's slack; 1 is tight), with
// x/0 = ∞ for x > 0 and 0/0 = 1 (spec §8's convention, as [AUCRatio]).
func (m TightnessMethod) Ratio() float64 { return AUCRatio(m.Alpha, m.Deviation) }

// TightnessOptions control [RunTightness]. The zero value runs the paper's
// operators on GOMAXPROCS workers.
type TightnessOptions struct {
	// Operators returns the operators for a configuration's τ. If nil,
	// defaults to unlearn.Paper.
	Operators func(tau int) []unlearn.Operator
	// Workers is the number of configurations run in parallel. If zero,
	// defaults to runtime.GOMAXPROCS(0).
	Workers int
}

// RunTightness runs every configuration of g with the certifiable learner
// of [CertifiableConfig] up to the release, k = 0:
//
//  1. the actual learner is trained on the prefix e_1..e_{t_del}, keeping
//     checkpoints with window 5τ (as [RunHistory]);
//  2. U is chosen by the deletion mode at θ_{t_del} (as [RunHistory]);
//  3. the counterfactual w⁻ replays the prefix minus U from θ0;
//  4. each operator is applied to (θ, prefix, U) and its state described
//     as a release would be (certify.Describe): α = 0 when the toolkit
//     establishes exactness, else certify.DerivedAlpha(learner, header,
//     description) — public quantities only;
//  5. the deviation ‖P(w̃) − w⁻‖₂ is computed exactly.
//
// Records are a pure function of each configuration: bit-identical
// whatever the number of workers. Errors wrap ErrConfig (a configuration,
// or a learner the toolkit cannot certify) or ErrRun; ctx cancels.
func RunTightness(ctx context.Context, g Grid, opt TightnessOptions) (*Tightness, error) {
	if len(g.Configs) == 0 {
		return nil, fmt.Errorf("%w: grid %q has no configurations", ErrConfig, g.Name)
	}
	for i, c := range g.Configs {
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("grid %q configuration %d (%s): %w", g.Name, i, c.ID(), err)
		}
	}
	ops := opt.Operators
	if ops == nil {
		ops = unlearn.Paper
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := &Tightness{Format: TightnessFormat, Grid: g.Name, Records: make([]TightnessRecord, len(g.Configs)),
		Learner: "certifiable o-LBFGS (experiment.CertifiableConfig): spec §2 with radius, sample bound and pair guard from the generators' public parameters"}
	var next sync.Mutex
	i := 0
	eg, ctx := errgroup.WithContext(ctx)
	for range min(workers, len(g.Configs)) {
		eg.Go(func() error {
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= len(g.Configs) {
					return nil
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				c := g.Configs[j].resolve(0)
				rec, err := tightnessOf(c, ops(c.Tau))
				if err != nil {
					return fmt.Errorf("configuration %d (%s): %w", j, c.ID(), err)
				}
				rec.Index, rec.ID = j, g.Configs[j].ID()
				out.Records[j] = *rec
			}
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// tightnessOf runs one resolved configuration (see RunTightness).
func tightnessOf(c Config, ops []unlearn.Operator) (*TightnessRecord, error) {
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: no operators", ErrConfig)
	}
	h, err := c.Stream.Generate()
	if err != nil {
		return nil, err
	}
	lcfg, err := CertifiableConfig(c)
	if err != nil {
		return nil, err
	}
	header, err := certify.HeaderOf(h.Loss)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	prefix := h.Prefix(c.TDel)
	actual, err := olbfgs.New(lcfg, h.Loss)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := actual.KeepCheckpoints(5 * c.Tau); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := actual.Run(prefix); err != nil {
		return nil, fmt.Errorf("%w: training the certifiable learner: %w", ErrRun, err)
	}
	u, err := deletionSet(prefix, c, h.Loss, actual.W())
	if err != nil {
		return nil, err
	}
	uset := stream.NewIDSet(u...)
	ref, err := olbfgs.Replay(lcfg, h.Loss, stream.Counterfactual(prefix, uset))
	if err != nil {
		return nil, fmt.Errorf("%w: replaying the counterfactual prefix: %w", ErrRun, err)
	}
	rec := &TightnessRecord{Config: c, U: u, Methods: make([]TightnessMethod, len(ops)),
		Learner: CertifiableOptions{Radius: lcfg.Radius, SampleBound: lcfg.SampleBound,
			PairAngle: lcfg.PairAngle, PairMin: lcfg.PairMin, PairMax: lcfg.PairMax}}
	req := unlearn.Request{Actual: actual, Prefix: prefix, U: uset}
	rad := lcfg.RadiusBound()
	for i, op := range ops {
		st, _, err := unlearn.Run(op, req)
		if err != nil {
			return nil, fmt.Errorf("%w: operator %s: %w", ErrRun, op.Name(), err)
		}
		m := TightnessMethod{Name: op.Name(), Label: op.Label(), Source: "exact"}
		del, exact := certify.Describe(op, req)
		if exact == "" {
			s, err := certify.DerivedAlpha(lcfg, header, del)
			if err != nil {
				return nil, fmt.Errorf("%w: operator %s: α: %w", ErrConfig, op.Name(), err)
			}
			m.Alpha, m.Source, m.Binding = s.Alpha, s.Source, s.Binding
		}
		// The release projects w̃ onto the ball of radius W' exactly as
		// certify does, before the noise.
		w := slices.Clone(st.W())
		if n := floats.Norm(w, 2); n > rad {
			floats.Scale(rad/n, w)
		}
		m.Deviation = ExactDistance(w, ref.W())
		rec.Methods[i] = m
	}
	return rec, nil
}

// ExactDistance returns ‖a − b‖₂ of two float64 vectors of equal length,
// computed exactly and rounded up to a float64: every difference and
// square is exact in 4400-bit binary floats (a float64 difference needs at
// most 2098 bits), their sum too, and the square root is rounded to
// nearest at 200 bits, converted to float64 and then raised until its
// square is at least the exact sum. A deviation compared with α without
// any tolerance. It panics if the lengths differ (a programmer error).
func ExactDistance(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("experiment: ExactDistance: lengths %d and %d", len(a), len(b)))
	}
	return floatbits.ExactDistance(a, b)
}

// WriteJSON writes t as indented JSON; NaN and ±Inf are never present.
func (t *Tightness) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(t)
}

// ReadTightness decodes a tightness file by the rules of
// internal/strictjson (exact member names, no duplicates or unknown
// members, nothing after the value), refusing another format (ErrRecord).
func ReadTightness(r io.Reader) (*Tightness, error) {
	var t Tightness
	if err := strictjson.Decode(r, &t); err != nil {
		return nil, fmt.Errorf("%w: tightness: %w", ErrRecord, err)
	}
	if t.Format != TightnessFormat {
		return nil, fmt.Errorf("%w: tightness: format %q, want %q", ErrRecord, t.Format, TightnessFormat)
	}
	if len(t.Records) == 0 {
		return nil, fmt.Errorf("%w: tightness: no records", ErrRecord)
	}
	for i, r := range t.Records {
		if len(r.Methods) != len(t.Records[0].Methods) {
			return nil, fmt.Errorf("%w: tightness: record %d has %d methods, record 0 has %d", ErrRecord, i, len(r.Methods), len(t.Records[0].Methods))
		}
		for j, m := range r.Methods {
			if m.Name != t.Records[0].Methods[j].Name {
				return nil, fmt.Errorf("%w: tightness: record %d method %d is %q, record 0's is %q", ErrRecord, i, j, m.Name, t.Records[0].Methods[j].Name)
			}
			if !finite(m.Alpha) || m.Alpha < 0 || !finite(m.Deviation) || m.Deviation < 0 {
				return nil, fmt.Errorf("%w: tightness: record %d method %s: α = %v, deviation = %v must be finite and ≥ 0", ErrRecord, i, m.Name, m.Alpha, m.Deviation)
			}
		}
	}
	return &t, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// WriteTightnessFiles writes the tightness files of one or more grids
// into the folder dir (a results folder): tightness.json (a JSON array of
// [Tightness], one per grid) and tables/tightness-GRID.csv, each file
// atomically.
func WriteTightnessFiles(dir string, ts []*Tightness) error {
	if err := writeFile(filepath.Join(dir, TightnessFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(ts)
	}); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "tables"), 0o755); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	for _, t := range ts {
		for _, tab := range TightnessTables(t) {
			if err := writeFile(filepath.Join(dir, "tables", tab.Name+".csv"), tab.WriteCSV); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadTightnessFiles reads dir/tightness.json; a folder without one gives
// (nil, nil).
func ReadTightnessFiles(dir string) ([]*Tightness, error) {
	b, err := os.ReadFile(filepath.Join(dir, TightnessFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRecord, TightnessFile, err)
	}
	out := make([]*Tightness, len(raw))
	for i, r := range raw {
		t, err := ReadTightness(bytes.NewReader(r))
		if err != nil {
			return nil, fmt.Errorf("%s, grid %d: %w", TightnessFile, i, err)
		}
		out[i] = t
	}
	return out, nil
}

// TightnessTables returns the tightness tables of t, one per stream kind
// in grid order (α scales with the learner's radius, which differs by
// kind, so the kinds are not pooled): one row per intervention, over its
// configurations — how many, how many the toolkit released exactly and
// which bound gave the others' α, the median α, the median and largest
// deviation ‖P(w̃) − w⁻‖₂, the median and smallest ratio α ÷ deviation
// (1 is tight; 0/0 = 1, x/0 = ∞), and the share of configurations with
// α ≥ deviation (1 unless the bound fails).
func TightnessTables(t *Tightness) []*Table {
	var kinds []stream.Kind
	for _, r := range t.Records {
		if !slices.Contains(kinds, r.Config.Stream.Kind) {
			kinds = append(kinds, r.Config.Stream.Kind)
		}
	}
	out := make([]*Table, 0, len(kinds))
	for _, k := range kinds {
		var recs []TightnessRecord
		for _, r := range t.Records {
			if r.Config.Stream.Kind == k {
				recs = append(recs, r)
			}
		}
		out = append(out, tightnessTable(t.Grid, k, recs))
	}
	return out
}

func tightnessTable(grid string, kind stream.Kind, recs []TightnessRecord) *Table {
	l := recs[0].Learner
	tab := &Table{
		Name: "tightness-" + grid + "-" + string(kind),
		Title: fmt.Sprintf("Tightness of the certified α, grid %q, %s streams (%s; certifiable learner W = %.4g, B = %.4g, r̄ = %g): α beside ‖w̃ − w⁻‖₂ at the release",
			grid, kind, plural(len(recs), "configuration"), l.Radius, l.SampleBound, l.PairAngle),
		Columns: []string{"Intervention", "Configurations", "Bound giving α", "Median α", "Median ‖w̃ − w⁻‖",
			"Max ‖w̃ − w⁻‖", "Median α ÷ dev.", "Min α ÷ dev.", "Share α ≥ dev."},
	}
	for j, m0 := range recs[0].Methods {
		var alphas, devs, ratios []float64
		holds := make([]bool, 0, len(recs))
		counts := map[string]int{}
		for _, r := range recs {
			m := r.Methods[j]
			alphas, devs, ratios = append(alphas, m.Alpha), append(devs, m.Deviation), append(ratios, m.Ratio())
			holds = append(holds, m.Holds())
			b := m.Binding
			if m.Source == "exact" {
				b = "exact"
			}
			counts[b]++
		}
		var bind []string
		for _, b := range []string{"exact", "recursion", "diameter", "radius"} {
			if n := counts[b]; n > 0 {
				bind = append(bind, fmt.Sprintf("%s %d", b, n))
				delete(counts, b)
			}
		}
		var other []string // bindings this table does not know (none today)
		for b, n := range counts {
			other = append(other, fmt.Sprintf("%s %d", b, n))
		}
		slices.Sort(other)
		bind = append(bind, other...)
		tab.Rows = append(tab.Rows, []Cell{
			text(m0.Label), integer(float64(len(recs))), text(strings.Join(bind, ", ")),
			num(Median(alphas)), num(Median(devs)), num(slices.Max(devs)),
			num(Median(ratios)), num(slices.Min(ratios)), num(share(holds)),
		})
	}
	return tab
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
