package experiment

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/stream"
	"unlearn/unlearn"
)

// smallConfig returns a small Experiment 2 configuration: d = 6, T = 160,
// t_del = 60, H = 100, τ = 5, m_q = 8, so that a run takes milliseconds
// even under the race detector.
func smallConfig(kind stream.Kind, mode string, seed uint64) Config {
	c := Experiment2()
	c.Stream = StreamSpec{Kind: kind, D: 6, T: 160, Kappa: 10, Seed: seed}
	c.TDel, c.Horizon, c.Tau, c.Probes, c.Mode = 60, 100, 5, 8, mode
	return c
}

func mustRun(t *testing.T, c Config, opt Options) *Record {
	t.Helper()
	r, err := Run(context.Background(), ExperimentBenchmark, c, opt)
	require.NoError(t, err, "Run(%s)", c.ID())
	return r
}

func method(t *testing.T, r *Record, name string) *MethodResult {
	t.Helper()
	m := r.Method(name)
	require.NotNil(t, m, "record %s has no method %q (has %v)", r.ID, name, r.MethodNames())
	return m
}

func TestExperiment2SmallConfig(t *testing.T) {
	for _, kind := range []stream.Kind{stream.KindQuadratic, stream.KindLogistic} {
		t.Run(string(kind), func(t *testing.T) {
			c := smallConfig(kind, ModeRecent, 1)
			r := mustRun(t, c, Options{KeepSeries: true})
			require.Len(t, r.U, DefaultCount, "|U|")
			// Recent mode takes the last |U| inserts of the prefix (spec §4);
			// the generators give event t the id t (spec §8).
			assert.Equal(t, []int64{56, 57, 58, 59, 60}, r.U, "U")
			assert.Equal(t, c.Probes, r.NumProbes(), "probes")
			require.NotNil(t, r.ProbeSpec, "probe_spec")
			assert.Empty(t, r.Probes, "seeded probes are stored by their specification")
			steps := c.Horizon + 1
			for _, m := range r.Methods {
				s := m.Series
				if s == nil || len(s.Ew) != steps || len(s.EZ) != steps || len(s.ETheta) != steps ||
					len(s.Dupd) != steps || len(s.Mdirect) != steps {
					t.Fatalf("%s: series missing or not of length H+1 = %d", m.Name, steps)
				}
			}
			t.Run("oracle has zero error at every step", func(t *testing.T) {
				s := method(t, r, OracleName).Series
				for k := range s.ETheta {
					if s.Ew[k] != 0 || s.EZ[k] != 0 || s.ETheta[k] != 0 {
						t.Fatalf("oracle at k = %d: E_w = %g, E_Z = %g, E_Θ = %g; want 0 (spec §8: replay is bit-exact)",
							k, s.Ew[k], s.EZ[k], s.ETheta[k])
					}
				}
				assert.True(t, method(t, r, OracleName).Summary.Exact, "oracle not flagged as exact recovery")
			})
			for _, name := range []string{"window-tau", "window-5tau"} {
				t.Run(name+" recovers recent deletions exactly", func(t *testing.T) {
					// |U| = 5 ≤ τ = 5: U lies inside both windows (spec §5).
					m := method(t, r, name)
					assert.True(t, m.Summary.Exact, "%s: not exact; AUC = %g", name, m.Summary.AUC)
					for k, e := range m.Series.ETheta {
						if e != 0 {
							t.Fatalf("%s: E_Θ(%d) = %g, want 0", name, k, e)
						}
					}
				})
			}
			t.Run("no-op keeps the deleted samples' influence", func(t *testing.T) {
				if m := method(t, r, BaselineName); m.Summary.InitialState == 0 || m.Summary.Exact {
					t.Errorf("no-op: E_Θ(0) = %g, exact = %v; want a positive error", m.Summary.InitialState, m.Summary.Exact)
				}
			})
			t.Run("D_upd undefined only after the last insert", func(t *testing.T) {
				// t_del + H = T: no insert follows state H (spec §8).
				s := method(t, r, BaselineName).Series
				for k, v := range s.Dupd {
					if math.IsNaN(v) != (k == c.Horizon) {
						t.Fatalf("D_upd(%d) = %v: NaN exactly at k = H = %d expected", k, v, c.Horizon)
					}
				}
			})
			t.Run("summaries match the series", func(t *testing.T) {
				for _, m := range r.Methods {
					var auc float64
					for _, e := range m.Series.ETheta {
						auc += e
					}
					equalFloat(t, m.Name+" AUC", m.Summary.AUC, auc)
					equalFloat(t, m.Name+" final", m.Summary.FinalState, m.Series.ETheta[c.Horizon])
					equalFloat(t, m.Name+" initial", m.Summary.InitialState, m.Series.ETheta[0])
				}
			})
		})
	}
}

