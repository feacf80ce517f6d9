package report

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
)

// figureByID returns the figure of the set with the given ID.
func figureByID(t *testing.T, set *Set, id string) *Figure {
	t.Helper()
	for _, f := range set.Figures {
		if f.ID == id {
			return f
		}
	}
	ids := make([]string, len(set.Figures))
	for i, f := range set.Figures {
		ids[i] = f.ID
	}
	t.Fatalf("no figure %q (have %v, omitted %v)", id, ids, set.Omitted)
	return nil
}

func mustFigures(t *testing.T, recs []*experiment.Record) *Set {
	t.Helper()
	set, err := Figures(recs, Options{})
	require.NoError(t, err)
	return set
}

func TestFiguresGolden(t *testing.T) {
	r := fixed(t)
	tests := []struct {
		name string
		recs []*experiment.Record
		ids  []string
	}{
		{"decay", r.decay.Records, []string{
			"decay-rates-quadratic", "decay-rates-logistic", "decay-memory-quadratic", "decay-memory-logistic",
			"decay-decomposition-quadratic", "decay-decomposition-logistic", "decay-heatmap-quadratic",
			"decay-heatmap-logistic", "decay-modes-quadratic", "decay-modes-logistic", "decay-mode-summary",
			"decay-mass-quadratic", "decay-mass-logistic"}},
		{"bench", r.bench.Records, []string{
			"bench-trajectories", "bench-efficiency-quadratic", "bench-efficiency-logistic", "bench-modes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := mustFigures(t, tt.recs)
			var ids []string
			for _, f := range set.Figures {
				ids = append(ids, f.ID)
				assert.NoError(t, f.Validate(), "figure %s", f.ID)
			}
			require.Equal(t, tt.ids, ids, "figures (omitted: %v)", set.Omitted)
			checkGolden(t, "figures-"+tt.name+".golden.json", set)
		})
	}
}

