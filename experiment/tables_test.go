package experiment

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats/scalar"
)

// equalFloat compares floats with scalar.EqualWithinAbsOrRel, treating two
// NaNs and two equal infinities as equal. The tolerance 1e-12 covers the
// round-off of a mean of a few hand-made values.
func equalFloat(t *testing.T, name string, got, want float64) {
	t.Helper()
	switch {
	case math.IsNaN(want):
		if !math.IsNaN(got) {
			t.Errorf("%s = %v, want NaN", name, got)
		}
	case math.IsInf(want, 0):
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	case !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12):
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// fakeRecord returns a record with one method per (name, auc) pair, in
// order, and the given τ, mode and kind.
func fakeRecord(index, tau int, mode, kind string, methods []string, aucs []float64) *Record {
	r := &Record{Format: RecordFormat, Index: index, ID: "fake", Config: Config{Tau: tau, Mode: mode},
		Source: Source{Kind: kind}}
	for j, name := range methods {
		r.Methods = append(r.Methods, MethodResult{Name: name, Label: name,
			EventsReplayed: 10 * j,
			Summary: Summary{AUC: aucs[j], InitialState: aucs[j] / 10, FinalState: aucs[j] / 100,
				Exact: aucs[j] == 0, DirectMass: j}})
	}
	return r
}

func TestAUCRatio(t *testing.T) {
	tests := []struct {
		name    string
		x, base float64
		want    float64
	}{
		{"0/0 counts as 1 (spec §8)", 0, 0, 1},
		{"x/0 is +Inf for x > 0 (spec §8)", 3, 0, math.Inf(1)},
		{"plain ratio", 1, 4, 0.25},
		{"zero over positive", 0, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equalFloat(t, "AUCRatio", AUCRatio(tt.x, tt.base), tt.want)
		})
	}
}

func TestMedianMean(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name      string
		xs        []float64
		med, mean float64
	}{
		{"odd", []float64{3, 1, 2}, 2, 2},
		{"even averages the middle pair", []float64{4, 1, 3, 2}, 2.5, 2.5},
		{"infinity propagates to the mean", []float64{1, inf, 2}, 2, inf},
		{"two infinities in the middle", []float64{inf, inf, 1, inf}, inf, inf},
		{"NaN values are skipped", []float64{math.NaN(), 5}, 5, 5},
		{"empty is NaN", nil, math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equalFloat(t, "Median", Median(tt.xs), tt.med)
			equalFloat(t, "Mean", Mean(tt.xs), tt.mean)
		})
	}
}

// cell returns the numeric value of the row whose leading text cells
// equal keys, in the column named col.
func cell(t *testing.T, tab *Table, col string, keys ...string) float64 {
	t.Helper()
	j := -1
	for i, c := range tab.Columns {
		if c == col {
			j = i
		}
	}
	require.GreaterOrEqual(t, j, 0, "table %s has no column %q", tab.Name, col)
rows:
	for _, row := range tab.Rows {
		for i, k := range keys {
			if row[i].Text != k {
				continue rows
			}
		}
		return row[j].Value
	}
	t.Fatalf("table %s has no row %v", tab.Name, keys)
	return 0
}

func tableByName(t *testing.T, tabs []*Table, name string) *Table {
	t.Helper()
	for _, tab := range tabs {
		if tab.Name == name {
			return tab
		}
	}
	t.Fatalf("no table %q", name)
	return nil
}

