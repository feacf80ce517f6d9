package experiment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"unlearn/align"
	"unlearn/internal/parallel"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Options control how runs execute. Only KeepSeries and KeepSeriesOf
// (whether per-step series are kept), Operators (which methods run) and
// ZeroTiming (whether wall-clock times are kept) change what a record holds;
// no option changes a metric value.
type Options struct {
	// Operators returns the operators to run for a configuration's τ, in
	// the order they appear in records and tables. If nil, defaults to
	// unlearn.Paper for Experiment 2 and to the no-op operator alone for
	// Experiment 1 (the actual trajectory without intervention).
	Operators func(tau int) []unlearn.Operator
	// Workers is the number of configurations run in parallel by RunGrid,
	// and, for Run and RunHistory (one configuration), the number of
	// states measured, and of learners stepped, in parallel at each
	// post-deletion step (align.Engine.MeasureAll; each learner is stepped
	// by one goroutine; the records do not depend on it). If zero,
	// defaults to runtime.GOMAXPROCS(0).
	Workers int
	// Shard selects the configurations RunGrid runs; the zero Shard runs
	// all of them.
	Shard Shard
	// KeepSeries keeps every method's per-step series in the records. The
	// series of the default grid take about 25 bytes per value in JSON,
	// 400 MB in all, so RunGrid drops them by default; summaries are
	// computed from them either way.
	KeepSeries bool
	// KeepSeriesOf lists grid indices whose records keep their per-step
	// series even when KeepSeries is false (RunGrid only): a representative
	// subset for figures (one Experiment 2 configuration with series is
	// about 2.3 MB of JSON). Indices outside the grid or the shard are
	// ignored; since the choice is by grid index, shards and a single run
	// keep the same series.
	KeepSeriesOf []int
	// ZeroTiming drops the wall-clock measurements from the records and
	// the manifest, leaving outputs that are bit-identical across runs.
	ZeroTiming bool
	// Progress, if not nil, is called after each configuration completes
	// with the number done and the total; calls are serialized.
	Progress func(done, total int)
	// StepProgress, if not nil, is called by Run and RunHistory (not
	// RunGrid) during the propagation of one configuration, every 256
	// post-deletion steps or after a step that ends at least 0.2 s after
	// the previous call (slow steps: high dimensions), and after the last,
	// with the steps done k and the horizon H; it runs on the caller's
	// goroutine and must be quick.
	StepProgress func(k, horizon int)
}

// workers returns Workers, or GOMAXPROCS when it is not positive.
func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (o Options) operators(experiment string, tau int) []unlearn.Operator {
	if o.Operators != nil {
		return o.Operators(tau)
	}
	if experiment == ExperimentDecay {
		return []unlearn.Operator{unlearn.NoOp()}
	}
	return unlearn.Paper(tau)
}

// StreamFile reads a stream file and returns its history and a Source
// naming the file with the SHA-256 of its content, for [RunHistory].
func StreamFile(path string) (*stream.History, Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Source{}, fmt.Errorf("experiment: %w", err)
	}
	defer f.Close()
	sum := sha256.New()
	h, err := stream.Read(io.TeeReader(f, sum))
	if err != nil {
		return nil, Source{}, fmt.Errorf("experiment: stream file %s: %w", path, err)
	}
	src := Source{File: path, SHA256: hex.EncodeToString(sum.Sum(nil)),
		Kind: string(h.Header.Kind), D: h.Header.D, T: len(h.Events)}
	var seed uint64
	if ok, err := h.Header.MetaValue("seed", &seed); ok && err == nil {
		src.Seed = &seed // a seed that is not a uint64 is some other tool's: not recorded
	}
	return h, src, nil
}

// Run generates the stream of cfg.Stream and runs cfg on it; see
// [RunHistory].
func Run(ctx context.Context, experiment string, cfg Config, opt Options) (*Record, error) {
	r := cfg.resolve(0)
	if err := r.Stream.validate(); err != nil {
		return nil, err
	}
	h, err := r.Stream.Generate()
	if err != nil {
		return nil, err
	}
	spec := r.Stream
	src := Source{Generated: &spec, Kind: string(spec.Kind), D: spec.D, T: spec.T}
	ws := workspace{meter: meter{workers: opt.workers()}}
	rec, err := ws.run(ctx, h, src, r, experiment, opt)
	if err != nil {
		return nil, err
	}
	rec.ID = cfg.ID()
	return rec, nil
}

