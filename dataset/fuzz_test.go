package dataset

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"unlearn/stream"
)

// The fuzz targets check two things of every input. A refused input gets an
// error of the package's kinds (*PosError or *OptionError), never a panic
// or an error of another type. An accepted input must have become what the
// file says: each target recomputes the expected events from the raw bytes
// by an independent reading (encoding/csv directly, a line-by-line LIBSVM
// tokenizer, the IDX byte layout) and compares them bit for bit, and the
// CSV and LIBSVM targets write the events back in the format and require
// that reading them again gives the same events (a lossless round trip).
//
// Run them for real with .ci/fuzz (docs/data.md); `go test` replays only the
// seed corpus and the crashers kept in testdata/fuzz.

// fuzzOpen writes data to a file and reads it whole. It returns the header
// and events of an accepted input, and ok = false for a refused one, after
// checking the error's type.
func fuzzOpen(t *testing.T, name string, data []byte, o Options) (stream.Header, []stream.Event, []Mapping, bool) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h, evs, m, err := readEvents(p, o)
	if err != nil {
		var pe *PosError
		var oe *OptionError
		if !errors.As(err, &pe) && !errors.As(err, &oe) {
			t.Fatalf("error of an unexpected type %T: %v", err, err)
		}
		return stream.Header{}, nil, nil, false
	}
	return h, evs, m, true
}

// readEvents reads every event of a data file.
func readEvents(path string, o Options) (stream.Header, []stream.Event, []Mapping, error) {
	h, r, err := Open(path, o)
	if err != nil {
		return stream.Header{}, nil, nil, err
	}
	defer r.Close()
	var evs []stream.Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return h, evs, r.Mapping(), nil
		}
		if err != nil {
			return stream.Header{}, nil, nil, err
		}
		evs = append(evs, e)
	}
}

// sameEvents fails unless got and want are the same inserts bit for bit
// (ids, labels, dense payloads of dimension d).
func sameEvents(t *testing.T, what string, d int, got, want []stream.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for k := range got {
		g, w := got[k], want[k]
		if g.Op != stream.Insert || g.ID != w.ID || math.Float64bits(g.Sample.S) != math.Float64bits(w.Sample.S) {
			t.Fatalf("%s: event %d is (%v, id %d, y %v), want (insert, id %d, y %v)", what, k, g.Op, g.ID, g.Sample.S, w.ID, w.Sample.S)
		}
		gx, wx := g.Sample.Dense(d), w.Sample.Dense(d)
		for j := range gx {
			if math.Float64bits(gx[j]) != math.Float64bits(wx[j]) {
				t.Fatalf("%s: event %d (id %d) entry %d = %v, want %v", what, k, g.ID, j, gx[j], wx[j])
			}
		}
	}
}

// shuffled returns evs in the order of a seeded shuffle (nil: unchanged).
func shuffled(evs []stream.Event, seed *uint64) []stream.Event {
	if seed == nil {
		return evs
	}
	out := make([]stream.Event, len(evs))
	for k, i := range Permutation(len(evs), *seed) {
		out[k] = evs[i]
	}
	return out
}

// isGzip reports whether data would be read as gzip (openFile).
func isGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

func FuzzCSV(f *testing.F) {
	for _, s := range []string{"a,b,y\n1,2,1\n3,4,0\n", "a,y\n\"1\",1\n", "a,y\n1,2\n", "a,y\n,\n", "a,y\n1\n", "y\n1\n", "a,\"y\n",
		"1,a,y\nk1,0.5,1\nk2,-0,-1\n", "1,a,y\n7, 1e-300 ,1\n3,5e-324,0\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, shuffle bool) {
		o := Options{Label: "y", ID: "1"}
		if shuffle {
			o.Shuffle = new(uint64(1))
		}
		if h, evs, m, ok := fuzzOpen(t, "f.csv", data, o); ok {
			if !isGzip(data) {
				csvExpected(t, data, o, h, evs, m)
			}
			csvRoundTrip(t, h.D, evs)
		}
		o = Options{Label: "1", NoHeader: true, SkipLines: 1, Kind: "regression"}
		if h, evs, _, ok := fuzzOpen(t, "g.csv", data, o); ok {
			csvRoundTrip(t, h.D, evs)
		}
	})
}