func TestBuildTablesAggregation(t *testing.T) {
	methods := []string{OracleName, BaselineName, "a", "b"}
	inf := math.Inf(1)
	// Three configurations, AUCs per method (oracle, noop, a, b):
	//  0: noop = 0, a = 0 (0/0 = 1, not better), b = 2 (x/0 = ∞); a and b
	//     tie with noop? No: noop 0 and a 0 tie, the earlier (noop) wins.
	//  1: noop = 4, a = 2 (ratio 0.5), b = 2 (ratio 0.5; tie with a, a wins).
	//  2: noop = 1, a = 1 (ratio 1, not strictly better), b = 0.5 (wins).
	recs := []*Record{
		fakeRecord(0, 5, ModeRecent, "quadratic", methods, []float64{0, 0, 0, 2}),
		fakeRecord(1, 5, ModeRandom, "logistic", methods, []float64{0, 4, 2, 2}),
		fakeRecord(2, 10, ModeRandom, "logistic", methods, []float64{0, 1, 1, 0.5}),
	}
	tabs, err := BuildTables(recs, TableOptions{})
	require.NoError(t, err)
	require.Len(t, tabs, 5, "tables")
	ratios := tableByName(t, tabs, "ratios")
	tests := []struct {
		name string
		tab  string
		col  string
		keys []string
		want float64
	}{
		{"a median ratio of {1, 0.5, 1}", "ratios", "Median AUC ratio vs. no-op", []string{"a"}, 1},
		{"b mean ratio with an infinity", "ratios", "Mean AUC ratio vs. no-op", []string{"b"}, inf},
		{"b median ratio of {∞, 0.5, 0.5}", "ratios", "Median AUC ratio vs. no-op", []string{"b"}, 0.5},
		{"noop ratio is 1 everywhere, including 0/0", "ratios", "Median AUC ratio vs. no-op", []string{BaselineName}, 1},
		{"a better than noop strictly: only config 1", "ratios", "Share better than no-op", []string{"a"}, 1.0 / 3},
		{"noop never better than itself", "ratios", "Share better than no-op", []string{BaselineName}, 0},
		{"noop best in config 0 by tie-break", "ratios", "Best non-oracle share", []string{BaselineName}, 1.0 / 3},
		{"a best in config 1 by tie-break over b", "ratios", "Best non-oracle share", []string{"a"}, 1.0 / 3},
		{"b best in config 2", "ratios", "Best non-oracle share", []string{"b"}, 1.0 / 3},
		{"oracle has no best share", "ratios", "Best non-oracle share", []string{OracleName}, math.NaN()},
		{"exact recovery rate of a (AUC 0 in config 0)", "ratios", "Exact recovery rate", []string{"a"}, 1.0 / 3},
		{"global median AUC of noop {0,4,1}", "global", "Future state AUC", []string{BaselineName}, 1},
		{"global mean AUC of noop", "global", "Mean future state AUC", []string{BaselineName}, 5.0 / 3},
		{"global oracle exact rate", "global", "Exact recovery", []string{OracleName}, 1},
		{"horizon τ=5 median ratio of b {∞, 0.5}", "horizon", "AUC ratio vs. no-op", []string{"5", "b"}, inf},
		{"horizon τ=10 events of b", "horizon", "Mean processed events", []string{"10", "b"}, 30},
		{"mode random median AUC of a {2, 1}", "mode", "Future state AUC", []string{ModeRandom, "a"}, 1.5},
		{"mode recent direct mass of b", "mode", "Direct memory mass", []string{ModeRecent, "b"}, 3},
		{"stream logistic final state of noop {0.04, 0.01}", "stream", "Final state error", []string{"logistic", BaselineName}, 0.025},
		{"stream quadratic exact rate of b", "stream", "Exact recovery rate", []string{"quadratic", "b"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equalFloat(t, tt.col, cell(t, tableByName(t, tabs, tt.tab), tt.col, tt.keys...), tt.want)
		})
	}
	t.Run("best shares sum to one", func(t *testing.T) {
		var s float64
		for _, m := range methods[1:] {
			s += cell(t, ratios, "Best non-oracle share", m)
		}
		equalFloat(t, "sum", s, 1)
	})
	t.Run("groups are ordered", func(t *testing.T) {
		h := tableByName(t, tabs, "horizon")
		assert.Equal(t, "5", h.Rows[0][0].Text, "first horizon group")
		assert.Equal(t, "10", h.Rows[len(h.Rows)-1][0].Text, "last horizon group")
		m := tableByName(t, tabs, "mode")
		assert.Equal(t, ModeRecent, m.Rows[0][0].Text, "first mode group")
		s := tableByName(t, tabs, "stream")
		assert.Equal(t, "quadratic", s.Rows[0][0].Text, "first stream group")
	})
}

func TestBuildTablesRejectsMixedMethods(t *testing.T) {
	a := fakeRecord(0, 5, ModeRecent, "quadratic", []string{"noop", "x"}, []float64{1, 1})
	b := fakeRecord(1, 5, ModeRecent, "quadratic", []string{"x", "noop"}, []float64{1, 1})
	_, err := BuildTables([]*Record{a, b}, TableOptions{})
	require.ErrorIs(t, err, ErrIncompatible, "BuildTables on mixed methods")
	require.ErrorContains(t, err, "methods", "BuildTables on mixed methods")
}

func TestTableOutput(t *testing.T) {
	tab := &Table{Name: "t", Title: "Demo", Columns: []string{"Method", "Value"}, Rows: [][]Cell{
		{text("a|b"), num(444022.2954)},
		{text("tiny"), num(4e-6)},
		{text("zero"), num(0)},
		{text("inf"), num(math.Inf(1))},
		{text("undef"), num(math.NaN())},
		{text("count"), integer(5)},
	}}
	var md, cs bytes.Buffer
	require.NoError(t, tab.WriteMarkdown(&md))
	require.NoError(t, tab.WriteCSV(&cs))
	wantMD := "### Demo\n\n| Method | Value |\n| --- | ---: |\n" +
		"| a\\|b | 444022.295 |\n| tiny | 4.00e-06 |\n| zero | 0.000 |\n| inf | ∞ |\n| undef | – |\n| count | 5 |\n\n"
	assert.Equal(t, wantMD, md.String(), "Markdown")
	wantCSV := "Method,Value\na|b,444022.2954\ntiny,4e-06\nzero,0\ninf,+Inf\nundef,NaN\ncount,5\n"
	assert.Equal(t, wantCSV, cs.String(), "CSV")
}