// RunHistory runs one configuration on the history h, whose provenance is
// src (see [StreamFile]; cfg.Stream is ignored), and returns its record
// (spec §6, §8):
//
//  1. the actual learner θ is trained on the prefix e_1..e_{t_del} from
//     θ0, keeping checkpoints with window 5τ from θ0;
//  2. U is chosen from the prefix by cfg.Mode at θ_{t_del} (or is
//     cfg.Deleted), and the ids of delete events inside the prefix join it;
//  3. the reference counterfactual θ⁻ replays the prefix minus U from θ0;
//  4. every operator is applied to (θ, prefix, U) through unlearn.Run;
//  5. the reference and every intervened state step on the same future
//     events e_{t_del+1}..e_{t_del+H} (deletes after t_del change no
//     state and are skipped), and the metrics of spec §3 are recorded at
//     every k = 0..H against the reference.
//
// experiment names the record's experiment ("run" if empty).
func RunHistory(ctx context.Context, h *stream.History, src Source, cfg Config, experiment string, opt Options) (*Record, error) {
	if experiment == "" {
		experiment = "run"
	}
	r := cfg.resolve(len(h.Events))
	ws := workspace{meter: meter{workers: opt.workers()}}
	rec, err := ws.run(ctx, h, src, r, experiment, opt)
	if err != nil {
		return nil, err
	}
	if src.Generated == nil {
		rec.Config.Stream = StreamSpec{} // not the stream of this run
	}
	if src.File != "" {
		rec.ID = src.File
	} else {
		rec.ID = cfg.ID()
	}
	return rec, nil
}