func TestPrefixDeletesJoinU(t *testing.T) {
	// A stream file whose prefix deletes id 3: id 3 joins U (spec §8) and
	// the counterfactual is the prefix without it.
	h, err := StreamSpec{Kind: stream.KindQuadratic, D: 4, T: 80, Seed: 2}.Generate()
	require.NoError(t, err)
	events := slices.Clone(h.Events)
	events = slices.Insert(events, 10, stream.DeleteEvent(3))
	h2, err := stream.NewHistory(h.Header, events)
	require.NoError(t, err)
	c := Config{TDel: 40, Horizon: 41, Tau: 4, Probes: 4, Deleted: []int64{20, 30}}
	r, err := RunHistory(context.Background(), h2, Source{Kind: "quadratic", D: 4, T: len(events)}, c, "", Options{})
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 20, 30}, r.U, "U")
	assert.Equal(t, ModeExplicit, r.Config.Mode, "mode")
	m := method(t, r, OracleName)
	assert.True(t, m.Summary.Exact, "oracle not exact with a prefix delete; AUC %g", m.Summary.AUC)
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		field string // "" for valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"experiment 1", func(c *Config) { *c = Experiment1() }, ""},
		{"horizon beyond T", func(c *Config) { c.Horizon = 4501 }, "Horizon"},
		{"negative t_del", func(c *Config) { c.TDel = -1 }, "TDel"},
		// Issue 14: t_del beyond T was blamed on the (defaulted) horizon,
		// and t_del + H overflowed int before the range check.
		{"t_del beyond T, horizon defaulted", func(c *Config) { c.TDel, c.Horizon = 5800, 0 }, "TDel"},
		{"t_del = T", func(c *Config) { c.TDel, c.Horizon = Exp2T, 0 }, "TDel"},
		{"horizon at the integer limit", func(c *Config) { c.Horizon = math.MaxInt }, "Horizon"},
		{"t_del at the integer limit", func(c *Config) { c.TDel, c.Horizon = math.MaxInt, 1 }, "TDel"},
		{"both at the integer limit", func(c *Config) { c.TDel, c.Horizon = math.MaxInt, math.MaxInt }, "TDel"},
		{"d beyond the generators", func(c *Config) { c.Stream.D = 3_000_000 }, "Stream.D"},
		{"T beyond the generators", func(c *Config) { c.Stream.T = math.MaxInt }, "Stream.T"},
		{"tau", func(c *Config) { c.Tau = -2 }, "Tau"},
		{"eta", func(c *Config) { c.Eta = math.Inf(1) }, "Eta"},
		{"mode", func(c *Config) { c.Mode = "newest" }, "Mode"},
		{"explicit is not a mode", func(c *Config) { c.Mode = ModeExplicit }, ""},
		{"lambda", func(c *Config) { c.LambdaZ = new(-1.0) }, "LambdaZ"},
		{"zero lambda is valid", func(c *Config) { c.LambdaZ = new(0.0) }, ""},
		{"kind", func(c *Config) { c.Stream.Kind = "cubic" }, "Stream.Kind"},
		{"kappa", func(c *Config) { c.Stream.Kappa = 0.5 }, "Stream.Kappa"},
		{"probe length", func(c *Config) { c.ProbeVectors = [][]float64{{1, 0}} }, "ProbeVectors"},
		{"probe norm", func(c *Config) {
			v := make([]float64, DefaultDim)
			v[0] = 2
			c.ProbeVectors = [][]float64{v}
		}, "ProbeVectors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Experiment2()
			tt.edit(&c)
			err := c.Validate()
			if tt.field == "" {
				require.NoError(t, err, "Validate")
				return
			}
			require.ErrorIs(t, err, ErrConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tt.field, ce.Field, "field of the ConfigError")
		})
	}
	t.Run("resolve leaves the caller's struct alone", func(t *testing.T) {
		var c Config
		_ = c.Validate()
		require.Zero(t, c.Tau, "Validate wrote defaults into the caller's Config: %+v", c)
		require.Nil(t, c.LambdaZ, "Validate wrote defaults into the caller's Config: %+v", c)
		require.Nil(t, c.ProbeSeed, "Validate wrote defaults into the caller's Config: %+v", c)
	})
	t.Run("a stream with one event", func(t *testing.T) {
		h, err := smallConfig(stream.KindQuadratic, ModeRecent, 1).Stream.Generate()
		require.NoError(t, err)
		h.Events = h.Events[:1]
		_, err = RunHistory(context.Background(), h, Source{File: "one.jsonl"}, Config{TDel: 1}, "", Options{})
		require.ErrorIs(t, err, ErrConfig)
		require.Contains(t, err.Error(), "the stream has 1 event(s)")
		var ce *ConfigError
		require.False(t, errors.As(err, &ce), "a short stream blamed on a field: %v", err)
	})
	t.Run("explicit deleted id must be a prefix insert", func(t *testing.T) {
		c := smallConfig(stream.KindQuadratic, ModeRecent, 1)
		c.Deleted = []int64{61} // t_del = 60
		_, err := Run(context.Background(), ExperimentBenchmark, c, Options{})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "Deleted", ce.Field, "field of the ConfigError")
	})
}

