package report

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
)

// fixedTightness is the tightness of small grids: the bench grid of
// fixedRuns (d = 5, T = 170, both kinds, κ 10) and its isotropic
// counterpart (κ = 1), with the certifiable learner. Tests must not modify
// it.
var fixedTightness = sync.OnceValues(func() ([]*experiment.Tightness, error) {
	b := experiment.Experiment2()
	b.Stream.D, b.Stream.T, b.TDel, b.Horizon, b.Probes = 5, 170, 60, 110, 4
	axes := experiment.DefaultAxes()
	axes.Taus, axes.Seeds = []int{2, 4}, []uint64{1, 2}
	axes.Kappas = []float64{10}
	def := axes.Grid("small", experiment.ExperimentBenchmark, b)
	axes.Kinds, axes.Kappas = axes.Kinds[:1], []float64{1}
	iso := axes.Grid("small-isotropic", experiment.ExperimentBenchmark, b)
	var out []*experiment.Tightness
	for _, g := range []experiment.Grid{def, iso} {
		t, err := experiment.RunTightness(context.Background(), g, experiment.TightnessOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
})

func tightness(t *testing.T) []*experiment.Tightness {
	t.Helper()
	ts, err := fixedTightness()
	require.NoError(t, err)
	return ts
}

// One panel per grid and kind; every drawn point is on or above the
// diagonal α = deviation (no tolerance: both are the values of the
// records); the exact releases left out are counted in the caption; the
// figure validates and renders as PNG and SVG.
func TestTightnessFigure(t *testing.T) {
	ts := tightness(t)
	f, err := TightnessFigure(ts)
	require.NoError(t, err)
	require.NoError(t, f.Validate())
	assert.Equal(t, TightnessFigureID, f.ID)
	require.Len(t, f.Panels, 3, "small/quadratic, small/logistic, small-isotropic/quadratic")
	assert.Contains(t, f.Panels[0].Title, "quadratic")
	assert.Contains(t, f.Panels[1].Title, "logistic")
	assert.Contains(t, f.Panels[2].Title, "κ 1")
	exact := 0
	for _, tt := range ts {
		for _, r := range tt.Records {
			for _, m := range r.Methods {
				if m.Alpha == 0 && m.Deviation == 0 {
					exact++
				}
			}
		}
	}
	require.Positive(t, exact)
	assert.Contains(t, f.Caption, plural(exact, "exact release"))
	labels := map[string]bool{}
	for _, p := range f.Panels {
		diag := 0
		for _, s := range p.Series {
			if s.Style < 0 {
				diag++
				continue
			}
			require.NotEmpty(t, s.X)
			for k := range s.X {
				assert.GreaterOrEqual(t, s.Y[k], s.X[k], "%s: point below the diagonal", p.Title)
			}
			if s.Kind == Points {
				labels[s.Name] = true
			}
		}
		assert.Equal(t, 1, diag, "%s: one diagonal", p.Title)
	}
	for _, m := range ts[0].Records[0].Methods[1:] { // the oracle is always exact, hence not drawn
		assert.True(t, labels[m.Label], "no median marker for %s", m.Label)
	}
	var png, svg bytes.Buffer
	require.NoError(t, f.WritePNG(&png))
	require.NoError(t, f.WriteSVG(&svg))
	checkPNG(t, "tightness.png", png.Bytes())
	checkSVG(t, "tightness.svg", svg.Bytes())

	_, err = TightnessFigure(nil)
	require.ErrorIs(t, err, ErrRecords)
	bad := *ts[0]
	bad.Records = append([]experiment.TightnessRecord(nil), bad.Records...)
	bad.Records[1].Methods = bad.Records[1].Methods[:2]
	_, err = TightnessFigure([]*experiment.Tightness{&bad})
	require.ErrorIs(t, err, ErrRecords)
}

// AddTightness puts the tables (a row per intervention) and the figure
// into the bench report, which then writes them.
func TestReportAddTightness(t *testing.T) {
	r := fixed(t)
	rep, err := FromResults(r.bench, "x", Options{})
	require.NoError(t, err)
	nTables, nFigs := len(rep.Tables), len(rep.Figures.Figures)
	require.NoError(t, rep.AddTightness(nil))
	require.Len(t, rep.Tables, nTables)
	ts := tightness(t)
	require.NoError(t, rep.AddTightness(ts))
	require.Len(t, rep.Tables, nTables+3)
	require.Len(t, rep.Figures.Figures, nFigs+1)
	methods := ts[0].Records[0].Methods
	for _, tab := range rep.Tables[nTables:] {
		assert.True(t, strings.HasPrefix(tab.Name, "tightness-"), tab.Name)
		require.Len(t, tab.Rows, len(methods), "%s: a row per intervention", tab.Name)
		for i, row := range tab.Rows {
			assert.Equal(t, methods[i].Label, row[0].Text)
			assert.Equal(t, 1.0, row[len(row)-1].Value, "%s %s: share with α ≥ deviation", tab.Name, row[0].Text)
			assert.False(t, math.IsNaN(row[3].Value))
		}
	}
	dir := filepath.Join(t.TempDir(), "report")
	require.NoError(t, rep.Write(dir))
	md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
	assert.Contains(t, md, "Tightness of the certified α")
	assert.Contains(t, md, "]("+FiguresDir+"/"+TightnessFigureID+".png)")
	checkPNG(t, TightnessFigureID+".png", readFile(t, filepath.Join(dir, FiguresDir, TightnessFigureID+".png")))
}