// TestFigureData checks properties of the figure data against the records
// they come from, independently of the golden files.
func TestFigureData(t *testing.T) {
	r := fixed(t)
	decay := mustFigures(t, r.decay.Records)
	bench := mustFigures(t, r.bench.Records)

	t.Run("decay rates are the records' fits", func(t *testing.T) {
		f := figureByID(t, decay, "decay-rates-quadratic")
		// One panel per κ {10, 100}; reference mode recent; one seed, so
		// the median is the record's own value.
		require.Len(t, f.Panels, 2, "panels, want one per κ")
		for pi, kappa := range []float64{10, 100} {
			require.Len(t, f.Panels[pi].Series, 3, "κ = %g: series, want one per phase", kappa)
			for ph, s := range f.Panels[pi].Series {
				for i, tau := range []int{2, 4} {
					rec := findRecord(t, r.decay.Records, "quadratic", tau, experiment.ModeRecent, kappa)
					want := math.NaN() // no fit: the figure has a gap
					if rho := rec.Methods[0].Summary.Rho[ph]; rho != nil {
						want = *rho
					}
					if got := s.Y[i]; got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
						t.Errorf("κ = %g, phase %d, τ = %d: ρ̂ %v, want the record's %v", kappa, ph+1, tau, got, want)
					}
				}
			}
		}
	})
	t.Run("memory figure marks τ and 2τ", func(t *testing.T) {
		f := figureByID(t, decay, "decay-memory-quadratic")
		p := f.Panels[0]
		require.Equal(t, []string{"τ = 2", "τ = 4"}, seriesNames(p), "series")
		var xs []float64
		for _, m := range p.Marks {
			assert.True(t, m.Vertical, "mark %+v is not vertical", m)
			xs = append(xs, m.Value)
		}
		if want := []float64{2, 4, 4, 8}; !slices.Equal(xs, want) {
			t.Errorf("marks at %v, want τ, 2τ for each τ: %v", xs, want)
		}
		rec := findRecord(t, r.decay.Records, "quadratic", 2, experiment.ModeRecent, 10)
		s := p.Series[0]
		require.Equal(t, rec.Config.Horizon+1, len(s.Y), "points, want H+1 (no thinning below MaxPoints)")
		for k, v := range s.Y {
			want := rec.Methods[0].Series.ETheta[k]
			if !(want > 0) {
				if !math.IsNaN(v) {
					t.Errorf("k = %d: E_Θ = %v is not positive but drawn as %v", k, want, v)
				}
				continue
			}
			if v != want {
				t.Errorf("k = %d: %v, want the record's E_Θ %v", k, v, want)
			}
		}
	})
	t.Run("mass figure marks each clearance time", func(t *testing.T) {
		f := figureByID(t, decay, "decay-mass-logistic")
		for i, tau := range []int{2, 4} {
			rec := findRecord(t, r.decay.Records, "logistic", tau, experiment.ModeRecent, 10)
			c := rec.Methods[0].Summary.Clearance
			require.GreaterOrEqual(t, c, 0, "τ = %d: never cleared; the fixed run should clear within H", tau)
			m := f.Panels[0].Marks[i]
			assert.True(t, m.Vertical, "τ = %d: mark %+v, want a vertical line at the clearance time", tau, m)
			assert.Empty(t, m.Label, "τ = %d: the clearance mark has no label (labels collided); the legend has it", tau)
			assert.Equal(t, fmt.Sprintf("τ = %d, ĥ = %d", tau, c), f.Panels[0].Series[i].Name, "τ = %d: legend name", tau)
			if m.Value != float64(c) {
				t.Errorf("τ = %d: mark %+v, want a vertical line at the clearance time %d", tau, m, c)
			}
			if s := f.Panels[0].Series[i]; s.Y[c] != 0 || (c > 0 && s.Y[c-1] == 0) {
				t.Errorf("τ = %d: M_direct(%d) = %v, M_direct(%d) = %v; the clearance time is the first zero", tau, c, s.Y[c], c-1, s.Y[max(c-1, 0)])
			}
		}
	})
	t.Run("heat map cells are median final errors", func(t *testing.T) {
		f := figureByID(t, decay, "decay-heatmap-quadratic")
		h := f.Panels[0].Heat
		for i, kappa := range []float64{10, 100} {
			for j, tau := range []int{2, 4} {
				rec := findRecord(t, r.decay.Records, "quadratic", tau, experiment.ModeRecent, kappa)
				if got, want := h.Z[i][j], math.Log10(rec.Methods[0].Summary.FinalState); got != want {
					t.Errorf("κ = %g, τ = %d: %v, want log10 E_Θ(H) = %v", kappa, tau, got, want)
				}
			}
		}
	})
	t.Run("trajectories come from the reference configuration", func(t *testing.T) {
		f := figureByID(t, bench, "bench-trajectories")
		// τ = 4 is nearer the reference 10 than τ = 2.
		assert.Contains(t, f.Title, "quadratic-tau4-recent-kappa10-seed1",
			"title, want the configuration nearest the reference (quadratic, τ = 4, recent, κ = 10, seed 1)")
		require.Len(t, f.Panels, 2, "panels, want parameter and memory error")
		for _, p := range f.Panels {
			assert.True(t, p.X.Log, "panel %q: linear x; H + 1 = 111 ≥ 100 asks for log x", p.Title)
			require.NotEmpty(t, p.Series, "panel %q: no series; no-op at least is not exact", p.Title)
			for _, s := range p.Series {
				assert.NotEqual(t, "Oracle replay", s.Name, "panel %q draws the oracle, which is 0 at every step", p.Title)
				if s.X[0] != 1 || s.X[len(s.X)-1] != 111 {
					t.Errorf("series %s: x from %v to %v, want k + 1 from 1 to 111", s.Name, s.X[0], s.X[len(s.X)-1])
				}
			}
		}
		assert.Contains(t, f.Caption, "Oracle replay", "the caption must say the oracle is not drawn")
	})
	t.Run("efficiency floors zero AUCs below every positive one", func(t *testing.T) {
		f := figureByID(t, bench, "bench-efficiency-quadratic")
		require.Len(t, f.Panels, 2, "panels; records without timing have no wall-time panel")
		for _, p := range f.Panels {
			floor := math.NaN()
			for _, m := range p.Marks {
				if !m.Vertical {
					floor = m.Value
				}
			}
			if math.IsNaN(floor) {
				t.Fatalf("panel %q: no floor line, yet oracle replay's AUC is 0", p.Title)
			}
			for _, s := range p.Series {
				for k, y := range s.Y {
					if y < floor || y > floor && y < 10*floor {
						t.Errorf("panel %q, %s point %d: AUC %v within a decade of the floor %v", p.Title, s.Name, k, y, floor)
					}
				}
			}
		}
		assert.Contains(t, f.Caption, "wall-time panel is left out", "the caption must say why the wall-time panel is missing")
	})
	t.Run("legend names methods as the tables do", func(t *testing.T) {
		f := figureByID(t, bench, "bench-modes")
		names, _ := f.legendEntries()
		assert.Equal(t, methodLabels(r.bench.Records[0]), names, "legend, want the records' labels")
	})
}