func TestDefaultGrid(t *testing.T) {
	g := DefaultGrid()
	// spec §6: 2 kinds × 3 τ × 3 modes × 2 κ × 3 seeds.
	require.Equal(t, 108, len(g.Configs), "configurations")
	ids := map[string]bool{}
	for i, c := range g.Configs {
		require.NoError(t, c.Validate(), "configuration %d", i)
		require.False(t, ids[c.ID()], "duplicate configuration %s", c.ID())
		ids[c.ID()] = true
		if c.Stream.T != Exp2T || c.TDel != Exp2TDel || c.Horizon != Exp2Horizon || c.Probes != DefaultProbes ||
			c.Stream.D != DefaultDim || c.Stream.NoDrift {
			t.Fatalf("configuration %d (%s) is not at the paper's sizes: %+v", i, c.ID(), c)
		}
	}
	// The documented order: seed innermost, then κ, mode, τ, kind.
	tests := []struct {
		i    int
		want string
	}{
		{0, "quadratic-tau5-recent-kappa10-seed1"},
		{1, "quadratic-tau5-recent-kappa10-seed2"},
		{3, "quadratic-tau5-recent-kappa100-seed1"},
		{6, "quadratic-tau5-random-kappa10-seed1"},
		{18, "quadratic-tau10-recent-kappa10-seed1"},
		{54, "logistic-tau5-recent-kappa10-seed1"},
		{107, "logistic-tau20-high-gradient-kappa100-seed3"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, g.Configs[tt.i].ID(), "configuration %d", tt.i)
		})
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr bool
	}{
		{"", Shard{}, false},
		{"0/1", Shard{0, 1}, false},
		{"3/4", Shard{3, 4}, false},
		{"4/4", Shard{}, true},
		{"-1/4", Shard{}, true},
		{"1/0", Shard{}, true},
		{"1", Shard{}, true},
		{"a/b", Shard{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrShard, "ParseShard(%q)", tt.in)
			} else {
				require.NoError(t, err, "ParseShard(%q)", tt.in)
			}
			assert.Equal(t, tt.want, got, "ParseShard(%q)", tt.in)
		})
	}
	t.Run("shards partition the grid", func(t *testing.T) {
		const n, total = 3, 10
		var all []int
		for k := range n {
			all = append(all, Shard{k, n}.Indices(total)...)
		}
		slices.Sort(all)
		want := make([]int, total)
		for i := range want {
			want[i] = i
		}
		require.Equal(t, want, all, "union of shards, want 0..total−1 once each")
	})
}

