package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"unlearn/align"
	"unlearn/internal/strictjson"
)

// RecordFormat is the format tag of a run record. Version 2 stores seeded
// probes by their specification ([ProbeSpec]) instead of as m_q·d numbers,
// and may keep its per-step series in a CSV file beside it
// (Record.SeriesFile); [ReadRecord] also reads version 1 (RecordFormatV1).
const RecordFormat = "unlearn-run/v2"

// RecordFormatV1 is the format tag of the first run records, which always
// hold the probe vectors themselves and keep their series inline.
const RecordFormatV1 = "unlearn-run/v1"

// Record is the result of one run, data first: everything another
// implementation of the spec needs to reproduce it (the resolved configuration,
// the stream's provenance, the deletion set U and the probes) and
// everything it produced (per-step series and summaries of every method,
// operator costs).
//
// Every field except Timing is a deterministic function of the
// configuration and the stream: records of the same configuration are
// bit-identical across runs, machines with the same floating-point
// behaviour, and worker counts. Timing holds the wall-clock measurements;
// [Record.ZeroTiming] drops it.
type Record struct {
	// Format is RecordFormat.
	Format string `json:"format"`
	// Experiment is ExperimentBenchmark, ExperimentDecay or "run".
	Experiment string `json:"experiment"`
	// Index is the configuration's position in its grid (0 for a single
	// run).
	Index int `json:"index"`
	// ID is Config.ID() for generated streams, or the file name.
	ID string `json:"id"`
	// Config is the resolved configuration.
	Config Config `json:"config"`
	// Source says where the events came from.
	Source Source `json:"source"`
	// Learner is the o-LBFGS configuration of every state of the run.
	Learner LearnerConfig `json:"learner"`
	// U is the deletion set, ascending: the ids chosen by the deletion mode
	// (or given) plus the ids of delete events inside the prefix (spec §8).
	U []int64 `json:"U"`
	// ProbeSpec names the m_q seeded unit probe vectors of the
	// memory-operator error, shared by every method of the run (spec §3):
	// the generator, its seed and m_q. It is nil when the probes were given
	// as vectors (Config.ProbeVectors), and in version 1 records.
	ProbeSpec *ProbeSpec `json:"probe_spec,omitempty"`
	// Probes holds the probe vectors themselves only in version 1 records;
	// a version 2 record stores ProbeSpec instead of m_q·d numbers, or, for
	// probes given as vectors, has them once in Config.ProbeVectors. Use
	// [Record.ProbeVectors] to get them in every case.
	Probes [][]float64 `json:"probes,omitempty"`
	// ActualSkipped and ReferenceSkipped count the curvature pairs rejected
	// by the guard while training the actual learner on the prefix and
	// while replaying the counterfactual prefix.
	ActualSkipped    int `json:"actual_skipped"`
	ReferenceSkipped int `json:"reference_skipped"`
	// Methods are the results of every operator, in the operators' order.
	Methods []MethodResult `json:"methods"`
	// SeriesFile, when not empty, names the CSV file that holds the
	// methods' per-step series (the long form of [Record.WriteSeriesCSV]),
	// relative to the folder of the record's file; the methods' Series are
	// then nil in the JSON and [ReadRecordFile] loads them from it.
	SeriesFile string `json:"series_file,omitempty"`
	// Timing holds the wall-clock measurements, the only non-deterministic
	// part of a record; nil once zeroed.
	Timing *Timing `json:"timing,omitempty"`
	// Provenance names the command and version that wrote a standalone
	// record (unlearn run --out); nil in the records of a results folder,
	// whose Manifest.Provenance says it once for all.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// ProbeSpec is the specification of a run's seeded probes: the vectors are
// align.SeededProbes(Seed, d, Count) for Generator align.ProbeGenerator,
// which is all a record needs to store of them.
type ProbeSpec struct {
	// Generator names the generator (align.ProbeGenerator).
	Generator string `json:"generator"`
	// Seed is the generator's seed (Config.ProbeSeed, resolved).
	Seed uint64 `json:"seed"`
	// Count is m_q.
	Count int `json:"count"`
}

// NumProbes returns m_q, the number of probe vectors of the run.
func (r *Record) NumProbes() int {
	switch {
	case r.ProbeSpec != nil:
		return r.ProbeSpec.Count
	case len(r.Probes) > 0:
		return len(r.Probes)
	}
	return len(r.Config.ProbeVectors)
}

// ProbeVectors returns the run's m_q probe vectors of dimension
// r.Source.D: those drawn again from ProbeSpec (the same bits as the run
// used), or the stored ones (Config.ProbeVectors, or Probes of a version 1
// record). It returns an error wrapping ErrRecord when the record names an
// unknown generator or holds no probes.
func (r *Record) ProbeVectors() ([][]float64, error) {
	if r.ProbeSpec == nil {
		switch {
		case len(r.Probes) > 0:
			return r.Probes, nil
		case len(r.Config.ProbeVectors) > 0:
			return r.Config.ProbeVectors, nil
		}
		return nil, fmt.Errorf("%w: record %s holds neither probes nor probe_spec", ErrRecord, r.ID)
	}
	if err := r.ProbeSpec.check(r.Source.D); err != nil {
		return nil, fmt.Errorf("record %s: %w", r.ID, err)
	}
	return align.SeededProbes(r.ProbeSpec.Seed, r.Source.D, r.ProbeSpec.Count), nil
}

// check validates a probe specification for dimension d.
func (p *ProbeSpec) check(d int) error {
	switch {
	case p.Generator != align.ProbeGenerator:
		return fmt.Errorf("%w: probe_spec.generator %q is not known (this version draws %q)", ErrRecord, p.Generator, align.ProbeGenerator)
	case p.Count < 1:
		return fmt.Errorf("%w: probe_spec.count %d must be at least 1", ErrRecord, p.Count)
	case d < 1 || p.Count > align.MaxProbeFloats/d:
		return fmt.Errorf("%w: probe_spec.count %d at source.d = %d is outside [1, %d]", ErrRecord, p.Count, d, align.MaxProbeFloats/max(d, 1))
	}
	return nil
}

// Provenance says what made a record or a results folder, so that a report
// can name it. It is set by the front end (cmd/unlearn), never by the
// runners, and is deterministic for a given command line.
type Provenance struct {
	// Command is the command line, program name first, with its flags in a
	// canonical order (for example "unlearn bench --out results --quick").
	Command []string `json:"command"`
	// Version is the toolkit version that ran it.
	Version string `json:"version"`
	// Parts holds the provenance of the folders a merge joined, in the
	// order given; empty otherwise.
	Parts []Provenance `json:"parts,omitempty"`
}

// Source is the provenance of a run's events.
type Source struct {
	// Generated is the generator's specification, for synthetic streams.
	Generated *StreamSpec `json:"generated,omitempty"`
	// File is the stream file's path as given, and SHA256 its content's
	// hex digest, for runs on a file.
	File   string `json:"file,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Seed is the generator seed recorded in the stream file's header
	// (its "seed" metadata field, written by the generators of package
	// stream and by "unlearn gen"), or nil when the header has none or
	// the stream was generated (see Generated.Seed).
	Seed *uint64 `json:"seed,omitempty"`
	// Kind, D and T describe the stream.
	Kind string `json:"kind"`
	D    int    `json:"d"`
	T    int    `json:"T"`
}

// LearnerConfig is the o-LBFGS configuration of spec §2 used by a run.
type LearnerConfig struct {
	D            int     `json:"d"`
	Tau          int     `json:"tau"`
	Eta          float64 `json:"eta"`
	Gamma0       float64 `json:"gamma0"`
	CurvatureTol float64 `json:"curvature_tol"`
	// CheckpointWindow is the window W ≥ 5τ of the actual learner's
	// checkpoints, kept from θ0 (spec §5 window replay).
	CheckpointWindow int `json:"checkpoint_window"`
}

// MethodResult is one operator's outcome within a run.
type MethodResult struct {
	// Name is the operator's Name() ("oracle", "noop", …) and Label its
	// display name ("Oracle replay", …).
	Name  string `json:"name"`
	Label string `json:"label"`
	// EventsReplayed and GradEvals are the operator's deterministic costs
	// (spec §5, §8); its wall time is in Record.Timing.
	EventsReplayed int `json:"events_replayed"`
	GradEvals      int `json:"grad_evals"`
	// RestoreEvents counts the logged events window replay re-applied to
	// rebuild its checkpoint (unlearn.Cost.RestoreEvents); not part of the
	// spec §8 cost model.
	RestoreEvents int `json:"restore_events"`
	// Skipped counts the curvature pairs rejected while propagating the
	// intervened state on the future events.
	Skipped int `json:"skipped"`
	// Summary holds the method's summaries (spec §3).
	Summary Summary `json:"summary"`
	// Series holds the per-step metrics; nil when the run did not keep
	// them (see Options.KeepSeries).
	Series *Series `json:"series,omitempty"`
}

// Summary is a method's summary of a run (spec §3; names follow the
// paper's tables). k runs over 0..H.
type Summary struct {
	// InitialParam, InitialMemory and InitialState are E_w(0), E_Z(0) and
	// E_Θ(0).
	InitialParam  float64 `json:"initial_param"`
	InitialMemory float64 `json:"initial_memory"`
	InitialState  float64 `json:"initial_state"`
	// FinalState is E_Θ(H).
	FinalState float64 `json:"final_state"`
	// AUC is the future state AUC Σ_k E_Θ(k).
	AUC float64 `json:"auc"`
	// ParamAUC and MemoryAUC are Σ_k E_w(k) and Σ_k E_Z(k).
	ParamAUC  float64 `json:"param_auc"`
	MemoryAUC float64 `json:"memory_auc"`
	// UpdateAUC is Σ_k D_upd(k) over the steps where D_upd is defined.
	UpdateAUC float64 `json:"update_auc"`
	// DirectMass is M_direct(0), the direct memory mass right after the
	// intervention.
	DirectMass int `json:"direct_mass"`
	// Clearance is the direct-clearance time, the first k with
	// M_direct(k) = 0, or -1 when it never reaches 0 within the horizon.
	Clearance int `json:"clearance"`
	// Exact reports exact recovery: E_Θ(k) ≤ 1e-9·max(1, ‖w⁻_k‖) for
	// every k.
	Exact bool `json:"exact"`
	// Rho holds the decay-rate fits ρ̂ for the phases P1 = [0, τ−1],
	// P2 = [τ, 2τ−1], P3 = [2τ, H]; nil (null in JSON) when a phase has
	// fewer than 2 non-zero points, so the fit has no value (spec §8).
	Rho [3]*float64 `json:"rho"`
}

// Series holds a method's per-step metrics for k = 0..H (spec §3). All
// slices have length H+1.
type Series struct {
	// Ew, EZ and ETheta are E_w(k), E_Z(k) and E_Θ(k).
	Ew     Floats `json:"E_w"`
	EZ     Floats `json:"E_Z"`
	ETheta Floats `json:"E_Theta"`
	// Dupd is D_upd(k), NaN (null in JSON) where it is undefined: after the
	// last insert of the horizon (spec §8).
	Dupd Floats `json:"D_upd"`
	// Mdirect is M_direct(k).
	Mdirect []int `json:"M_direct"`
}

// newSeries returns a series of n steps, with its slices carved from one
// allocation.
func newSeries(n int) *Series {
	buf := make([]float64, 4*n)
	return &Series{
		Ew:      buf[0*n : 1*n : 1*n],
		EZ:      buf[1*n : 2*n : 2*n],
		ETheta:  buf[2*n : 3*n : 3*n],
		Dupd:    buf[3*n : 4*n : 4*n],
		Mdirect: make([]int, n),
	}
}

// Timing holds the wall-clock measurements of a run.
type Timing struct {
	// Total is the wall time of the whole run (stream, training, every
	// operator, propagation and metrics).
	Total time.Duration `json:"total_ns"`
	// Methods holds each operator's wall time (its Cost.Wall), in the
	// order of Record.Methods.
	Methods []time.Duration `json:"methods_ns"`
}

// ZeroTiming removes the wall-clock measurements, leaving a record that is
// a deterministic function of its configuration.
func (r *Record) ZeroTiming() { r.Timing = nil }

// DropSeries removes the per-step series of every method.
func (r *Record) DropSeries() {
	for i := range r.Methods {
		r.Methods[i].Series = nil
	}
}

// Method returns the result of the method called name, or nil.
func (r *Record) Method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// MethodNames returns the names of the record's methods, in order.
func (r *Record) MethodNames() []string {
	names := make([]string, len(r.Methods))
	for i, m := range r.Methods {
		names[i] = m.Name
	}
	return names
}

// WriteJSON writes the record as compact JSON followed by a newline
// (compact: a record with series holds hundreds of thousands of numbers;
// pipe it through `jq .` to read it).
func (r *Record) WriteJSON(w io.Writer) error {
	if err := json.NewEncoder(w).Encode(r); err != nil {
		return fmt.Errorf("experiment: encoding record %s: %w", r.ID, err)
	}
	return nil
}

// ReadRecord decodes a record written by [Record.WriteJSON] (format
// RecordFormat, or RecordFormatV1 of earlier versions), rejecting unknown
// fields, other formats, and a version 2 record whose probes are neither
// given nor specified by a known generator. It does not load a series file
// (Record.SeriesFile); [ReadRecordFile] does.
func ReadRecord(rd io.Reader) (*Record, error) {
	var r Record
	if err := strictjson.Decode(rd, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRecord, err)
	}
	switch r.Format {
	case RecordFormat:
		switch {
		case len(r.Probes) > 0:
			return nil, fmt.Errorf("%w: a %s record stores probe_spec or config.probe_vectors, not probes", ErrRecord, RecordFormat)
		case r.ProbeSpec != nil && len(r.Config.ProbeVectors) > 0:
			return nil, fmt.Errorf("%w: record %s holds both probe_spec and config.probe_vectors", ErrRecord, r.ID)
		case r.ProbeSpec != nil:
			if err := r.ProbeSpec.check(r.Source.D); err != nil {
				return nil, err
			}
		case len(r.Config.ProbeVectors) == 0:
			return nil, fmt.Errorf("%w: record %s holds neither probe_spec nor config.probe_vectors", ErrRecord, r.ID)
		}
	case RecordFormatV1:
		if r.ProbeSpec != nil || r.SeriesFile != "" {
			return nil, fmt.Errorf("%w: a %s record has no probe_spec or series_file", ErrRecord, RecordFormatV1)
		}
	default:
		return nil, fmt.Errorf("%w: format %q, want %q (or %q)", ErrRecord, r.Format, RecordFormat, RecordFormatV1)
	}
	return &r, nil
}

// Num is a float64 that encodes NaN as JSON null and ±Inf as the strings
// "+Inf" and "-Inf" (JSON has neither), and decodes them back.
type Num float64

// MarshalJSON implements json.Marshaler.
func (x Num) MarshalJSON() ([]byte, error) { return appendNum(nil, float64(x)), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (x *Num) UnmarshalJSON(b []byte) error {
	v, err := parseNum(b)
	*x = Num(v)
	return err
}

// Floats is a []float64 whose elements encode as [Num] does.
type Floats []float64

// MarshalJSON implements json.Marshaler.
func (f Floats) MarshalJSON() ([]byte, error) {
	if f == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+20*len(f))
	b = append(b, '[')
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, v)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Floats) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*f = nil
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make([]float64, len(raw))
	for i, r := range raw {
		v, err := parseNum(r)
		if err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = v
	}
	*f = out
	return nil
}

func appendNum(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "null"...)
	case math.IsInf(v, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	// The same shortest round-trip form as encoding/json ('g' for tiny or
	// huge exponents), so values decode bit for bit.
	abs := math.Abs(v)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(b, v, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

func parseNum(b []byte) (float64, error) {
	switch s := string(bytes.TrimSpace(b)); s {
	case "null":
		return math.NaN(), nil
	case `"+Inf"`:
		return math.Inf(1), nil
	case `"-Inf"`:
		return math.Inf(-1), nil
	default:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: number %q", ErrRecord, s)
		}
		return v, nil
	}
}
