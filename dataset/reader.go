package dataset

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"

	"unlearn/internal/atomicfile"
	"unlearn/stream"
)

// EventIterator yields the insert events of a data set in stream order.
// Next returns io.EOF after the last event; Close releases the file.
type EventIterator interface {
	Next() (stream.Event, error)
	Close() error
}

// Reader is the [EventIterator] that [Open] returns: the events of a data
// file, with what the read saw ([Reader.Stats]) and the mapping of string
// ids ([Reader.Mapping]).
type Reader struct {
	path string
	src  source // unshuffled: the file, streamed
	buf  []row  // shuffled: the emitted rows, in stream order
	pos  int    // next row of buf
	st   Stats  // shuffled: the stats of the second pass
	lim  int    // Options.Limit
	// val checks each event and records its id (nil with
	// Options.Unlabeled: then only loss checks the payload).
	val  *stream.Validator
	loss stream.Loss
	keys []Mapping
	line int    // the line of the last event returned
	key  string // the string id of the last event returned
	done bool
	// scale is the resolved Options.FeatureScale, applied to each row.
	scale []FeatureScale
}

var _ EventIterator = (*Reader)(nil)

// Mapping pairs a stream id with the string id of the CSV file it stands
// for (Options.ID).
type Mapping struct {
	ID  int64
	Key string
}

// Open opens a data file and returns the header of the stream it becomes
// and an iterator over its insert events. The events are valid for the
// header's loss (they pass stream.Validator); each is returned once, with
// a payload the caller may keep.
//
// The header has the kind of opts.Kind (logistic by default), d (the
// number of feature columns; the LIBSVM dimension; the IDX image size),
// λ = opts.Lambda (0.05 by default) and the metadata field "source"
// describing the file and options (and "features", the CSV feature column
// names). Without opts.Shuffle the file is streamed: memory is one row
// (plus the ids seen, to reject duplicates) whatever the file's size; a
// LIBSVM file without opts.D is read twice (first for the largest index).
// With opts.Shuffle the file is read twice and the emitted rows are held.
//
// Every error about the data is a *PosError naming the file and the line
// and column (CSV, LIBSVM) or byte offset (IDX), wrapping ErrSyntax,
// ErrValue, ErrLabel or ErrDuplicateID; Open reports errors in the
// header row or the IDX headers, Next the others (with opts.Shuffle, Open
// reports them all, since it reads the whole file). Options errors are
// *OptionError values (errors.Is(err, ErrOptions)).
//
// This is the entry point for every consumer of users' data: the
// converter (unlearn convert), the benchmark on real data (unlearn bench
// --data) and the model store's ingest.
func Open(path string, opts Options) (stream.Header, *Reader, error) {
	f, err := opts.format(path)
	if err != nil {
		return stream.Header{}, nil, err
	}
	if err := opts.validate(f); err != nil {
		return stream.Header{}, nil, err
	}
	d := opts.D
	if f == LIBSVM && d == 0 {
		if d, err = scanLIBSVM(path, opts); err != nil {
			return stream.Header{}, nil, err
		}
	}
	if opts.kind() == stream.KindMultinomial && opts.allClasses() {
		if opts.Classes, err = collectClasses(path, f, opts, d); err != nil {
			return stream.Header{}, nil, err
		}
	}
	src, err := openSource(path, f, opts, d)
	if err != nil {
		return stream.Header{}, nil, err
	}
	hdr, err := header(path, f, opts, src)
	if err != nil {
		src.close()
		return stream.Header{}, nil, err
	}
	loss, err := hdr.Loss()
	if err != nil {
		src.close()
		return stream.Header{}, nil, fmt.Errorf("dataset: %s: header: %w", path, err)
	}
	r := &Reader{path: path, lim: opts.Limit, loss: loss}
	if s, _, _, err := SourceOf(hdr); err == nil {
		r.scale = s.FeatureScale
	}
	if !opts.Unlabeled {
		r.val = stream.NewValidator(loss)
	}
	if opts.Shuffle == nil {
		r.src = src
		return hdr, r, nil
	}
	// Pass 1 counted the rows in src; pass 2 keeps the chosen ones.
	n, err := countRows(src)
	src.close()
	if err != nil {
		return stream.Header{}, nil, err
	}
	perm := Permutation(n, *opts.Shuffle)
	k := n
	if opts.Limit > 0 {
		k = min(k, opts.Limit)
	}
	slot := make([]int32, n)
	for i := range slot {
		slot[i] = -1
	}
	for j := range k {
		slot[perm[j]] = int32(j)
	}
	if src, err = openSource(path, f, opts, d); err != nil {
		return stream.Header{}, nil, err
	}
	defer src.close()
	r.buf = make([]row, k)
	for i := 0; ; i++ {
		row, err := src.next()
		if err == io.EOF {
			if i != n {
				return stream.Header{}, nil, fmt.Errorf("dataset: %s changed while it was read (%d rows, then %d)", path, n, i)
			}
			break
		}
		if err != nil {
			return stream.Header{}, nil, err
		}
		if i >= n {
			return stream.Header{}, nil, fmt.Errorf("dataset: %s changed while it was read (%d rows, then more)", path, n)
		}
		if s := slot[i]; s >= 0 {
			r.buf[s] = row
		}
	}
	r.st = src.stats()
	return hdr, r, nil
}