// encode returns the record's JSON.
func encode(t *testing.T, r *Record) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, r.WriteJSON(&b))
	return b.Bytes()
}

func TestRecordRoundTrip(t *testing.T) {
	r := mustRun(t, smallConfig(stream.KindLogistic, ModeRandom, 3), Options{KeepSeries: true})
	b := encode(t, r)
	back, err := ReadRecord(bytes.NewReader(b))
	require.NoError(t, err)
	if b2 := encode(t, back); !bytes.Equal(b, b2) {
		t.Fatal("record changed through a JSON round trip")
	}
	// Bit-exact floats, NaN (undefined D_upd) included.
	for i, m := range back.Methods {
		for k, v := range m.Series.Dupd {
			w := r.Methods[i].Series.Dupd[k]
			if math.Float64bits(v) != math.Float64bits(w) && !(math.IsNaN(v) && math.IsNaN(w)) {
				t.Fatalf("%s D_upd(%d): %v after round trip, want %v", m.Name, k, v, w)
			}
		}
	}
	t.Run("rejects unknown fields and formats", func(t *testing.T) {
		bad := bytes.Replace(b, []byte(`"format"`), []byte(`"formatx"`), 1)
		_, err := ReadRecord(bytes.NewReader(bad))
		assert.ErrorIs(t, err, ErrRecord, "unknown field")
		// The renaming above also loses the format; an extra field beside a
		// valid format must be refused on its own.
		bad = bytes.Replace(b, []byte(`{"format"`), []byte(`{"extra":1,"format"`), 1)
		require.NotEqual(t, b, bad, "test setup: the record does not start with its format")
		_, err = ReadRecord(bytes.NewReader(bad))
		assert.ErrorIs(t, err, ErrRecord, "unknown field beside a valid format")
		bad = bytes.Replace(b, []byte(RecordFormat), []byte("unlearn-run/v0"), 1)
		_, err = ReadRecord(bytes.NewReader(bad))
		assert.ErrorIs(t, err, ErrRecord, "other format")
		_, err = ReadRecord(bytes.NewReader(append(append([]byte(nil), b...), ']')))
		assert.ErrorIs(t, err, ErrRecord, "trailing bracket")
	})
}

func TestNumJSON(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		json string
	}{
		{"NaN is null", math.NaN(), "null"},
		{"+Inf", math.Inf(1), `"+Inf"`},
		{"-Inf", math.Inf(-1), `"-Inf"`},
		{"tiny", 4e-300, "4e-300"},
		{"plain", 0.1, "0.1"},
		{"zero", 0, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Num(tt.v).MarshalJSON()
			require.NoError(t, err, "MarshalJSON")
			require.Equal(t, tt.json, string(b), "MarshalJSON")
			var back Num
			require.NoError(t, back.UnmarshalJSON(b))
			if math.Float64bits(float64(back)) != math.Float64bits(tt.v) && !(math.IsNaN(tt.v) && math.IsNaN(float64(back))) {
				t.Errorf("round trip %v → %v", tt.v, back)
			}
		})
	}
}

