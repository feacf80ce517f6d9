package experiment

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/align"
	"unlearn/stream"
)

// TestRecordFilesRoundTrip writes a record with its series beside it and
// reads both back: the JSON holds no series, and the record read back
// encodes (series inline) exactly as the original.
func TestRecordFilesRoundTrip(t *testing.T) {
	r := mustRun(t, smallConfig(stream.KindLogistic, ModeRandom, 3), Options{KeepSeries: true, ZeroTiming: true})
	want := encode(t, r)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	require.NoError(t, WriteRecordFiles(path, r))
	require.NotNil(t, r.Methods[0].Series, "WriteRecordFiles modified its record")

	js, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(js), `"E_w"`, "the JSON holds series")
	assert.Contains(t, string(js), `"series_file":"run.series.csv"`, "the JSON does not name its series file")
	_, err = os.Stat(filepath.Join(dir, "run.series.csv"))
	require.NoError(t, err, "series file")

	back, err := ReadRecordFile(path)
	require.NoError(t, err)
	assert.Equal(t, "run.series.csv", back.SeriesFile)
	back.SeriesFile = ""
	if got := encode(t, back); !bytes.Equal(got, want) {
		t.Fatal("record with its series file read back differs from the record written")
	}

	// A record without series is written as one file.
	r.DropSeries()
	p2 := filepath.Join(dir, "summary.json")
	require.NoError(t, WriteRecordFiles(p2, r))
	_, err = os.Stat(filepath.Join(dir, "summary.series.csv"))
	assert.True(t, os.IsNotExist(err), "a series file was written for a record without series")
	back, err = ReadRecordFile(p2)
	require.NoError(t, err)
	assert.Nil(t, back.Methods[0].Series)
}

// TestReadSeriesCSVErrors corrupts a series file in turn and checks each
// corruption is refused with the line and column, leaving the record as it
// was.
func TestReadSeriesCSVErrors(t *testing.T) {
	c := smallConfig(stream.KindQuadratic, ModeRecent, 1)
	c.Horizon = 4
	r := mustRun(t, c, Options{KeepSeries: true, ZeroTiming: true})
	var b bytes.Buffer
	require.NoError(t, r.WriteSeriesCSV(&b))
	good := b.String()
	r.DropSeries()
	require.NoError(t, r.ReadSeriesCSV(strings.NewReader(good)), "the written series")
	r.DropSeries()

	lines := strings.SplitAfter(good, "\n")
	edit := func(line int, from, to string) string {
		l := slices.Clone(lines)
		l[line-1] = strings.Replace(l[line-1], from, to, 1)
		return strings.Join(l, "")
	}
	tests := []struct{ name, csv, want string }{
		{"number", edit(3, ",0,", ",x,"), "line 3, column 3 (E_w)"},
		{"method", edit(2, "oracle", "noop"), "line 2, column 1 (method)"},
		{"k", edit(4, "oracle,2", "oracle,7"), "line 4, column 2 (k)"},
		{"M_direct", edit(7, ",5\n", ",-1\n"), "line 7, column 7 (M_direct)"},
		{"header", edit(1, "E_Z", "EZ"), "line 1, column 4 (E_Z)"},
		{"missing row", strings.Join(lines[:len(lines)-2], ""), "series ends at line"},
		{"extra row", good + lines[len(lines)-2], "after the last method"},
		{"empty", "", "empty"},
		{"short row", edit(5, ",0,", ","), "wrong number of fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotEqual(t, good, tt.csv, "test setup: nothing corrupted")
			err := r.ReadSeriesCSV(strings.NewReader(tt.csv))
			require.ErrorIs(t, err, ErrRecord)
			assert.Contains(t, err.Error(), tt.want)
			for _, m := range r.Methods {
				require.Nil(t, m.Series, "a failed read attached series")
			}
		})
	}
}

// TestRecordFileNamesItsSeriesSafely: a series_file outside the record's
// folder, or missing, is an error naming it.
func TestRecordFileNamesItsSeriesSafely(t *testing.T) {
	c := smallConfig(stream.KindQuadratic, ModeRecent, 1)
	c.Horizon = 3
	r := mustRun(t, c, Options{KeepSeries: true, ZeroTiming: true})
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	require.NoError(t, WriteRecordFiles(path, r))
	js, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, name := range []string{"../run.series.csv", "sub/run.series.csv", "missing.csv"} {
		bad := bytes.Replace(js, []byte(`"run.series.csv"`), []byte(`"`+name+`"`), 1)
		require.NoError(t, os.WriteFile(path, bad, 0o600))
		_, err := ReadRecordFile(path)
		require.ErrorIs(t, err, ErrRecord, name)
		assert.Contains(t, err.Error(), name)
	}
}

