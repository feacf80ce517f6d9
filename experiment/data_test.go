package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/stream"
)

// dataCSV writes a seeded CSV data set of n rows, d features and 0/1
// labels from a noisy linear rule, and returns its path.
func dataCSV(t *testing.T, n, d int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	for j := range d {
		fmt.Fprintf(&b, "f%d,", j)
	}
	b.WriteString("label\n")
	for range n {
		s := 0.0
		for j := range d {
			v := rng.NormFloat64()
			s += v * float64(j%3-1)
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
		}
		if s+0.5*rng.NormFloat64() > 0 {
			b.WriteString("1\n")
		} else {
			b.WriteString("0\n")
		}
	}
	p := filepath.Join(t.TempDir(), "toy.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

func smallDataGrid(t *testing.T, path string) Grid {
	t.Helper()
	src, hdr, err := DataFile(path, dataset.Options{Label: "label"})
	require.NoError(t, err)
	require.Equal(t, 300, src.Rows)
	require.Len(t, src.SHA256, 64)
	base := Experiment2()
	base.Stream.T = 150
	base.TDel, base.Horizon, base.Probes = 50, 0, 4
	axes := GridAxes{Taus: []int{2, 4}, Modes: []string{ModeRecent, ModeRandom}, Seeds: []uint64{1, 2},
		Kinds: []stream.Kind{stream.KindQuadratic}, Kappas: []float64{100}} // ignored
	return DataGrid("data-toy", axes, base, src, hdr.D)
}

func TestDataGrid(t *testing.T) {
	path := dataCSV(t, 300, 5)
	g := smallDataGrid(t, path)
	require.Len(t, g.Configs, 8)
	assert.Equal(t, "data-toy-tau2-recent-seed1", g.Configs[0].ID())
	assert.Equal(t, "data-toy-tau4-random-seed2", g.Configs[7].ID())
	for _, c := range g.Configs {
		require.NoError(t, c.Validate())
		assert.Equal(t, stream.KindLogistic, c.Stream.Kind)
		assert.Equal(t, 5, c.Stream.D)
		assert.Zero(t, c.Stream.Kappa, "κ does not apply to data")
		assert.Equal(t, 100, c.Horizon, "H defaults to T − t_del")
	}

	res1, err := RunGrid(context.Background(), g, Options{Workers: 1, ZeroTiming: true})
	require.NoError(t, err)
	res2, err := RunGrid(context.Background(), g, Options{Workers: 3, ZeroTiming: true})
	require.NoError(t, err)
	for i := range res1.Records {
		var a, b strings.Builder
		require.NoError(t, res1.Records[i].WriteJSON(&a))
		require.NoError(t, res2.Records[i].WriteJSON(&b))
		require.Equal(t, a.String(), b.String(), "record %d depends on the number of workers", i)
	}

	// A configuration's stream is the file's rows in the order of its seed:
	// running that history directly gives the same metrics.
	c := g.Configs[5] // τ = 4, recent, seed 2
	ds, err := dataset.Load(path, dataset.Options{Label: "label", Shuffle: new(uint64(2)), Limit: 150})
	require.NoError(t, err)
	rec, err := RunHistory(context.Background(), ds.History, Source{File: path}, c, ExperimentBenchmark, Options{ZeroTiming: true})
	require.NoError(t, err)
	grid := res1.Records[5]
	require.Equal(t, grid.U, rec.U)
	for j := range rec.Methods {
		assert.Equal(t, grid.Methods[j].Summary, rec.Methods[j].Summary, rec.Methods[j].Name)
	}
	tables, err := res1.Tables(TableOptions{})
	require.NoError(t, err)
	require.Len(t, tables, 5)
	assert.Equal(t, "logistic", tables[4].Rows[0][0].Text, "the stream-kind table names the data set's kind")
}

func TestDataGridErrors(t *testing.T) {
	path := dataCSV(t, 300, 3)
	g := smallDataGrid(t, path)

	c := g.Configs[0]
	c.Stream.T = 301
	assert.ErrorIs(t, c.Validate(), ErrConfig, "T above the rows")
	c = g.Configs[0]
	c.Stream.Kappa = 10
	assert.ErrorIs(t, c.Validate(), ErrConfig, "κ with data")
	c = g.Configs[0]
	c.Stream.Kind = stream.KindRegression
	assert.ErrorIs(t, c.Validate(), ErrConfig, "kind other than the data set's")

	_, _, err := DataFile(path, dataset.Options{Label: "label", Limit: 5})
	assert.ErrorIs(t, err, ErrConfig)

	// The file changed after the grid was built: the run stops.
	require.NoError(t, os.WriteFile(path, []byte("f0,label\n1,1\n"), 0o644))
	_, err = RunGrid(context.Background(), g, Options{Workers: 1})
	require.ErrorIs(t, err, ErrRun)
	assert.ErrorContains(t, err, "changed")
}
