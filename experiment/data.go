package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"unlearn/dataset"
	"unlearn/stream"
)

// DataSource is a real data set as the stream of a configuration, beside
// the synthetic generators: the file's selected rows in the seeded order
// of the configuration's stream seed (dataset.Options.Shuffle), the first
// T of them (dataset.Options.Limit). Build one with [DataFile].
type DataSource struct {
	// File is the data file's path, as given. Required.
	File string `json:"file"`
	// SHA256 is the hex digest of the file's content; if set, the file is
	// checked against it when a configuration reads it.
	SHA256 string `json:"sha256,omitempty"`
	// Rows is the number of rows the options select in the file (every
	// row of the chosen classes), an upper bound on T.
	Rows int `json:"rows"`
	// Options say how to read the file (package dataset). Shuffle and
	// Limit must be unset: each configuration sets them to its seed and T.
	Options dataset.Options `json:"options"`
}

// DataFile reads the data file path once with opts — checking every row
// and counting the selected ones — and returns its source (with the
// file's SHA-256) and the header of its stream.
func DataFile(path string, opts dataset.Options) (DataSource, stream.Header, error) {
	if opts.Shuffle != nil || opts.Limit != 0 {
		return DataSource{}, stream.Header{}, configErr("Stream.Data.Options", "Shuffle/Limit", "are set per configuration (stream seed and T); leave them unset")
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return DataSource{}, stream.Header{}, err
	}
	hdr, r, err := dataset.Open(path, opts)
	if err != nil {
		return DataSource{}, stream.Header{}, err
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			return DataSource{}, stream.Header{}, err
		}
		n++
	}
	return DataSource{File: path, SHA256: sum, Rows: n, Options: opts}, hdr, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("experiment: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("experiment: %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// load returns the stream of a data configuration: T rows of the file in
// the order of seed.
func (d *DataSource) load(seed uint64, T int) (*stream.History, error) {
	if d.SHA256 != "" {
		sum, err := fileSHA256(d.File)
		if err != nil {
			return nil, err
		}
		if sum != d.SHA256 {
			return nil, fmt.Errorf("%w: data file %s changed: SHA-256 %s, recorded %s", ErrRun, d.File, sum, d.SHA256)
		}
	}
	o := d.Options
	o.Shuffle, o.Limit = &seed, T
	ds, err := dataset.Load(d.File, o)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	if n := len(ds.History.Events); n < T {
		return nil, configErr("Stream.T", T, fmt.Sprintf("at most the %d rows the data file %s selects", n, d.File))
	}
	return ds.History, nil
}

// name is a short name of the data set for configuration ids: the file's
// base name without compression and format suffixes.
func (d *DataSource) name() string {
	n := filepath.Base(d.File)
	for _, suf := range []string{".gz", ".csv", ".svm", ".libsvm", ".svmlight", ".txt", "-ubyte", "-idx3", "-images"} {
		n = strings.TrimSuffix(n, suf)
	}
	if cl := d.Options.Classes; len(cl) == 2 {
		n += "-" + cl[0] + "v" + cl[1]
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, n)
}

// DataGrid crosses the axes' τ, deletion modes and seeds over base for the
// data set src of dimension d (from [DataFile]'s header), in the order of
// [GridAxes.Grid] (τ outermost, seed innermost); the axes' Kinds and
// Kappas are ignored (the kind is the data set's; κ is a property of the
// synthetic generators). Each configuration streams the first base.Stream.T
// rows (all of them if zero) of the file in the order of its seed, which
// also seeds its deletions and probes.
func DataGrid(name string, a GridAxes, base Config, src DataSource, d int) Grid {
	g := Grid{Name: name, Experiment: ExperimentBenchmark}
	base.Stream = StreamSpec{Kind: src.Options.Kind, D: d, T: base.Stream.T, Data: &src}
	if base.Stream.Kind == "" {
		base.Stream.Kind = stream.KindLogistic
	}
	if base.Stream.T == 0 {
		base.Stream.T = src.Rows
	}
	for _, tau := range a.Taus {
		for _, mode := range a.Modes {
			for _, seed := range a.Seeds {
				c := base
				c.Stream.Seed = seed
				c.Tau, c.Mode = tau, mode
				c.DeletionSeed, c.ProbeSeed = nil, nil
				g.Configs = append(g.Configs, c.resolve(0))
			}
		}
	}
	return g
}

// histories hands out the streams of a grid's configurations: generated
// streams are generated per configuration; data streams are read once per
// (seed, T) and shared by the configurations that use them (histories are
// immutable), so a grid over τ and modes reads the file once per seed.
type histories struct {
	mu   sync.Mutex
	data map[dataKey]*dataEntry
}

type dataKey struct {
	seed uint64
	t    int
}

type dataEntry struct {
	once sync.Once
	h    *stream.History
	err  error
}

func (hs *histories) get(s StreamSpec) (*stream.History, error) {
	if s.Data == nil {
		return s.Generate()
	}
	hs.mu.Lock()
	if hs.data == nil {
		hs.data = map[dataKey]*dataEntry{}
	}
	k := dataKey{s.Seed, s.T}
	e, ok := hs.data[k]
	if !ok {
		e = &dataEntry{}
		hs.data[k] = e
	}
	hs.mu.Unlock()
	e.once.Do(func() { e.h, e.err = s.Generate() })
	return e.h, e.err
}

// validateData checks a data stream's spec.
func (s StreamSpec) validateData() error {
	o := s.Data.Options
	k := o.Kind
	if k == "" {
		k = stream.KindLogistic
	}
	switch {
	case s.Data.File == "":
		return configErr("Stream.Data.File", "", "is required")
	case o.Shuffle != nil || o.Limit != 0:
		return configErr("Stream.Data.Options", "Shuffle/Limit", "are set per configuration (stream seed and T); leave them unset")
	case s.Kind != k:
		return configErr("Stream.Kind", s.Kind, fmt.Sprintf("must be the data set's kind %q", k))
	case s.D < 1:
		return configErr("Stream.D", s.D, "must be the data set's dimension")
	case s.T < 1:
		return configErr("Stream.T", s.T, "must be at least 1")
	case s.Data.Rows > 0 && s.T > s.Data.Rows:
		return configErr("Stream.T", s.T, fmt.Sprintf("must be at most the %d rows the data file selects", s.Data.Rows))
	case s.Kappa != 0 || s.NoDrift || s.FeatureScale != 0:
		return configErr("Stream.Kappa", s.Kappa, "Kappa, NoDrift and FeatureScale apply to generated streams only")
	}
	return nil
}
