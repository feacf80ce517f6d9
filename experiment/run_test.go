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
	if err != nil {
		t.Fatalf("Run(%s): %v", c.ID(), err)
	}
	return r
}

func method(t *testing.T, r *Record, name string) *MethodResult {
	t.Helper()
	m := r.Method(name)
	if m == nil {
		t.Fatalf("record %s has no method %q (has %v)", r.ID, name, r.MethodNames())
	}
	return m
}

func TestExperiment2SmallConfig(t *testing.T) {
	for _, kind := range []stream.Kind{stream.KindQuadratic, stream.KindLogistic} {
		t.Run(string(kind), func(t *testing.T) {
			c := smallConfig(kind, ModeRecent, 1)
			r := mustRun(t, c, Options{KeepSeries: true})
			if len(r.U) != DefaultCount {
				t.Fatalf("|U| = %d, want %d", len(r.U), DefaultCount)
			}
			// Recent mode takes the last |U| inserts of the prefix (SPEC §4);
			// the generators give event t the id t (SPEC §8).
			if want := []int64{56, 57, 58, 59, 60}; !slices.Equal(r.U, want) {
				t.Errorf("U = %v, want %v", r.U, want)
			}
			if len(r.Probes) != c.Probes {
				t.Errorf("%d probes, want %d", len(r.Probes), c.Probes)
			}
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
						t.Fatalf("oracle at k = %d: E_w = %g, E_Z = %g, E_Θ = %g; want 0 (SPEC §8: replay is bit-exact)",
							k, s.Ew[k], s.EZ[k], s.ETheta[k])
					}
				}
				if !method(t, r, OracleName).Summary.Exact {
					t.Error("oracle not flagged as exact recovery")
				}
			})
			for _, name := range []string{"window-tau", "window-5tau"} {
				t.Run(name+" recovers recent deletions exactly", func(t *testing.T) {
					// |U| = 5 ≤ τ = 5: U lies inside both windows (SPEC §5).
					m := method(t, r, name)
					if !m.Summary.Exact {
						t.Errorf("%s: not exact; AUC = %g", name, m.Summary.AUC)
					}
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
				// t_del + H = T: no insert follows state H (SPEC §8).
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
	// A stream file whose prefix deletes id 3: id 3 joins U (SPEC §8) and
	// the counterfactual is the prefix without it.
	h, err := StreamSpec{Kind: stream.KindQuadratic, D: 4, T: 80, Seed: 2}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	events := slices.Clone(h.Events)
	events = slices.Insert(events, 10, stream.DeleteEvent(3))
	h2, err := stream.NewHistory(h.Header, events)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{TDel: 40, Horizon: 41, Tau: 4, Probes: 4, Deleted: []int64{20, 30}}
	r, err := RunHistory(context.Background(), h2, Source{Kind: "quadratic", D: 4, T: len(events)}, c, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{3, 20, 30}; !slices.Equal(r.U, want) {
		t.Errorf("U = %v, want %v", r.U, want)
	}
	if r.Config.Mode != ModeExplicit {
		t.Errorf("mode %q, want %q", r.Config.Mode, ModeExplicit)
	}
	if m := method(t, r, OracleName); !m.Summary.Exact {
		t.Errorf("oracle not exact with a prefix delete; AUC %g", m.Summary.AUC)
	}
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
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) || ce.Field != tt.field {
				t.Fatalf("Validate: %v, want a ConfigError on %s", err, tt.field)
			}
		})
	}
	t.Run("resolve leaves the caller's struct alone", func(t *testing.T) {
		var c Config
		_ = c.Validate()
		if c.Tau != 0 || c.LambdaZ != nil || c.ProbeSeed != nil {
			t.Fatalf("Validate wrote defaults into the caller's Config: %+v", c)
		}
	})
	t.Run("explicit deleted id must be a prefix insert", func(t *testing.T) {
		c := smallConfig(stream.KindQuadratic, ModeRecent, 1)
		c.Deleted = []int64{61} // t_del = 60
		_, err := Run(context.Background(), ExperimentBenchmark, c, Options{})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Deleted" {
			t.Fatalf("Run: %v, want a ConfigError on Deleted", err)
		}
	})
}