func openSource(path string, f Format, o Options, d int) (source, error) {
	switch f {
	case CSV:
		return openCSV(path, o)
	case LIBSVM:
		return openLIBSVM(path, o, d, false)
	default:
		return openIDX(path, o)
	}
}

// collectClasses reads the file once and returns its distinct labels in
// class order (Options.Classes = all): numeric labels by value, then the
// others in byte order. Fewer than two labels is an error.
func collectClasses(path string, f Format, o Options, d int) ([]string, error) {
	o.Classes = nil
	src, err := openSource(path, f, o, d)
	if err != nil {
		return nil, err
	}
	defer src.close()
	set := &labelSet{}
	switch s := src.(type) {
	case *csvSource:
		s.lab.collect = set
	case *svmSource:
		s.lab.collect = set
	case *idxSource:
		s.lbl.collect = set
	}
	if _, err := countRows(src); err != nil {
		return nil, err
	}
	classes := set.sorted()
	switch {
	case len(classes) < 2:
		return nil, optErr("Classes", "all: %s has %d distinct label(s) %v; a multinomial stream needs at least two", path, len(classes), classes)
	case len(classes) > stream.MaxClasses:
		return nil, optErr("Classes", "all: %s has %d distinct labels, more than %d", path, len(classes), stream.MaxClasses)
	}
	return classes, nil
}

func countRows(src source) (int, error) {
	n := 0
	for {
		if _, err := src.next(); err == io.EOF {
			return n, nil
		} else if err != nil {
			return 0, err
		}
		n++
	}
}

// MetaSource is the key of the header metadata that records how a stream
// was read from a data file ([Source]); MetaFeatures is the key of a CSV's
// feature column names, in order.
const (
	MetaSource   = "source"
	MetaFeatures = "features"
)

// Source is the header metadata "source" of a stream read from a data file:
// the file's name and format and the options that decide what its rows
// mean. Together with the CSV feature names (metadata "features") and the
// header's kind and d, it is the data contract a model trained on the
// stream records (package model): what new rows must look like.
type Source struct {
	// File is the data file's base name.
	File string `json:"file"`
	// Format is the file's format.
	Format Format `json:"format"`
	// Label, ID and Exclude are the CSV options of the read
	// (Options.Label, Options.ID, Options.Exclude).
	Label   string   `json:"label,omitempty"`
	ID      string   `json:"id,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// Classes is Options.Classes.
	Classes []string `json:"classes,omitempty"`
	// Scale is the IDX divisor (Options.Scale, 255 by default); Shape the
	// IDX image's rows and columns (rows·cols = d).
	Scale float64 `json:"scale,omitempty"`
	Shape []int   `json:"shape,omitempty"`
	// FeatureScale is Options.FeatureScale resolved: each declared
	// feature with its 1-based coordinate, in coordinate order.
	FeatureScale []FeatureScale `json:"feature_scale,omitempty"`
	// Shuffle and Limit are Options.Shuffle and Options.Limit.
	Shuffle *uint64 `json:"shuffle_seed,omitempty"`
	Limit   int     `json:"limit,omitempty"`
}

// SourceOf returns the data source a stream header records (metadata
// "source") and the CSV feature names (metadata "features"), and ok =
// false when the header records none: no "source" field, or one that is
// not a data source record (an object with a known "format"; other
// programs may use the key for something else). A record whose fields do
// not decode is an error naming the field.
func SourceOf(h stream.Header) (src Source, features []string, ok bool, err error) {
	raw, present := h.Meta[MetaSource]
	if !present {
		return Source{}, nil, false, nil
	}
	var probe struct {
		Format Format `json:"format"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return Source{}, nil, false, nil
	}
	switch probe.Format {
	case CSV, LIBSVM, IDX:
	default:
		return Source{}, nil, false, nil
	}
	if _, err := h.MetaValue(MetaSource, &src); err != nil {
		return Source{}, nil, false, err
	}
	if _, err := h.MetaValue(MetaFeatures, &features); err != nil {
		return Source{}, nil, false, err
	}
	return src, features, true, nil
}