// TestProbesBySeed: a record stores seeded probes by (generator, seed,
// m_q) and gives back the engine's vectors; given vectors stay in the
// configuration; version 1 records (probe vectors inline) still read; an
// unknown generator or a record without probes is refused.
func TestProbesBySeed(t *testing.T) {
	c := smallConfig(stream.KindQuadratic, ModeRecent, 4)
	r := mustRun(t, c, Options{ZeroTiming: true})
	require.Equal(t, &ProbeSpec{Generator: align.ProbeGenerator, Seed: 4, Count: 8}, r.ProbeSpec)
	e, err := align.NewEngine(6, align.Options{Seed: 4, Probes: 8})
	require.NoError(t, err)
	pv, err := r.ProbeVectors()
	require.NoError(t, err)
	require.Equal(t, e.Probes(), pv, "probes drawn again from the record")

	// Given vectors reproduce the run bit for bit and are stored once.
	c2 := c
	c2.ProbeVectors = pv
	r2 := mustRun(t, c2, Options{ZeroTiming: true})
	assert.Nil(t, r2.ProbeSpec)
	assert.Empty(t, r2.Probes)
	pv2, err := r2.ProbeVectors()
	require.NoError(t, err)
	assert.Equal(t, pv, pv2)
	for i := range r.Methods {
		assert.Equal(t, r.Methods[i].Summary, r2.Methods[i].Summary, r.Methods[i].Name)
	}
	back, err := ReadRecord(bytes.NewReader(encode(t, r2)))
	require.NoError(t, err, "a record of given probes")
	assert.Equal(t, 8, back.NumProbes())

	// A version 1 record: probe vectors inline, no probe_spec.
	var m map[string]any
	require.NoError(t, json.Unmarshal(encode(t, r), &m))
	m["format"] = RecordFormatV1
	delete(m, "probe_spec")
	m["probes"] = pv
	v1, err := json.Marshal(m)
	require.NoError(t, err)
	old, err := ReadRecord(bytes.NewReader(v1))
	require.NoError(t, err, "a version 1 record")
	assert.Equal(t, 8, old.NumProbes())
	pv1, err := old.ProbeVectors()
	require.NoError(t, err)
	assert.Equal(t, pv, pv1)

	bad := func(mod func(map[string]any)) error {
		var m map[string]any
		require.NoError(t, json.Unmarshal(encode(t, r), &m))
		mod(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		_, err = ReadRecord(bytes.NewReader(b))
		return err
	}
	err = bad(func(m map[string]any) { m["probe_spec"].(map[string]any)["generator"] = "numpy-default" })
	require.ErrorIs(t, err, ErrRecord)
	assert.Contains(t, err.Error(), `probe_spec.generator "numpy-default"`)
	err = bad(func(m map[string]any) { m["probe_spec"].(map[string]any)["count"] = 0 })
	require.ErrorIs(t, err, ErrRecord)
	assert.Contains(t, err.Error(), "probe_spec.count")
	err = bad(func(m map[string]any) { delete(m, "probe_spec") })
	require.ErrorIs(t, err, ErrRecord)
	assert.Contains(t, err.Error(), "neither probe_spec")
	err = bad(func(m map[string]any) { m["probes"] = pv })
	require.ErrorIs(t, err, ErrRecord, "a version 2 record with inline probes")
	err = bad(func(m map[string]any) { m["format"] = RecordFormatV1 })
	require.ErrorIs(t, err, ErrRecord, "a version 1 record with probe_spec")
}

// TestRunStateWorkers: measuring a run's states on several goroutines
// (Options.Workers for a single run) gives the record of one goroutine,
// bit for bit, series included.
func TestRunStateWorkers(t *testing.T) {
	for _, kind := range []stream.Kind{stream.KindQuadratic, stream.KindLogistic} {
		c := smallConfig(kind, ModeRandom, 2)
		one := encode(t, mustRun(t, c, Options{Workers: 1, KeepSeries: true, ZeroTiming: true}))
		for _, w := range []int{2, 5} {
			got := encode(t, mustRun(t, c, Options{Workers: w, KeepSeries: true, ZeroTiming: true}))
			if !bytes.Equal(one, got) {
				t.Fatalf("%s: the record with %d workers differs from the record with one", kind, w)
			}
		}
	}
}