func TestDefaultGrid(t *testing.T) {
	g := DefaultGrid()
	// SPEC §6: 2 kinds × 3 τ × 3 modes × 2 κ × 3 seeds.
	if len(g.Configs) != 108 {
		t.Fatalf("%d configurations, want 108", len(g.Configs))
	}
	ids := map[string]bool{}
	for i, c := range g.Configs {
		if err := c.Validate(); err != nil {
			t.Fatalf("configuration %d: %v", i, err)
		}
		if ids[c.ID()] {
			t.Fatalf("duplicate configuration %s", c.ID())
		}
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
			if got := g.Configs[tt.i].ID(); got != tt.want {
				t.Errorf("configuration %d = %s, want %s", tt.i, got, tt.want)
			}
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
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrShard)) {
				t.Fatalf("ParseShard(%q) error = %v, want error %v (ErrShard)", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseShard(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	t.Run("shards partition the grid", func(t *testing.T) {
		const n, total = 3, 10
		var all []int
		for k := range n {
			all = append(all, Shard{k, n}.Indices(total)...)
		}
		slices.Sort(all)
		for i, v := range all {
			if v != i {
				t.Fatalf("union of shards = %v, want 0..%d once each", all, total-1)
			}
		}
		if len(all) != total {
			t.Fatalf("union has %d indices, want %d", len(all), total)
		}
	})
}

// encode returns the record's JSON.
func encode(t *testing.T, r *Record) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRecordRoundTrip(t *testing.T) {
	r := mustRun(t, smallConfig(stream.KindLogistic, ModeRandom, 3), Options{KeepSeries: true})
	b := encode(t, r)
	back, err := ReadRecord(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
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
		if _, err := ReadRecord(bytes.NewReader(bad)); !errors.Is(err, ErrRecord) {
			t.Errorf("unknown field: err = %v, want ErrRecord", err)
		}
		bad = bytes.Replace(b, []byte(RecordFormat), []byte("unlearn-run/v0"), 1)
		if _, err := ReadRecord(bytes.NewReader(bad)); !errors.Is(err, ErrRecord) {
			t.Errorf("other format: err = %v, want ErrRecord", err)
		}
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
			if err != nil || string(b) != tt.json {
				t.Fatalf("MarshalJSON = %s, %v; want %s", b, err, tt.json)
			}
			var back Num
			if err := back.UnmarshalJSON(b); err != nil {
				t.Fatal(err)
			}
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
	if err := r.WriteSeriesCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	// A header and (H+1) rows per method.
	if want := 1 + len(r.Methods)*(c.Horizon+1); len(lines) != want {
		t.Fatalf("%d lines, want %d", len(lines), want)
	}
	if got := string(lines[0]); got != "method,k,E_w,E_Z,E_Theta,D_upd,M_direct" {
		t.Errorf("header %q", got)
	}
	if got := string(lines[1]); got != "oracle,0,0,0,0,0,0" {
		t.Errorf("first row %q, want the oracle's zeros", got)
	}
	r.DropSeries()
	if err := r.WriteSeriesCSV(&b); !errors.Is(err, ErrRecord) {
		t.Errorf("WriteSeriesCSV without series: %v, want ErrRecord", err)
	}
}

// runQuick runs the quick grid with the given options and zeroed timing.
func runQuick(t *testing.T, opt Options) *Results {
	t.Helper()
	opt.ZeroTiming = true
	res, err := RunGrid(context.Background(), QuickGrid(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func tablesMarkdown(t *testing.T, res *Results) []byte {
	t.Helper()
	tabs, err := res.Tables(TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTablesMarkdown(&b, tabs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGridDeterminismAndShards(t *testing.T) {
	one := runQuick(t, Options{Workers: 1})
	two := runQuick(t, Options{Workers: 2})
	if len(one.Records) != len(QuickGrid().Configs) {
		t.Fatalf("%d records, want %d", len(one.Records), len(QuickGrid().Configs))
	}
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
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tablesMarkdown(t, merged), tablesMarkdown(t, one)) {
			t.Fatal("tables of the merged shards differ from the single run's")
		}
		for i := range one.Records {
			if !bytes.Equal(encode(t, one.Records[i]), encode(t, merged.Records[i])) {
				t.Fatalf("record %d differs after merging", i)
			}
		}
		if merged.Manifest.Hash != one.Manifest.Hash || !slices.Equal(merged.Manifest.Indices, one.Manifest.Indices) {
			t.Errorf("merged manifest %+v differs from the single run's %+v", merged.Manifest, one.Manifest)
		}
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
				if _, err := Merge(tt.parts, false); !errors.Is(err, tt.want) {
					t.Fatalf("Merge: %v, want %v", err, tt.want)
				}
			})
		}
		if _, err := Merge([]*Results{parts[0], parts[2]}, true); err != nil {
			t.Errorf("Merge with allowPartial: %v", err)
		}
	})
}

func TestWriteResultsAtomic(t *testing.T) {
	res := runQuick(t, Options{Shard: Shard{0, 4}})
	dir := filepath.Join(t.TempDir(), "results")
	if err := WriteResults(dir, res, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tablesMarkdown(t, back), tablesMarkdown(t, res)) {
		t.Error("tables differ after writing and reading the folder")
	}
	md, err := os.ReadFile(filepath.Join(dir, "tables.md"))
	if err != nil || !bytes.Equal(md, tablesMarkdown(t, res)) {
		t.Errorf("tables.md differs from the tables (err %v)", err)
	}
	for _, f := range []string{"manifest.json", "summaries.csv", "tables/global.csv", "tables/ratios.csv",
		"tables/horizon.csv", "tables/mode.csv", "tables/stream.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	t.Run("summaries.csv has one row per configuration and method", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, "summaries.csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		if want := 1 + len(res.Records)*len(res.Manifest.Methods); len(lines) != want {
			t.Fatalf("%d lines, want %d", len(lines), want)
		}
		if !bytes.HasPrefix(lines[0], []byte("index,id,kind,d,T,kappa,seed,")) {
			t.Errorf("header %q", lines[0])
		}
		if !bytes.Contains(lines[1], []byte(",oracle,Oracle replay,")) {
			t.Errorf("first row %q is not the first record's oracle", lines[1])
		}
	})
	t.Run("replaces a results folder", func(t *testing.T) {
		if err := WriteResults(dir, res, TableOptions{}); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(filepath.Dir(dir))
		if len(ents) != 1 {
			t.Errorf("left %d entries beside the results, want only the folder", len(ents))
		}
	})
	t.Run("refuses to replace another folder", func(t *testing.T) {
		other := t.TempDir()
		keep := filepath.Join(other, "precious.txt")
		if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := WriteResults(other, res, TableOptions{}); !errors.Is(err, ErrConfig) {
			t.Fatalf("WriteResults over a non-results folder: %v, want ErrConfig", err)
		}
		if _, err := os.Stat(keep); err != nil {
			t.Fatal("the folder's content was touched")
		}
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
		if !errors.Is(err, errBoom) {
			t.Fatalf("replaceDir: %v, want the fill error", err)
		}
		after, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if !bytes.Equal(before, after) {
			t.Error("the previous results were modified")
		}
		ents, _ := os.ReadDir(filepath.Dir(dir))
		if len(ents) != 1 {
			t.Errorf("left %d entries beside the results, want only the folder", len(ents))
		}
	})
	t.Run("a folder without manifest is not results", func(t *testing.T) {
		if _, err := ReadResults(t.TempDir()); !errors.Is(err, ErrRecord) {
			t.Errorf("ReadResults: %v, want ErrRecord", err)
		}
	})
}

func TestRunGridCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunGrid(ctx, QuickGrid(), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunGrid on a cancelled context: %v, want context.Canceled", err)
	}
}

func TestExperiment1Decay(t *testing.T) {
	axes := GridAxes{
		Kinds: []stream.Kind{stream.KindQuadratic, stream.KindLogistic},
		Taus:  []int{3, 6}, Modes: []string{ModeRecent, ModeOld}, Kappas: []float64{10}, Seeds: []uint64{1},
	}
	base := Experiment1()
	base.Stream.D, base.Stream.T, base.TDel, base.Horizon, base.Probes = 5, 200, 80, 60, 4
	res, err := RunGrid(context.Background(), axes.Grid("decay-test", ExperimentDecay, base), Options{KeepSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range res.Records {
		t.Run(r.ID, func(t *testing.T) {
			if names := r.MethodNames(); !slices.Equal(names, []string{BaselineName}) {
				t.Fatalf("Experiment 1 ran %v, want no-op alone", names)
			}
			m := r.Methods[0]
			if r.Config.Mode == ModeRecent && m.Skipped == 0 {
				checked++
				// The contaminated pairs come from the last |U| inserts of the
				// prefix; with no pair skipped afterwards, τ pushes evict them
				// all (paper, Proposition "Direct memory is bounded").
				if m.Summary.Clearance < 0 || m.Summary.Clearance > r.Config.Tau {
					t.Errorf("clearance time %d, want within [0, τ = %d]", m.Summary.Clearance, r.Config.Tau)
				}
				if m.Summary.DirectMass == 0 {
					t.Error("recent deletions left no contaminated pair at k = 0")
				}
			}
			if r.Config.Mode == ModeOld && m.Summary.DirectMass != 0 {
				t.Errorf("old deletions: M_direct(0) = %d, want 0 (their pairs left memory long ago)", m.Summary.DirectMass)
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
	if checked == 0 {
		t.Error("no recent-deletion run without skipped pairs: the clearance bound was never checked")
	}
	tab := DecayTable(res.Records)
	if len(tab.Rows) != len(res.Records) {
		t.Errorf("decay table has %d rows, want %d", len(tab.Rows), len(res.Records))
	}
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
			if _, err := RunGrid(context.Background(), tt.grid, tt.opt); !errors.Is(err, tt.want) {
				t.Fatalf("RunGrid: %v, want %v", err, tt.want)
			}
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
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Manifest.Methods; !slices.Equal(got, []string{OracleName, BaselineName, "window-2tau"}) {
		t.Fatalf("methods %v", got)
	}
	tabs, err := res.Tables(TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
			if got := m.Series != nil; got != want {
				t.Fatalf("record %d, method %s: series kept = %v, want %v", r.Index, m.Name, got, want)
			}
		}
	}
	if s := one.Records[1].Methods[0].Series; len(s.ETheta) != one.Records[1].Config.Horizon+1 {
		t.Fatalf("kept series has %d steps, want H+1 = %d", len(s.ETheta), one.Records[1].Config.Horizon+1)
	}
	shard := runQuick(t, Options{Workers: 1, Shard: Shard{1, 3}, KeepSeriesOf: keep})
	if shard.Records[0].Index != 1 {
		t.Fatalf("shard 1/3 starts at index %d, want 1", shard.Records[0].Index)
	}
	if !bytes.Equal(encode(t, shard.Records[0]), encode(t, one.Records[1])) {
		t.Fatal("record 1 of shard 1/3 differs from the single run's")
	}
}