func header(path string, f Format, o Options, src source) (stream.Header, error) {
	h := stream.Header{Format: stream.FormatV1, Kind: o.kind(), D: src.dim(), Lambda: o.lambda()}
	if o.kind() == stream.KindMultinomial {
		h.K = len(o.Classes)
	}
	m := Source{File: filepath.Base(path), Format: f, Label: o.Label, ID: o.ID, Exclude: o.Exclude, Classes: o.Classes,
		Shuffle: o.Shuffle, Limit: o.Limit}
	if is, ok := src.(*idxSource); ok {
		m.Scale = is.scale
		m.Shape = []int{is.rows, is.cols}
	}
	if len(o.FeatureScale) > 0 {
		names := indexNames(src.dim())
		if cs, ok := src.(*csvSource); ok {
			names = cs.featureNames()
		}
		fs, err := resolveFeatureScale(o.FeatureScale, names)
		if err != nil {
			return stream.Header{}, err
		}
		m.FeatureScale = fs
	}
	if err := h.SetMeta(MetaSource, m); err != nil {
		return stream.Header{}, err
	}
	if cs, ok := src.(*csvSource); ok {
		if err := h.SetMeta(MetaFeatures, cs.featureNames()); err != nil {
			return stream.Header{}, err
		}
	}
	return h, nil
}

// Next returns the next insert event, or io.EOF after the last one.
func (r *Reader) Next() (stream.Event, error) {
	if r.done {
		return stream.Event{}, io.EOF
	}
	var (
		rw  row
		err error
	)
	switch {
	case r.src == nil && r.pos == len(r.buf):
		err = io.EOF
	case r.src == nil:
		rw = r.buf[r.pos]
		r.buf[r.pos] = row{} // the caller owns the payload now
		r.pos++
	case r.lim > 0 && r.st.Emitted == r.lim:
		err = io.EOF
	default:
		rw, err = r.src.next()
	}
	if err != nil {
		if err == io.EOF {
			r.done = true
		}
		return stream.Event{}, err
	}
	if len(r.scale) > 0 {
		if err := scaleFeatures(r.scale, rw.x, rw.idx); err != nil {
			return stream.Event{}, &PosError{File: r.path, Line: rw.line, Err: err}
		}
	}
	e := stream.Event{Op: stream.Insert, ID: rw.id, Sample: stream.Sample{V: rw.x, S: rw.y, Idx: rw.idx}}
	if r.val == nil {
		if field, err := r.loss.CheckSample(e.Sample); err != nil {
			return stream.Event{}, fmt.Errorf("dataset: %s: row with id %d: field %q: %w", r.path, rw.id, field, err)
		}
	} else if err := r.val.Check(e); err != nil {
		var ee *stream.EventError
		if errors.As(err, &ee) && errors.Is(err, stream.ErrDuplicateID) {
			return stream.Event{}, &PosError{File: r.path, Line: rw.line, Err: fmt.Errorf("id %d: %w", rw.id, ErrDuplicateID)}
		}
		return stream.Event{}, fmt.Errorf("dataset: %s: row with id %d: %w", r.path, rw.id, err)
	}
	r.st.Emitted++
	r.line, r.key = rw.line, rw.key
	if rw.key != "" && r.val != nil { // unlabeled reads keep no mapping: Key gives each
		r.keys = append(r.keys, Mapping{ID: rw.id, Key: rw.key})
	}
	return e, nil
}