func TestSeriesCSV(t *testing.T) {
	c := smallConfig(stream.KindQuadratic, ModeRecent, 1)
	c.Horizon = 3
	r := mustRun(t, c, Options{KeepSeries: true})
	var b bytes.Buffer
	require.NoError(t, r.WriteSeriesCSV(&b))
	lines := bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	// A header and (H+1) rows per method.
	require.Equal(t, 1+len(r.Methods)*(c.Horizon+1), len(lines), "lines: a header and H+1 rows per method")
	assert.Equal(t, "method,k,E_w,E_Z,E_Theta,D_upd,M_direct", string(lines[0]), "header")
	assert.Equal(t, "oracle,0,0,0,0,0,0", string(lines[1]), "first row, want the oracle's zeros")
	r.DropSeries()
	assert.ErrorIs(t, r.WriteSeriesCSV(&b), ErrRecord, "WriteSeriesCSV without series")
}

// runQuick runs the quick grid with the given options and zeroed timing.
func runQuick(t *testing.T, opt Options) *Results {
	t.Helper()
	opt.ZeroTiming = true
	res, err := RunGrid(context.Background(), QuickGrid(), opt)
	require.NoError(t, err)
	return res
}

func tablesMarkdown(t *testing.T, res *Results) []byte {
	t.Helper()
	tabs, err := res.Tables(TableOptions{})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteTablesMarkdown(&b, tabs))
	return b.Bytes()
}

func TestGridDeterminismAndShards(t *testing.T) {
	one := runQuick(t, Options{Workers: 1})
	two := runQuick(t, Options{Workers: 2})
	require.Equal(t, len(QuickGrid().Configs), len(one.Records), "records")
	t.Run("1 vs 2 workers give identical records", func(t *testing.T) {
		for i := range one.Records {
			if !bytes.Equal(encode(t, one.Records[i]), encode(t, two.Records[i])) {
				t.Fatalf("record %d differs between 1 and 2 workers", i)
			}
		}
	})
	var parts []*Results
	for k := range 3 {
		parts = append(parts, runQuick(t, Options{Workers: 2, Shard: Shard{k, 3}}))
	}
	t.Run("merged shards equal the single run", func(t *testing.T) {
		// Merge in a scrambled order: the result must not depend on it.
		merged, err := Merge([]*Results{parts[2], parts[0], parts[1]}, false)
		require.NoError(t, err)
		if !bytes.Equal(tablesMarkdown(t, merged), tablesMarkdown(t, one)) {
			t.Fatal("tables of the merged shards differ from the single run's")
		}
		for i := range one.Records {
			if !bytes.Equal(encode(t, one.Records[i]), encode(t, merged.Records[i])) {
				t.Fatalf("record %d differs after merging", i)
			}
		}
		assert.Equal(t, one.Manifest.Hash, merged.Manifest.Hash, "merged manifest: hash")
		assert.Equal(t, one.Manifest.Indices, merged.Manifest.Indices, "merged manifest: indices")
	})
	t.Run("merge refuses overlap, incompleteness and other grids", func(t *testing.T) {
		tests := []struct {
			name  string
			parts []*Results
			want  error
		}{
			{"overlap", []*Results{parts[0], parts[1], parts[2], parts[1]}, ErrOverlap},
			{"incomplete", []*Results{parts[0], parts[2]}, ErrIncomplete},
			{"other grid", []*Results{parts[0], {Manifest: Manifest{Hash: "x", Methods: one.Manifest.Methods}}}, ErrIncompatible},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := Merge(tt.parts, false)
				require.ErrorIs(t, err, tt.want, "Merge")
			})
		}
		_, err := Merge([]*Results{parts[0], parts[2]}, true)
		assert.NoError(t, err, "Merge with allowPartial")
	})
}

