package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"unlearn/stream"
)

// Grid is an ordered list of configurations run with the same operators.
// The position of a configuration in Configs is its index: shards select
// by index, records carry it, and tables aggregate in index order.
type Grid struct {
	// Name identifies the grid in output folders ("default", "quick", …).
	Name string `json:"name"`
	// Experiment is "state-aware-benchmark" (Experiment 2) or
	// "finite-memory-decay" (Experiment 1).
	Experiment string `json:"experiment"`
	// Configs are the configurations, in run order.
	Configs []Config `json:"configs"`
}

// Experiment names used in grids and records.
const (
	// ExperimentBenchmark is Experiment 2, the state-aware benchmark.
	ExperimentBenchmark = "state-aware-benchmark"
	// ExperimentDecay is Experiment 1, finite-memory decay.
	ExperimentDecay = "finite-memory-decay"
)

// GridAxes are the values a grid crosses. [Axes.Grid] builds the grid in a
// fixed order: stream kind outermost, then τ, deletion mode, κ, and seed
// innermost.
type GridAxes struct {
	Kinds  []stream.Kind
	Taus   []int
	Modes  []string
	Kappas []float64
	Seeds  []uint64
	// UnstableLogistic sets the logistic streams' feature scale to κ
	// (covariance eigenvalues in [1, κ]), the regime spec §1.2 documents as
	// unstable for the default learner, instead of the paper's unit scale.
	UnstableLogistic bool
}

// DefaultAxes are the axes of the paper's default grid of Experiment 2
// (spec §6): stream {quadratic, logistic} × τ {5, 10, 20} × mode {recent,
// random, high-gradient} × κ {10, 100} × seed {1, 2, 3}, drift on: 108
// configurations.
func DefaultAxes() GridAxes {
	return GridAxes{
		Kinds:  []stream.Kind{stream.KindQuadratic, stream.KindLogistic},
		Taus:   []int{5, 10, 20},
		Modes:  []string{ModeRecent, ModeRandom, ModeHighGradient},
		Kappas: []float64{10, 100},
		Seeds:  []uint64{1, 2, 3},
	}
}

// Grid crosses the axes over base, in the documented order: configuration
// i+1 differs from i in the seed first, then κ, mode, τ and kind. Each
// configuration's stream, deletion and probe seeds are the seed axis value.
func (a GridAxes) Grid(name, experiment string, base Config) Grid {
	g := Grid{Name: name, Experiment: experiment}
	for _, kind := range a.Kinds {
		for _, tau := range a.Taus {
			for _, mode := range a.Modes {
				for _, kappa := range a.Kappas {
					for _, seed := range a.Seeds {
						c := base
						c.Stream.Kind, c.Stream.Kappa, c.Stream.Seed = kind, kappa, seed
						c.Tau, c.Mode = tau, mode
						c.DeletionSeed, c.ProbeSeed = nil, nil
						if a.UnstableLogistic && kind == stream.KindLogistic {
							c.Stream.FeatureScale = kappa
						}
						g.Configs = append(g.Configs, c.resolve(0))
					}
				}
			}
		}
	}
	return g
}

// DefaultGrid returns the paper's 108-configuration grid of Experiment 2 at
// the paper's sizes (d = 25, T = 5000, t_del = 500, H = 4500, |U| = 5,
// m_q = 32, λ_Z = 1, η = 0.1), in the order of [GridAxes.Grid].
func DefaultGrid() Grid {
	return DefaultAxes().Grid("default", ExperimentBenchmark, Experiment2())
}

// UnstableGrid is DefaultGrid with the logistic streams' feature scale set
// to κ (GridAxes.UnstableLogistic): the chaotic regime of spec §1.2, in
// which deletions are amplified instead of decaying.
func UnstableGrid() Grid {
	a := DefaultAxes()
	a.UnstableLogistic = true
	return a.Grid("default-unstable-logistic", ExperimentBenchmark, Experiment2())
}

// QuickGrid returns a small grid for smoke tests: both stream kinds × τ
// {5, 10} × mode {recent, random} × κ 10 × seed 1 (8 configurations) with
// d = 8, T = 300, t_del = 100, H = 200 and m_q = 8.
func QuickGrid() Grid {
	base := Experiment2()
	base.Stream.D, base.Stream.T = 8, 300
	base.TDel, base.Horizon, base.Probes = 100, 200, 8
	axes := GridAxes{
		Kinds:  []stream.Kind{stream.KindQuadratic, stream.KindLogistic},
		Taus:   []int{5, 10},
		Modes:  []string{ModeRecent, ModeRandom},
		Kappas: []float64{10},
		Seeds:  []uint64{1},
	}
	return axes.Grid("quick", ExperimentBenchmark, base)
}