// csvExpected recomputes the events of an accepted CSV file with a header
// row from encoding/csv's records: features are the other columns in file
// order, each cell parsed by strconv.ParseFloat; labels 1 → +1 and 0 or −1
// → −1; ids the id column's integers, or the data row numbers with the
// cells as the mapping's keys.
func csvExpected(t *testing.T, data []byte, o Options, h stream.Header, evs []stream.Event, m []Mapping) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("accepted, but encoding/csv says %v (%d records)", err, len(recs))
	}
	names := recs[0]
	label, err1 := column(names, o.Label, "Label")
	id, err2 := column(names, o.ID, "ID")
	if err1 != nil || err2 != nil {
		t.Fatalf("accepted with unresolvable columns: %v, %v", err1, err2)
	}
	var feats []int
	for c := range names {
		if c != label && c != id {
			feats = append(feats, c)
		}
	}
	if h.D != len(feats) {
		t.Fatalf("d = %d, want %d feature columns", h.D, len(feats))
	}
	rows := recs[1:]
	intIDs := len(rows) > 0
	if intIDs {
		_, err := strconv.ParseInt(strings.TrimSpace(rows[0][id]), 10, 64)
		intIDs = err == nil
	}
	want := make([]stream.Event, len(rows))
	var keys []Mapping
	for i, r := range rows {
		x := make([]float64, len(feats))
		for j, c := range feats {
			v, err := strconv.ParseFloat(strings.TrimSpace(r[c]), 64)
			if err != nil {
				t.Fatalf("row %d: accepted cell %q: %v", i+1, r[c], err)
			}
			x[j] = v
		}
		yv, _ := strconv.ParseFloat(strings.TrimSpace(r[label]), 64)
		y := -1.0
		if yv == 1 {
			y = 1
		}
		e := stream.InsertEvent(int64(i+1), x, y)
		if intIDs {
			e.ID, _ = strconv.ParseInt(strings.TrimSpace(r[id]), 10, 64)
		} else {
			keys = append(keys, Mapping{ID: int64(i + 1), Key: strings.TrimSpace(r[id])})
		}
		want[i] = e
	}
	sameEvents(t, "CSV read", h.D, evs, shuffled(want, o.Shuffle))
	if len(keys) != len(m) {
		t.Fatalf("%d string ids, want %d", len(m), len(keys))
	}
	for k := range keys {
		if keys[k] != m[k] {
			t.Fatalf("mapping %d is %+v, want %+v", k, m[k], keys[k])
		}
	}
}

// csvRoundTrip writes accepted events as CSV (shortest round-trip decimal
// for every number) and requires the same events back.
func csvRoundTrip(t *testing.T, d int, evs []stream.Event) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	hdr := []string{"id"}
	for j := range d {
		hdr = append(hdr, fmt.Sprintf("c%d", j+1))
	}
	w.Write(append(hdr, "label"))
	for _, e := range evs {
		rec := []string{strconv.FormatInt(e.ID, 10)}
		for _, v := range e.Sample.Dense(d) {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		w.Write(append(rec, strconv.FormatFloat(e.Sample.S, 'g', -1, 64)))
	}
	w.Flush()
	if len(evs) == 0 {
		return
	}
	kind := stream.KindLogistic
	for _, e := range evs {
		if e.Sample.S != 1 && e.Sample.S != -1 {
			kind = stream.KindRegression
		}
	}
	p := filepath.Join(t.TempDir(), "rt.csv")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, got, _, err := readEvents(p, Options{Label: "label", ID: "id", Kind: kind})
	if err != nil {
		t.Fatalf("the events written back as CSV are refused: %v", err)
	}
	sameEvents(t, "CSV round trip", d, got, evs)
}

func FuzzLIBSVM(f *testing.F) {
	for _, s := range []string{"+1 1:0.5 3:2\n-1 2:1\n", "1 qid:3 1:1 # c\n", "1 0:1\n", "1 2:1 1:1\n", "1\n", "# only\n", "1 1:1e999\n",
		"0 2:-0 5:5e-324\r\n# c\n1\t1:7\n"} {
		f.Add([]byte(s), 0)
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, d int) {
		if d < 0 || d > 1000 || svmMaxIndex(data) > 1<<16 {
			return // a dense row of a huge inferred d is the format's meaning, not a reader's allocation
		}
		o := Options{D: d}
		h, evs, _, ok := fuzzOpen(t, "f.svm", data, o)
		if !ok {
			return
		}
		if !isGzip(data) {
			sameEvents(t, "LIBSVM read", h.D, evs, svmExpected(t, data, h.D))
		}
		// Written back, every entry explicit (−0 included), read again.
		var b bytes.Buffer
		for _, e := range evs {
			b.WriteString(strconv.FormatFloat(e.Sample.S, 'g', -1, 64))
			for j, v := range e.Sample.Dense(h.D) {
				if v != 0 || math.Signbit(v) {
					fmt.Fprintf(&b, " %d:%s", j+1, strconv.FormatFloat(v, 'g', -1, 64))
				}
			}
			b.WriteByte('\n')
		}
		if len(evs) == 0 {
			return
		}
		p := filepath.Join(t.TempDir(), "rt.svm")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sparse := range []bool{false, true} {
			_, got, _, err := readEvents(p, Options{D: h.D, Sparse: sparse})
			if err != nil {
				t.Fatalf("the events written back as LIBSVM are refused: %v", err)
			}
			renum := make([]stream.Event, len(evs))
			for k, e := range evs {
				renum[k] = e
				renum[k].ID = int64(k + 1) // ids are data row numbers
			}
			sameEvents(t, "LIBSVM round trip", h.D, got, renum)
		}
	})
}