func TestWriteResultsAtomic(t *testing.T) {
	res := runQuick(t, Options{Shard: Shard{0, 4}})
	dir := filepath.Join(t.TempDir(), "results")
	require.NoError(t, WriteResults(dir, res, TableOptions{}))
	back, err := ReadResults(dir)
	require.NoError(t, err)
	if !bytes.Equal(tablesMarkdown(t, back), tablesMarkdown(t, res)) {
		t.Error("tables differ after writing and reading the folder")
	}
	md, err := os.ReadFile(filepath.Join(dir, "tables.md"))
	assert.NoError(t, err)
	if !bytes.Equal(md, tablesMarkdown(t, res)) {
		t.Error("tables.md differs from the tables")
	}
	for _, f := range []string{"manifest.json", "summaries.csv", "tables/global.csv", "tables/ratios.csv",
		"tables/horizon.csv", "tables/mode.csv", "tables/stream.csv"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	t.Run("summaries.csv has one row per configuration and method", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, "summaries.csv"))
		require.NoError(t, err)
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		require.Equal(t, 1+len(res.Records)*len(res.Manifest.Methods), len(lines), "lines: a header and a row per configuration and method")
		assert.True(t, bytes.HasPrefix(lines[0], []byte("index,id,kind,d,T,kappa,seed,")), "header %q", lines[0])
		assert.Contains(t, string(lines[1]), ",oracle,Oracle replay,", "the first row must be the first record's oracle")
	})
	t.Run("replaces a results folder", func(t *testing.T) {
		require.NoError(t, WriteResults(dir, res, TableOptions{}))
		ents, err := os.ReadDir(filepath.Dir(dir))
		require.NoError(t, err)
		assert.Len(t, ents, 1, "entries beside the results, want only the folder")
	})
	t.Run("refuses to replace another folder", func(t *testing.T) {
		other := t.TempDir()
		keep := filepath.Join(other, "precious.txt")
		require.NoError(t, os.WriteFile(keep, []byte("x"), 0o600))
		require.ErrorIs(t, WriteResults(other, res, TableOptions{}), ErrConfig, "WriteResults over a non-results folder")
		require.FileExists(t, keep, "the folder's content was touched")
	})
	t.Run("a failing write leaves the previous folder and no temporary", func(t *testing.T) {
		before, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
		errBoom := errors.New("boom")
		err := replaceDir(dir, func(tmp string) error {
			if err := os.WriteFile(filepath.Join(tmp, "manifest.json"), []byte("half"), 0o600); err != nil {
				return err
			}
			return errBoom
		})
		require.ErrorIs(t, err, errBoom, "replaceDir must return the fill error")
		after, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if !bytes.Equal(before, after) {
			t.Error("the previous results were modified")
		}
		ents, err := os.ReadDir(filepath.Dir(dir))
		require.NoError(t, err)
		assert.Len(t, ents, 1, "entries beside the results, want only the folder")
	})
	t.Run("a folder without manifest is not results", func(t *testing.T) {
		_, err := ReadResults(t.TempDir())
		assert.ErrorIs(t, err, ErrRecord, "ReadResults")
	})
}

func TestRunGridCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RunGrid(ctx, QuickGrid(), Options{})
	require.ErrorIs(t, err, context.Canceled, "RunGrid on a cancelled context")
}

func TestExperiment1Decay(t *testing.T) {
	axes := GridAxes{
		Kinds: []stream.Kind{stream.KindQuadratic, stream.KindLogistic},
		Taus:  []int{3, 6}, Modes: []string{ModeRecent, ModeOld}, Kappas: []float64{10}, Seeds: []uint64{1},
	}
	base := Experiment1()
	base.Stream.D, base.Stream.T, base.TDel, base.Horizon, base.Probes = 5, 200, 80, 60, 4
	res, err := RunGrid(context.Background(), axes.Grid("decay-test", ExperimentDecay, base), Options{KeepSeries: true})
	require.NoError(t, err)
	checked := 0
	for _, r := range res.Records {
		t.Run(r.ID, func(t *testing.T) {
			require.Equal(t, []string{BaselineName}, r.MethodNames(), "Experiment 1 runs the no-op alone")
			m := r.Methods[0]
			if r.Config.Mode == ModeRecent && m.Skipped == 0 {
				checked++
				// The contaminated pairs come from the last |U| inserts of the
				// prefix; with no pair skipped afterwards, τ pushes evict them
				// all (paper, Proposition "Direct memory is bounded").
				assert.GreaterOrEqual(t, m.Summary.Clearance, 0, "clearance time, want within [0, τ]")
				assert.LessOrEqual(t, m.Summary.Clearance, r.Config.Tau, "clearance time, want within [0, τ]")
				assert.NotZero(t, m.Summary.DirectMass, "recent deletions left no contaminated pair at k = 0")
			}
			if r.Config.Mode == ModeOld {
				assert.Zero(t, m.Summary.DirectMass, "old deletions: M_direct(0), want 0 (their pairs left memory long ago)")
			}
			// t_del + H < T here: D_upd is defined at every step, the last
			// one included (the next insert after state H exists).
			for k, v := range m.Series.Dupd {
				if math.IsNaN(v) {
					t.Fatalf("D_upd(%d) undefined although e_{t_del+H+1} is an insert", k)
				}
			}
		})
	}
	assert.NotZero(t, checked, "no recent-deletion run without skipped pairs: the clearance bound was never checked")
	tab := DecayTable(res.Records)
	assert.Equal(t, len(res.Records), len(tab.Rows), "decay table rows")
}

