package report

import (
	"cmp"
	"math"
	"slices"

	"unlearn/experiment"
	"unlearn/stream"
)

// Options tune the figures. The zero value gives the paper's figures.
type Options struct {
	// Reference is the configuration a figure holds fixed while it varies
	// one axis. Zero fields take the paper's defaults (see [Reference]).
	Reference Reference
	// MaxPoints caps the points of a drawn line: longer series are thinned
	// to every s-th step (s = ⌈n/MaxPoints⌉) plus the last one, or, on a
	// log x axis, to one step per bucket of equal width in log(k+1). If zero,
	// defaults to 600, finer than the pixels of a panel (about 480 across
	// at the default size), so thinning does not change the picture.
	MaxPoints int
}

// Reference is the configuration the figures hold fixed (paper, Table
// "Default experimental configuration"): Experiment 1's figures over τ use
// its mode and κ, those over modes its τ and κ, and Experiment 2's
// one-configuration figure the record with series nearest to it. A value a
// set of records does not have is replaced by the nearest one it has
// (ties to the smaller; modes in the order of experiment.Modes).
type Reference struct {
	// Kind is the stream kind of Experiment 2's one-configuration figure.
	// If empty, defaults to quadratic.
	Kind stream.Kind
	// Tau is the memory size τ. If zero, defaults to 10.
	Tau int
	// Mode is the deletion mode. If empty, defaults to recent.
	Mode string
	// Kappa is the condition number κ. If zero, defaults to 10.
	Kappa float64
}

// defaultMaxPoints: see Options.MaxPoints.
const defaultMaxPoints = 600

func (o Options) resolve() Options {
	if o.MaxPoints <= 0 {
		o.MaxPoints = defaultMaxPoints
	}
	o.Reference = o.Reference.resolve()
	return o
}

func (r Reference) resolve() Reference {
	if r.Kind == "" {
		r.Kind = stream.KindQuadratic
	}
	if r.Tau <= 0 {
		r.Tau = experiment.DefaultTau
	}
	if r.Mode == "" {
		r.Mode = experiment.ModeRecent
	}
	if !(r.Kappa > 0) {
		r.Kappa = experiment.DefaultKappa
	}
	return r
}

// SeriesConfigs returns the grid indices whose records should keep their
// per-step series so that a report can draw Experiment 2's trajectory
// figure (experiment.Options.KeepSeriesOf): the one configuration nearest
// to ref, with the smallest seed. Decay grids keep every series anyway and
// get none.
func SeriesConfigs(g experiment.Grid, ref Reference) []int {
	if g.Experiment == experiment.ExperimentDecay || len(g.Configs) == 0 {
		return nil
	}
	ref = ref.resolve()
	best := 0
	for i := range g.Configs {
		if compareKeys(configKey(g.Configs[i]), configKey(g.Configs[best]), ref) < 0 {
			best = i
		}
	}
	return []int{best}
}

// key is what the figures select records by.
type key struct {
	kind  string
	tau   int
	mode  string
	kappa float64 // NaN for streams read from files
	seed  uint64
}

func configKey(c experiment.Config) key {
	return key{string(c.Stream.Kind), c.Tau, c.Mode, c.Stream.Kappa, c.Stream.Seed}
}

func recordKey(r *experiment.Record) key {
	k := key{kind: r.Source.Kind, tau: r.Config.Tau, mode: r.Config.Mode, kappa: math.NaN()}
	if g := r.Source.Generated; g != nil {
		k.kappa, k.seed = g.Kappa, g.Seed
	}
	return k
}

// compareKeys orders a before b when a is nearer to ref: same kind first,
// then nearer τ, the reference mode (then the order of experiment.Modes),
// nearer κ (in log), smaller seed.
func compareKeys(a, b key, ref Reference) int {
	if c := cmp.Compare(boolInt(a.kind != string(ref.Kind)), boolInt(b.kind != string(ref.Kind))); c != 0 {
		return c
	}
	if c := cmp.Compare(absInt(a.tau-ref.Tau), absInt(b.tau-ref.Tau)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.tau, b.tau); c != 0 {
		return c
	}
	if c := cmp.Compare(modeRank(a.mode, ref.Mode), modeRank(b.mode, ref.Mode)); c != 0 {
		return c
	}
	if c := cmp.Compare(kappaDist(a.kappa, ref.Kappa), kappaDist(b.kappa, ref.Kappa)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.kappa, b.kappa); c != 0 {
		return c
	}
	return cmp.Compare(a.seed, b.seed)
}

// modeRank is 0 for the reference mode, then 1 + the position in
// experiment.Modes (explicit and unknown modes last).
func modeRank(m, ref string) int {
	if m == ref {
		return 0
	}
	if i := slices.Index(experiment.Modes, m); i >= 0 {
		return 1 + i
	}
	return 1 + len(experiment.Modes)
}

func kappaDist(k, ref float64) float64 {
	if math.IsNaN(k) {
		return math.Inf(1)
	}
	return math.Abs(math.Log(k / ref))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// nearestTau returns the value of taus nearest to ref (ties to the smaller).
func nearestTau(taus []int, ref int) int {
	best := taus[0]
	for _, t := range taus[1:] {
		if d, db := absInt(t-ref), absInt(best-ref); d < db || d == db && t < best {
			best = t
		}
	}
	return best
}

// nearestKappa returns the value of kappas nearest to ref in log (ties to
// the smaller; NaN only if every value is NaN).
func nearestKappa(kappas []float64, ref float64) float64 {
	best := kappas[0]
	for _, k := range kappas[1:] {
		if d, db := kappaDist(k, ref), kappaDist(best, ref); d < db || d == db && k < best {
			best = k
		}
	}
	return best
}

// referenceMode returns ref if modes has it, else the first of modes in the
// order of experiment.Modes.
func referenceMode(modes []string, ref string) string {
	best := modes[0]
	for _, m := range modes[1:] {
		if modeRank(m, ref) < modeRank(best, ref) {
			best = m
		}
	}
	return best
}

// sameKappa compares condition numbers, NaN (unknown) equal to NaN.
func sameKappa(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// distinct returns the distinct values of f over recs, sorted by less.
func distinct[T comparable](recs []*experiment.Record, f func(*experiment.Record) T, compare func(a, b T) int) []T {
	var out []T
	for _, r := range recs {
		if v := f(r); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, compare)
	return out
}

func filter(recs []*experiment.Record, keep func(*experiment.Record) bool) []*experiment.Record {
	var out []*experiment.Record
	for _, r := range recs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// kindRank orders stream kinds quadratic, logistic, then others.
func kindRank(k string) int {
	switch k {
	case string(stream.KindQuadratic):
		return 0
	case string(stream.KindLogistic):
		return 1
	}
	return 2
}

func compareKinds(a, b string) int {
	if c := cmp.Compare(kindRank(a), kindRank(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

func compareModes(a, b string) int {
	if c := cmp.Compare(modeRank(a, ""), modeRank(b, "")); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}