// svmMaxIndex returns the largest integer before a colon in data (a cheap
// upper bound of the largest LIBSVM index).
func svmMaxIndex(data []byte) int {
	m := 0
	for _, tok := range bytes.FieldsFunc(data, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }) {
		if i := bytes.IndexByte(tok, ':'); i > 0 {
			if v, err := strconv.Atoi(string(tok[:i])); err == nil {
				m = max(m, v)
			} else if len(tok[:i]) > 6 {
				m = math.MaxInt
			}
		}
	}
	return m
}

// svmExpected recomputes the events of an accepted LIBSVM file line by
// line: comment-only lines skipped, the label's 1 → +1 and 0 or −1 → −1,
// qid tokens ignored, index:value entries into a dense vector of length
// d, ids the data row numbers.
func svmExpected(t *testing.T, data []byte, d int) []stream.Event {
	t.Helper()
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	var out []stream.Event
	for n, line := range lines {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		toks := bytes.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(toks) == 0 {
			continue
		}
		yv, err := strconv.ParseFloat(strings.TrimSpace(string(toks[0])), 64)
		if err != nil {
			t.Fatalf("line %d: accepted label %q: %v", n+1, toks[0], err)
		}
		y := -1.0
		if yv == 1 {
			y = 1
		}
		x := make([]float64, d)
		for _, tok := range toks[1:] {
			name, val, _ := bytes.Cut(tok, []byte{':'})
			if string(name) == "qid" {
				continue
			}
			idx, err1 := strconv.Atoi(string(name))
			v, err2 := strconv.ParseFloat(strings.TrimSpace(string(val)), 64)
			if err1 != nil || err2 != nil || idx < 1 || idx > d {
				t.Fatalf("line %d: accepted entry %q (d = %d)", n+1, tok, d)
			}
			x[idx-1] = v
		}
		out = append(out, stream.InsertEvent(int64(len(out)+1), x, y))
	}
	return out
}

func FuzzIDX(f *testing.F) {
	img := []byte{0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 3, 4}
	lab := []byte{0, 0, 8, 1, 0, 0, 0, 2, 0, 1}
	f.Add(img, lab)
	f.Add(img[:10], lab)
	f.Add(img, lab[:9])
	f.Fuzz(func(t *testing.T, img, lab []byte) {
		dir := t.TempDir()
		ip := filepath.Join(dir, "x-images-idx3-ubyte")
		if err := os.WriteFile(ip, img, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "x-labels-idx1-ubyte"), lab, 0o644); err != nil {
			t.Fatal(err)
		}
		h, evs, _, err := readEvents(ip, Options{Classes: []string{"0", "1"}})
		if err != nil {
			var pe *PosError
			if !errors.As(err, &pe) {
				t.Fatalf("error of an unexpected type %T: %v", err, err)
			}
			return
		}
		if isGzip(img) || isGzip(lab) {
			return
		}
		// The IDX layout: a 16-byte image header (n, rows, cols), then n
		// images of rows·cols bytes; an 8-byte label header, then n
		// labels. Images labelled 0 become −1, 1 become +1, others are
		// skipped; ids are 1-based image numbers; pixels are divided by 255.
		n := int(binary.BigEndian.Uint32(img[4:]))
		px := int(binary.BigEndian.Uint32(img[8:])) * int(binary.BigEndian.Uint32(img[12:]))
		if h.D != px || len(img) != 16+n*px || len(lab) != 8+n {
			t.Fatalf("accepted: d = %d, %d image bytes and %d label bytes for n = %d images of %d pixels", h.D, len(img), len(lab), n, px)
		}
		var want []stream.Event
		for i := range n {
			if lab[8+i] > 1 {
				continue
			}
			x := make([]float64, px)
			for j := range x {
				x[j] = float64(img[16+i*px+j]) / 255
			}
			want = append(want, stream.InsertEvent(int64(i+1), x, 2*float64(lab[8+i])-1))
		}
		sameEvents(t, "IDX read", px, evs, want)
	})
}