// DecayAxes are the axes of Experiment 1's default variants: the default
// configuration with τ ∈ {5, 10, 20}, then κ ∈ {10, 100}, deletion mode
// ∈ {recent, old, random, high-gradient} and stream kind ∈ {quadratic,
// logistic} crossed (spec §6: "variants over τ, κ, deletion mode, stream
// kind"), seed 1.
func DecayAxes() GridAxes {
	return GridAxes{
		Kinds:  []stream.Kind{stream.KindQuadratic, stream.KindLogistic},
		Taus:   []int{5, 10, 20},
		Modes:  []string{ModeRecent, ModeOld, ModeRandom, ModeHighGradient},
		Kappas: []float64{10, 100},
		Seeds:  []uint64{1},
	}
}

// DecayGrid returns Experiment 1 (finite-memory decay) over the axes a,
// with the defaults of [Experiment1].
func DecayGrid(a GridAxes) Grid {
	return a.Grid("decay", ExperimentDecay, Experiment1())
}

// ID returns a short stable name of configuration c, such as
// "quadratic-tau10-recent-kappa10-seed1".
func (c Config) ID() string {
	r := c.resolve(0)
	if d := r.Stream.Data; d != nil {
		return fmt.Sprintf("data-%s-tau%d-%s-seed%d", d.name(), r.Tau, r.Mode, r.Stream.Seed)
	}
	id := fmt.Sprintf("%s-tau%d-%s-kappa%s-seed%d", r.Stream.Kind, r.Tau, r.Mode,
		strconv.FormatFloat(r.Stream.Kappa, 'g', -1, 64), r.Stream.Seed)
	if s := r.Stream.FeatureScale; s != 0 && s != 1 {
		id += "-scale" + strconv.FormatFloat(s, 'g', -1, 64)
	}
	return id
}

// Hash returns a hex SHA-256 of the grid's canonical JSON and the given
// method names: two shard outputs can be merged only if their hashes agree.
func (g Grid) Hash(methods []string) string {
	b, err := json.Marshal(struct {
		Grid    Grid     `json:"grid"`
		Methods []string `json:"methods"`
		Format  string   `json:"format"`
	}{g, methods, RecordFormat})
	if err != nil {
		panic("experiment: Grid.Hash: " + err.Error()) // cannot happen: plain data
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Shard selects every N-th configuration of a grid, starting at K: the
// configurations with index i ≡ K (mod N). K is 0-based, 0 ≤ K < N, as
// Kubernetes indexed Jobs (JOB_COMPLETION_INDEX) and Slurm arrays declared
// --array=0-(N−1) number their tasks; with GNU parallel pass {%}−1 or
// {#}−1. The zero Shard (N = 0) selects every configuration.
type Shard struct {
	K int `json:"k"`
	N int `json:"n"`
}

// ParseShard parses "k/n" (0 ≤ k < n, n ≥ 1). An empty string is the zero
// Shard (the whole grid).
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("%w: %q: want k/n, such as 0/4", ErrShard, s)
	}
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%w: %q: k and n must be integers", ErrShard, s)
	}
	sh := Shard{K: k, N: n}
	if n < 1 { // "0/0" must not read as the zero Shard, "no sharding"
		return Shard{}, fmt.Errorf("%w: %q: n must be at least 1", ErrShard, s)
	}
	if err := sh.Validate(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

// Validate checks 0 ≤ K < N (or the zero Shard).
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.N < 1 {
		return fmt.Errorf("%w: %d/%d: n must be at least 1", ErrShard, s.K, s.N)
	}
	if s.K < 0 || s.K >= s.N {
		return fmt.Errorf("%w: %d/%d: k must be in [0, %d) (shards are numbered from 0)", ErrShard, s.K, s.N, s.N)
	}
	return nil
}

// Has reports whether the configuration of index i belongs to the shard.
func (s Shard) Has(i int) bool { return s.N <= 1 || i%s.N == s.K }

// String returns "k/n", or "all" for the zero Shard.
func (s Shard) String() string {
	if s.N == 0 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Indices returns the indices of the configurations of a grid of n
// configurations that belong to the shard, ascending.
func (s Shard) Indices(n int) []int {
	var idx []int
	for i := 0; i < n; i++ {
		if s.Has(i) {
			idx = append(idx, i)
		}
	}
	return idx
}