// RunGrid runs the configurations of g selected by opt.Shard on
// opt.Workers goroutines and returns their records in index order, with a
// manifest. Each configuration is computed independently of the others
// and of the scheduling, so the records are bit-identical (apart from
// Timing) whatever the number of workers. The first error cancels the
// remaining configurations; ctx cancels them all.
func RunGrid(ctx context.Context, g Grid, opt Options) (*Results, error) {
	if err := opt.Shard.Validate(); err != nil {
		return nil, err
	}
	if len(g.Configs) == 0 {
		return nil, fmt.Errorf("%w: grid %q has no configurations", ErrConfig, g.Name)
	}
	for i, c := range g.Configs {
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("grid %q configuration %d (%s): %w", g.Name, i, c.ID(), err)
		}
	}
	workers := opt.workers()
	idx := opt.Shard.Indices(len(g.Configs))
	if len(idx) == 0 {
		return nil, fmt.Errorf("%w: shard %s selects none of the %d configurations of grid %q",
			ErrShard, opt.Shard, len(g.Configs), g.Name)
	}
	recs := make([]*Record, len(idx))
	start := time.Now()
	var streams histories // data streams read once per seed

	var (
		mu   sync.Mutex
		done int
	)
	jobs := make(chan int)
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error {
		defer close(jobs)
		for j := range idx {
			select {
			case jobs <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	for range min(workers, len(idx)) {
		eg.Go(func() error {
			// Per-worker buffers, reused across configurations; the
			// configurations already use every worker, so each measures
			// its states on its own goroutine.
			ws := workspace{meter: meter{workers: 1}}
			for j := range jobs {
				i := idx[j]
				c := g.Configs[i].resolve(0)
				h, err := streams.get(c.Stream)
				if err != nil {
					return fmt.Errorf("%w: configuration %d (%s): %w", ErrRun, i, c.ID(), err)
				}
				spec := c.Stream
				src := Source{Generated: &spec, Kind: string(spec.Kind), D: spec.D, T: spec.T}
				o := opt
				o.KeepSeries = opt.KeepSeries || slices.Contains(opt.KeepSeriesOf, i)
				o.StepProgress = nil // workers run concurrently; Progress counts configurations
				rec, err := ws.run(ctx, h, src, c, g.Experiment, o)
				if err != nil {
					return fmt.Errorf("configuration %d (%s): %w", i, c.ID(), err)
				}
				rec.Index, rec.ID = i, c.ID()
				recs[j] = rec
				if opt.Progress != nil {
					mu.Lock()
					done++
					opt.Progress(done, len(idx))
					mu.Unlock()
				}
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	methods := recs[0].MethodNames()
	res := &Results{Records: recs, Manifest: Manifest{
		Format: ManifestFormat, Grid: g, Hash: g.Hash(methods), Methods: methods,
		Shards: []string{opt.Shard.String()}, Indices: idx,
	}}
	if _, err := checkMethods(recs); err != nil {
		return nil, err
	}
	if !opt.ZeroTiming {
		res.Manifest.Timing = &GridTiming{Wall: time.Since(start), Workers: workers}
	}
	return res, nil
}

// workspace holds what one worker reuses from configuration to
// configuration: the per-step series buffers of the metrics.
type workspace struct {
	meter meter
}

// run is RunHistory on a resolved configuration.
func (ws *workspace) run(ctx context.Context, h *stream.History, src Source, c Config, experiment string, opt Options) (*Record, error) {
	start := time.Now()
	T, d := len(h.Events), h.Header.D
	if err := c.validate(T, d); err != nil {
		return nil, err
	}
	loss := h.Loss
	lcfg := c.learnerConfig(d)
	window := 5 * c.Tau

	// 1. The actual learner on the prefix, with checkpoints from θ0.
	prefix := h.Prefix(c.TDel)
	actual, err := olbfgs.New(lcfg, loss)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := actual.KeepCheckpoints(window); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := actual.Run(prefix); err != nil {
		return nil, fmt.Errorf("%w: training the actual learner: %w", ErrRun, err)
	}

	// 2. The deletion set.
	u, err := deletionSet(prefix, c, loss, actual.W())
	if err != nil {
		return nil, err
	}
	uset := stream.NewIDSet(u...)

	// 3. The reference counterfactual, replayed from θ0.
	ref, err := olbfgs.Replay(lcfg, loss, stream.Counterfactual(prefix, uset))
	if err != nil {
		return nil, fmt.Errorf("%w: replaying the counterfactual prefix: %w", ErrRun, err)
	}

	// 4. The interventions.
	ops := opt.operators(experiment, c.Tau)
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: no operators", ErrConfig)
	}
	for i, op := range ops {
		if slices.ContainsFunc(ops[:i], func(o unlearn.Operator) bool { return o.Name() == op.Name() }) {
			return nil, fmt.Errorf("%w: two operators are named %q (records and tables key methods by name)", ErrConfig, op.Name())
		}
	}
	rec := &Record{
		Format: RecordFormat, Experiment: experiment, Config: c, Source: src,
		Learner: LearnerConfig{D: d, Tau: lcfg.Memory, Eta: lcfg.StepSize, Gamma0: lcfg.InitialScale,
			CurvatureTol: lcfg.CurvatureTol, CheckpointWindow: window},
		U: u, ActualSkipped: actual.Skipped(), ReferenceSkipped: ref.Skipped(),
		Methods: make([]MethodResult, len(ops)),
		Timing:  &Timing{Methods: make([]time.Duration, len(ops))},
	}
	states := make([]*olbfgs.Learner, len(ops))
	req := unlearn.Request{Actual: actual, Prefix: prefix, U: uset}
	for i, op := range ops {
		st, cost, err := unlearn.Run(op, req)
		if err != nil {
			return nil, fmt.Errorf("%w: operator %s: %w", ErrRun, op.Name(), err)
		}
		states[i] = st
		rec.Methods[i] = MethodResult{Name: op.Name(), Label: op.Label(),
			EventsReplayed: cost.EventsReplayed, GradEvals: cost.GradEvals, RestoreEvents: cost.RestoreEvents}
		rec.Timing.Methods[i] = cost.Wall
	}
	for i, st := range states {
		if st == ref || st == actual || slices.Contains(states[:i], st) {
			return nil, fmt.Errorf("%w: operator %s returned a shared state", ErrRun, ops[i].Name())
		}
	}

	// 5. Propagation and metrics: state k follows e_{t_del+k}; every state
	// is measured against the reference before the next event is applied.
	if err := ws.meter.reset(c, d, uset, len(states)); err != nil {
		return nil, err
	}
	if len(c.ProbeVectors) == 0 { // given vectors are in rec.Config already
		rec.ProbeSpec = &ProbeSpec{Generator: align.ProbeGenerator, Seed: *c.ProbeSeed, Count: c.Probes}
	}
	skipped0 := make([]int, len(states))
	for i, st := range states {
		skipped0[i] = st.Skipped()
	}
	next := nextInserts(h.Events, c.TDel, c.Horizon)
	lastProgress := time.Now()
	for k := 0; k <= c.Horizon; k++ {
		if k > 0 {
			e := h.Events[c.TDel+k-1]
			if e.Op == stream.Insert { // a delete after t_del changes no state (spec §8)
				if err := stepAll(ref, states, e, ws.meter.workers, ws.meter.points[:len(states)], ws.meter.roots[:len(states)]); err != nil {
					var se *stepError
					if errors.As(err, &se) && se.i >= 0 {
						return nil, fmt.Errorf("%w: %s at k = %d: %w", ErrRun, ops[se.i].Name(), k, se.err)
					}
					return nil, fmt.Errorf("%w: reference at k = %d: %w", ErrRun, k, errors.Unwrap(err))
				}
			}
			if ctx.Err() != nil { // every step: a step may take seconds at high d
				return nil, ctx.Err()
			}
			if opt.StepProgress != nil && (k%256 == 0 || time.Since(lastProgress) >= 200*time.Millisecond) {
				opt.StepProgress(k, c.Horizon)
				lastProgress = time.Now()
			}
		}
		var z *stream.Sample
		if next[k] >= 0 {
			z = &h.Events[next[k]].Sample
		}
		ws.meter.measure(ref, states, z)
	}
	if opt.StepProgress != nil {
		opt.StepProgress(c.Horizon, c.Horizon)
	}
	ws.meter.checkSeries(len(states), c.Horizon+1)
	for i := range rec.Methods {
		rec.Methods[i].Skipped = states[i].Skipped() - skipped0[i]
		rec.Methods[i].Summary, rec.Methods[i].Series = ws.meter.result(i, opt.KeepSeries)
	}
	rec.Timing.Total = time.Since(start)
	if opt.ZeroTiming {
		rec.Timing = nil
	}
	return rec, nil
}

// nextInserts returns, for k = 0..horizon, the index in events of the
// first insert after post-deletion state k (at position t_del+k or later),
// or −1 when there is none: the event whose update direction D_upd(k)
// compares (spec §8).
func nextInserts(events []stream.Event, tdel, horizon int) []int {
	next := make([]int, horizon+1)
	for k := range next {
		next[k] = -1
	}
	j := -1
	for i := len(events) - 1; i >= tdel; i-- {
		if events[i].Op == stream.Insert {
			j = i
		}
		if k := i - tdel; k <= horizon {
			next[k] = j
		}
	}
	return next
}

// deletionSet returns U, ascending: cfg.Deleted (each an undeleted insert
// of the prefix) or the ids chosen by cfg.Mode at the actual parameters w,
// together with the ids of the prefix's delete events (spec §8).
func deletionSet(prefix []stream.Event, c Config, loss stream.Loss, w []float64) ([]int64, error) {
	var chosen []int64
	if c.Mode == ModeExplicit {
		inserted := stream.NewIDSet(stream.InsertIDs(prefix)...)
		for _, id := range c.Deleted {
			if !inserted.Has(id) {
				return nil, configErr("Deleted", id, fmt.Sprintf("is not an insert of the prefix e_1..e_%d", len(prefix)))
			}
		}
		chosen = c.Deleted
	} else {
		mode, err := stream.ParseMode(c.Mode)
		if err != nil {
			return nil, configErr("Mode", c.Mode, err.Error())
		}
		chosen, err = stream.ChooseDeletions(prefix, mode, c.Count, stream.ChooseOptions{
			Seed: *c.DeletionSeed, Loss: loss, W: w,
		})
		if err != nil {
			return nil, configErr("Count", c.Count, err.Error())
		}
	}
	u := stream.DeletedIDs(prefix)
	for _, id := range chosen {
		u.Add(id)
	}
	return u.Sorted(), nil
}

// stepError is the first failure of stepAll: learner i of the states, or
// the reference (i = −1).
type stepError struct {
	i   int
	err error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// stepAll applies event e to the reference and then to every state, on up
// to workers goroutines (each learner is stepped by one goroutine, so the
// results are the bits of stepping them one after the other). A state whose
// point in identical (the previous step's measurement) is Identical follows
// the reference's step (olbfgs.Learner.Follow, the bits of its own step),
// and a state with a root (roots[i] ≥ 0: bitwise equal to states[roots[i]]
// at the previous step's measurement, twins.go) follows its root's step,
// each unless Follow refuses (it then steps itself). identical and roots
// may be nil or shorter than states (no such states). It returns the
// failure of the reference, else of the first state in order.
func stepAll(ref *olbfgs.Learner, states []*olbfgs.Learner, e stream.Event, workers int, identical []align.Point, roots []int) error {
	n := len(states) + 1
	errs := make([]error, n)
	learner := func(t int) *olbfgs.Learner {
		if t == 0 {
			return ref
		}
		return states[t-1]
	}
	// A state bitwise identical to the reference (align's Identical at the
	// previous step: w and Z) follows the reference's step instead of
	// computing it (olbfgs.Learner.Follow: the same bits, O(d)).
	follows := func(t int) bool { return t > 0 && t-1 < len(identical) && identical[t-1].Identical }
	// A twin follows its root (an earlier state, never a twin itself), once
	// the root has stepped: the root is stepped in the parallel phase, or,
	// if it follows the reference, earlier in the loop below (then the twin,
	// whose point is a copy of the root's, follows the reference too).
	root := func(t int) int {
		if t > 0 && t-1 < len(roots) && roots[t-1] >= 0 && !follows(t) {
			return roots[t-1] + 1
		}
		return -1
	}
	parallel.For(workers, n, func(t int) {
		if !follows(t) && root(t) < 0 {
			errs[t] = learner(t).Step(e)
		}
	})
	if errs[0] == nil {
		for t := 1; t < n; t++ {
			switch r := root(t); {
			case follows(t):
				if !learner(t).Follow(ref, e) {
					errs[t] = learner(t).Step(e)
				}
			case r > 0:
				if errs[r] == nil && !learner(t).Follow(learner(r), e) {
					errs[t] = learner(t).Step(e)
				}
			}
		}
	}
	for t, err := range errs {
		if err != nil {
			return &stepError{i: t - 1, err: err}
		}
	}
	return nil
}