func TestRunGridRejects(t *testing.T) {
	tests := []struct {
		name string
		grid Grid
		opt  Options
		want error
	}{
		{"a shard selecting nothing", QuickGrid(), Options{Shard: Shard{K: 9, N: 10}}, ErrShard},
		{"an invalid shard", QuickGrid(), Options{Shard: Shard{K: 2, N: 2}}, ErrShard},
		{"an empty grid", Grid{Name: "empty"}, Options{}, ErrConfig},
		{"duplicate operator names", QuickGrid(), Options{Operators: func(int) []unlearn.Operator {
			return []unlearn.Operator{unlearn.NoOp(), unlearn.NoOp()}
		}}, ErrConfig},
		{"an invalid configuration", Grid{Name: "bad", Configs: []Config{{Tau: -1}}}, Options{}, ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RunGrid(context.Background(), tt.grid, tt.opt)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// TestCustomOperators checks that a caller's operator list is run and
// tabulated like the paper's.
func TestCustomOperators(t *testing.T) {
	ops := func(tau int) []unlearn.Operator {
		return []unlearn.Operator{unlearn.Oracle(), unlearn.NoOp(), unlearn.WindowReplay(2*tau, "window-2tau", "Window replay 2τ")}
	}
	res, err := RunGrid(context.Background(), QuickGrid(), Options{Operators: ops, ZeroTiming: true})
	require.NoError(t, err)
	require.Equal(t, []string{OracleName, BaselineName, "window-2tau"}, res.Manifest.Methods, "methods")
	tabs, err := res.Tables(TableOptions{})
	require.NoError(t, err)
	// Recent deletions (half of the quick grid) lie inside the 2τ window.
	equalFloat(t, "exact rate", cell(t, tableByName(t, tabs, "ratios"), "Exact recovery rate", "Window replay 2τ"), 0.5)
}

func TestKeepSeriesOf(t *testing.T) {
	// Index 1 of the quick grid keeps its series, every other record drops
	// them; the choice is by grid index, so a shard holding index 1 keeps
	// the same series as the single run.
	keep := []int{1, 99} // 99 is outside the grid: ignored
	one := runQuick(t, Options{Workers: 2, KeepSeriesOf: keep})
	for _, r := range one.Records {
		want := r.Index == 1
		for _, m := range r.Methods {
			require.Equal(t, want, m.Series != nil, "record %d, method %s: series kept", r.Index, m.Name)
		}
	}
	s := one.Records[1].Methods[0].Series
	require.Equal(t, one.Records[1].Config.Horizon+1, len(s.ETheta), "steps of the kept series, want H+1")
	shard := runQuick(t, Options{Workers: 1, Shard: Shard{1, 3}, KeepSeriesOf: keep})
	require.Equal(t, 1, shard.Records[0].Index, "first index of shard 1/3")
	if !bytes.Equal(encode(t, shard.Records[0]), encode(t, one.Records[1])) {
		t.Fatal("record 1 of shard 1/3 differs from the single run's")
	}
}