// Line returns the 1-based line of the data file that held the event
// Next returned last (CSV and LIBSVM), or 0 (IDX, or before the first
// event). A consumer that refuses an event (the model store's ingest) names
// the line with it.
func (r *Reader) Line() int { return r.line }

// Key returns the string id (CSV files whose id column holds strings) of
// the event Next returned last, or "". A consumer that keeps the mapping
// itself (the model store's ingest: store.KeySource) reads it here.
func (r *Reader) Key() string { return r.key }

// Close closes the file. It is safe to call more than once.
func (r *Reader) Close() error {
	r.done = true
	if r.src != nil {
		src := r.src
		r.src, r.buf = nil, nil
		r.st = mergeStats(src.stats(), r.st.Emitted)
		return src.close()
	}
	return nil
}

func mergeStats(s Stats, emitted int) Stats {
	s.Emitted = emitted
	return s
}

// Stats returns what the read has seen so far (all of it after io.EOF).
func (r *Reader) Stats() Stats {
	if r.src != nil {
		return mergeStats(r.src.stats(), r.st.Emitted)
	}
	return r.st
}

// Mapping returns the string ids of the events returned so far (CSV files
// whose id column holds strings; empty otherwise, and always empty for an
// Options.Unlabeled read, which keeps nothing per row: use Key), ascending
// by stream id.
func (r *Reader) Mapping() []Mapping {
	out := slices.Clone(r.keys)
	slices.SortFunc(out, func(a, b Mapping) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Permutation returns the seeded permutation of 0..n−1 used by
// Options.Shuffle: Fisher–Yates (Knuth, TAOCP vol. 2, §3.4.2, Algorithm P)
// from the identity, i = n−1 down to 1 swapping i with IntN(i+1), drawn
// from rand.New(rand.NewPCG(seed, ShuffleStream)).
func Permutation(n int, seed uint64) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, ShuffleStream))
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Dataset is a data file read whole: the validated history of its insert
// events, with the read's statistics and id mapping.
type Dataset struct {
	History *stream.History
	Stats   Stats
	Mapping []Mapping
}

// Load reads every event of a data file into a history; see [Open]. It
// is for consumers that need the whole stream at once (the benchmark);
// converters and ingest should iterate with Open instead. A file with no
// selected row is an error (wrapping ErrValue).
func Load(path string, opts Options) (*Dataset, error) {
	hdr, r, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var events []stream.Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("dataset: %s: no rows selected (%d read, %d of other classes): %w", path, r.Stats().Rows, r.Stats().Skipped, ErrValue)
	}
	h, err := stream.NewHistory(hdr, events)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return &Dataset{History: h, Stats: r.Stats(), Mapping: r.Mapping()}, nil
}

// Files returns the files a read of the data file path with opts opens:
// path itself and, for IDX, its label file (Options.Labels, or the name
// derived from the image file's). It is what a command that also writes
// files must not write over. A format or label file that cannot be told
// yet is left out (Open reports it).
func Files(path string, opts Options) []string {
	out := []string{path}
	if f, err := opts.format(path); err == nil && f == IDX {
		if lp, err := labelsPath(path, opts); err == nil {
			out = append(out, lp)
		} else if opts.Labels != "" {
			out = append(out, opts.Labels)
		}
	}
	return out
}

// MappingFile returns the name of the id mapping file written beside the
// stream file out: out + ".ids.csv".
func MappingFile(out string) string { return out + ".ids.csv" }

// WriteMapping writes the id mapping as CSV: a header row "id,key", then
// one row per mapping, in the order given.
func WriteMapping(w io.Writer, m []Mapping) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"id", "key"}); err != nil {
		return err
	}
	for _, p := range m {
		if err := cw.Write([]string{strconv.FormatInt(p.ID, 10), p.Key}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteMappingFile writes the id mapping to the file name atomically.
func WriteMappingFile(name string, m []Mapping) error {
	return atomicfile.WriteFile(name, 0o644, func(w io.Writer) error { return WriteMapping(w, m) })
}