func findRecord(t *testing.T, recs []*experiment.Record, kind string, tau int, mode string, kappa float64) *experiment.Record {
	t.Helper()
	for _, r := range recs {
		k := recordKey(r)
		if k.kind == kind && k.tau == tau && k.mode == mode && k.kappa == kappa {
			return r
		}
	}
	t.Fatalf("no record %s τ=%d %s κ=%g", kind, tau, mode, kappa)
	return nil
}

func seriesNames(p Panel) []string {
	var n []string
	for _, s := range p.Series {
		n = append(n, s.Name)
	}
	return n
}

func TestFiguresErrors(t *testing.T) {
	r := fixed(t)
	other := *r.bench.Records[1]
	other.Methods = other.Methods[:2]
	empty := *r.bench.Records[0]
	empty.Methods = nil
	tests := []struct {
		name string
		recs []*experiment.Record
	}{
		{"no records", nil},
		{"a record without methods", []*experiment.Record{&empty}},
		{"different methods", []*experiment.Record{r.bench.Records[0], &other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Figures(tt.recs, Options{})
			require.ErrorIs(t, err, ErrRecords)
		})
	}
}

func TestFiguresWithoutSeries(t *testing.T) {
	r := fixed(t)
	// Copies without series: summaries-only figures remain, series figures
	// are listed as omitted with the reason.
	var recs []*experiment.Record
	for _, rec := range r.decay.Records {
		c := *rec
		c.Methods = slices.Clone(rec.Methods)
		c.DropSeries()
		recs = append(recs, &c)
	}
	set := mustFigures(t, recs)
	var ids, omitted []string
	for _, f := range set.Figures {
		ids = append(ids, f.ID)
	}
	for _, o := range set.Omitted {
		omitted = append(omitted, o.ID)
		assert.Contains(t, o.Reason, "series", "omission %s: the reason must mention the missing series", o.ID)
	}
	assert.Equal(t, []string{"decay-rates-quadratic", "decay-rates-logistic", "decay-heatmap-quadratic", "decay-heatmap-logistic", "decay-mode-summary"},
		ids, "figures, want the summary figures")
	assert.Equal(t, []string{"decay-memory-quadratic", "decay-memory-logistic", "decay-decomposition-quadratic",
		"decay-decomposition-logistic", "decay-modes-quadratic", "decay-modes-logistic", "decay-mass-quadratic",
		"decay-mass-logistic"}, omitted, "omitted, want the 8 series figures")
}

func TestSeriesConfigs(t *testing.T) {
	tests := []struct {
		name string
		grid experiment.Grid
		ref  Reference
		want []string
	}{
		{"default grid", experiment.DefaultGrid(), Reference{}, []string{"quadratic-tau10-recent-kappa10-seed1"}},
		{"quick grid", experiment.QuickGrid(), Reference{}, []string{"quadratic-tau10-recent-kappa10-seed1"}},
		{"logistic reference", experiment.DefaultGrid(), Reference{Kind: "logistic", Tau: 20, Mode: "random", Kappa: 100},
			[]string{"logistic-tau20-random-kappa100-seed1"}},
		{"decay grids keep all series", experiment.DecayGrid(experiment.DecayAxes()), Reference{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, i := range SeriesConfigs(tt.grid, tt.ref) {
				got = append(got, tt.grid.Configs[i].ID())
			}
			assert.Equal(t, tt.want, got, "SeriesConfigs")
		})
	}
}
