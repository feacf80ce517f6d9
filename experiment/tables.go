package experiment

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Method names the tables treat specially: the counterfactual oracle
// (excluded from "best non-oracle") and the no-op baseline of the ratios.
// They are the Name() of unlearn's oracle-replay and no-op operators.
const (
	OracleName   = "oracle"
	BaselineName = "noop"
)

// TableOptions tune [BuildTables]. The zero value uses OracleName and
// BaselineName.
type TableOptions struct {
	// Oracle is the method excluded from "best non-oracle". If empty,
	// defaults to OracleName.
	Oracle string
	// Baseline is the method of the ratios "vs no-op". If empty, defaults
	// to BaselineName. When no record has it, ratio columns are undefined
	// (NaN, printed "–").
	Baseline string
}

// Table is one summary table: a header and rows of cells.
type Table struct {
	// Name is a short file stem ("global", "ratios", …).
	Name string
	// Title is the table's heading.
	Title string
	// Columns are the column headings.
	Columns []string
	// Rows hold the cells; each row has len(Columns) cells.
	Rows [][]Cell
}

// Cell is a table entry: text, or a number (NaN when undefined).
type Cell struct {
	Text    string
	Value   float64
	Numeric bool
	// Integer prints a finite Value without decimals in Markdown.
	Integer bool
}

func text(s string) Cell { return Cell{Text: s} }
func num(v float64) Cell { return Cell{Value: v, Numeric: true} }

// optNum is num for a value that may be absent (nil prints as "–").
func optNum(v *float64) Cell {
	if v == nil {
		return num(math.NaN())
	}
	return num(*v)
}
func integer(v float64) Cell   { return Cell{Value: v, Numeric: true, Integer: true} }
func fmtInt(n int) string      { return strconv.Itoa(n) }
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Markdown returns the cell as printed in a Markdown table: three decimals
// as in the paper's tables, values below 5e-4 in absolute value (which
// would print as 0.000) in scientific notation with three significant
// digits, "∞" for +Inf and "–" for NaN.
func (c Cell) Markdown() string {
	if !c.Numeric {
		return mdEscape(c.Text)
	}
	v := c.Value
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	case c.Integer:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v != 0 && math.Abs(v) < 5e-4:
		return strconv.FormatFloat(v, 'e', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// CSV returns the cell as written to CSV: the shortest representation that
// round-trips, "+Inf", "-Inf" or "NaN" (all accepted by strconv.ParseFloat).
func (c Cell) CSV() string {
	if !c.Numeric {
		return c.Text
	}
	return strconv.FormatFloat(c.Value, 'g', -1, 64)
}

// WriteMarkdown writes the table as a "### Title" heading and a GitHub
// Markdown table with text columns left-aligned and numbers right-aligned.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n|", t.Title)
	for _, c := range t.Columns {
		fmt.Fprintf(&b, " %s |", mdEscape(c))
	}
	b.WriteString("\n|")
	for j := range t.Columns {
		if len(t.Rows) > 0 && t.Rows[0][j].Numeric {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for _, c := range row {
			fmt.Fprintf(&b, " %s |", c.Markdown())
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes the table as CSV with a header row.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	rec := make([]string, len(t.Columns))
	for _, row := range t.Rows {
		for j, c := range row {
			rec[j] = c.CSV()
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTablesMarkdown writes every table, in order.
func WriteTablesMarkdown(w io.Writer, tables []*Table) error {
	for _, t := range tables {
		if err := t.WriteMarkdown(w); err != nil {
			return err
		}
	}
	return nil
}

// AUCRatio returns x/base with the conventions of spec §8: x/0 = +Inf for
// x > 0 and 0/0 = 1.
func AUCRatio(x, base float64) float64 {
	if base == 0 {
		if x == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return x / base
}

// Median returns the median of the non-NaN values of xs (the mean of the
// two middle values for an even count; +Inf propagates), or NaN when there
// are none. xs is not modified.
func Median(xs []float64) float64 {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	a, b := v[n/2-1], v[n/2]
	if a == b {
		return a // also keeps ±Inf pairs exact
	}
	return a/2 + b/2
}

// Mean returns the arithmetic mean of the non-NaN values of xs (+Inf
// propagates), or NaN when there are none.
func Mean(xs []float64) float64 {
	var s float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// share returns the fraction of true values, or NaN for none.
func share(bs []bool) float64 {
	if len(bs) == 0 {
		return math.NaN()
	}
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return float64(n) / float64(len(bs))
}

// perMethod holds one method's per-configuration values over a set of
// records, in record order.
type perMethod struct {
	initW, initZ, initTheta, auc, final, upd, mass, events, ratio []float64
	exact, better, best                                           []bool
}

// collect gathers per-method values over recs (all with the methods
// names, in that order). Ratios use the baseline's AUC of the same
// record; the best non-oracle method of each record is the lowest AUC
// among the non-oracle methods, ties going to the earlier method.
func collect(recs []*Record, names []string, opt TableOptions) []perMethod {
	pm := make([]perMethod, len(names))
	base := slices.Index(names, opt.Baseline)
	for _, r := range recs {
		best := -1
		for j, m := range r.Methods {
			if m.Name == opt.Oracle {
				continue
			}
			if best < 0 || m.Summary.AUC < r.Methods[best].Summary.AUC {
				best = j
			}
		}
		for j, m := range r.Methods {
			p := &pm[j]
			s := m.Summary
			p.initW = append(p.initW, s.InitialParam)
			p.initZ = append(p.initZ, s.InitialMemory)
			p.initTheta = append(p.initTheta, s.InitialState)
			p.auc = append(p.auc, s.AUC)
			p.final = append(p.final, s.FinalState)
			p.upd = append(p.upd, s.UpdateAUC)
			p.mass = append(p.mass, float64(s.DirectMass))
			p.events = append(p.events, float64(m.EventsReplayed))
			p.exact = append(p.exact, s.Exact)
			ratio := math.NaN()
			if base >= 0 {
				ratio = AUCRatio(s.AUC, r.Methods[base].Summary.AUC)
				p.better = append(p.better, ratio < 1)
			}
			p.ratio = append(p.ratio, ratio)
			if m.Name != opt.Oracle {
				p.best = append(p.best, j == best)
			}
		}
	}
	return pm
}

// checkMethods returns the common method names of recs, or an error
// wrapping ErrIncompatible if two records differ.
func checkMethods(recs []*Record) ([]string, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no records", ErrRecord)
	}
	names := recs[0].MethodNames()
	for _, r := range recs[1:] {
		if got := r.MethodNames(); !slices.Equal(got, names) {
			return nil, fmt.Errorf("%w: record %d (%s) has methods %v, record %d (%s) has %v",
				ErrIncompatible, r.Index, r.ID, got, recs[0].Index, recs[0].ID, names)
		}
	}
	return names, nil
}

// BuildTables computes the five summary tables of the paper's results
// section (spec §6, §8) from per-configuration records, in this order:
//
//  1. "global": per method, medians over configurations of the initial
//     parameter, memory and state errors, of the future state AUC, of the
//     final state error and of the update-direction AUC; the mean future
//     state AUC; the exact-recovery rate.
//  2. "ratios": per method, the AUC ratio vs no-op computed per
//     configuration (x/0 = ∞ for x > 0, 0/0 = 1) then aggregated: median,
//     mean, share better than no-op (ratio < 1 strictly); the
//     exact-recovery rate; the best-non-oracle share (one winner per
//     configuration: lowest future AUC among non-oracle methods, ties to
//     the earlier method in the records' order — for unlearn.Paper that is
//     no-op, parameter-only, pair drop, memory reset, retain fine-tuning,
//     drop and refill, window replay τ, window replay 5τ).
//  3. "horizon": by τ, per method: median future AUC, median AUC ratio,
//     exact-recovery rate, mean processed (replayed) events.
//  4. "mode": by deletion mode, per method: median direct memory mass
//     M_direct(0), median initial state error, median future AUC, median
//     AUC ratio.
//  5. "stream": by stream kind, per method: median future AUC, median AUC
//     ratio, exact-recovery rate, median final state error.
//
// Medians everywhere except means, shares and rates (spec §8). Every
// method is shown (the paper's tables show subsets). Records must all have
// the same methods in the same order (else ErrIncompatible); they are
// aggregated in the order given, which does not change any value. Groups
// are listed by ascending τ, in the order of Modes, and quadratic before
// logistic.
func BuildTables(recs []*Record, opt TableOptions) ([]*Table, error) {
	if opt.Oracle == "" {
		opt.Oracle = OracleName
	}
	if opt.Baseline == "" {
		opt.Baseline = BaselineName
	}
	names, err := checkMethods(recs)
	if err != nil {
		return nil, err
	}
	labels := make([]string, len(names))
	for j, m := range recs[0].Methods {
		labels[j] = m.Label
	}
	all := collect(recs, names, opt)

	global := &Table{Name: "global", Title: "Global comparison across all configurations (medians unless stated)",
		Columns: []string{"Method", "Initial param.", "Initial memory", "Initial state", "Future state AUC",
			"Mean future state AUC", "Final state", "Update-dir. AUC", "Exact recovery"}}
	ratios := &Table{Name: "ratios", Title: "Future state AUC relative to no-op deletion",
		Columns: []string{"Method", "Median AUC ratio vs. no-op", "Mean AUC ratio vs. no-op",
			"Share better than no-op", "Exact recovery rate", "Best non-oracle share"}}
	for j, p := range all {
		global.Rows = append(global.Rows, []Cell{text(labels[j]),
			num(Median(p.initW)), num(Median(p.initZ)), num(Median(p.initTheta)), num(Median(p.auc)),
			num(Mean(p.auc)), num(Median(p.final)), num(Median(p.upd)), num(share(p.exact))})
		bestShare := math.NaN()
		if names[j] != opt.Oracle {
			bestShare = share(p.best)
		}
		ratios.Rows = append(ratios.Rows, []Cell{text(labels[j]),
			num(Median(p.ratio)), num(Mean(p.ratio)), num(share(p.better)), num(share(p.exact)), num(bestShare)})
	}

	horizon := &Table{Name: "horizon", Title: "Memory horizon and replay depth, by memory size τ",
		Columns: []string{"τ", "Method", "Future state AUC", "AUC ratio vs. no-op", "Exact recovery rate", "Mean processed events"}}
	taus := groupKeys(recs, func(r *Record) int { return r.Config.Tau }, func(a, b int) int { return a - b })
	for _, tau := range taus {
		sub := filter(recs, func(r *Record) bool { return r.Config.Tau == tau })
		for j, p := range collect(sub, names, opt) {
			horizon.Rows = append(horizon.Rows, []Cell{text(fmtInt(tau)), text(labels[j]),
				num(Median(p.auc)), num(Median(p.ratio)), num(share(p.exact)), num(Mean(p.events))})
		}
	}

	mode := &Table{Name: "mode", Title: "Deletion mode",
		Columns: []string{"Deletion mode", "Method", "Direct memory mass", "Initial state error", "Future state AUC", "AUC ratio vs. no-op"}}
	order := append(slices.Clone(Modes), ModeExplicit)
	modes := groupKeys(recs, func(r *Record) string { return r.Config.Mode }, func(a, b string) int {
		return rank(order, a) - rank(order, b)
	})
	for _, md := range modes {
		sub := filter(recs, func(r *Record) bool { return r.Config.Mode == md })
		for j, p := range collect(sub, names, opt) {
			mode.Rows = append(mode.Rows, []Cell{text(md), text(labels[j]),
				num(Median(p.mass)), num(Median(p.initTheta)), num(Median(p.auc)), num(Median(p.ratio))})
		}
	}

	kind := &Table{Name: "stream", Title: "Stream kind",
		Columns: []string{"Stream", "Method", "Future state AUC", "AUC ratio vs. no-op", "Exact recovery rate", "Final state error"}}
	kindOrder := []string{"quadratic", "logistic"}
	kinds := groupKeys(recs, func(r *Record) string { return r.Source.Kind }, func(a, b string) int {
		return rank(kindOrder, a) - rank(kindOrder, b)
	})
	for _, k := range kinds {
		sub := filter(recs, func(r *Record) bool { return r.Source.Kind == k })
		for j, p := range collect(sub, names, opt) {
			kind.Rows = append(kind.Rows, []Cell{text(k), text(labels[j]),
				num(Median(p.auc)), num(Median(p.ratio)), num(share(p.exact)), num(Median(p.final))})
		}
	}
	return []*Table{global, ratios, horizon, mode, kind}, nil
}

// rank returns the position of s in order, or len(order) if absent (so
// unknown keys sort last, then by the stable sort's input order).
func rank(order []string, s string) int {
	if i := slices.Index(order, s); i >= 0 {
		return i
	}
	return len(order)
}

// groupKeys returns the distinct keys of recs sorted by cmp (stable, so
// ties keep first-appearance order).
func groupKeys[K comparable](recs []*Record, key func(*Record) K, cmp func(a, b K) int) []K {
	var keys []K
	for _, r := range recs {
		if k := key(r); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.SortStableFunc(keys, cmp)
	return keys
}

func filter(recs []*Record, keep func(*Record) bool) []*Record {
	var out []*Record
	for _, r := range recs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// DecayTable returns Experiment 1's table: one row per record and method
// with the configuration (kind, κ, τ, mode, seed), the direct-clearance
// time (– when undefined), the decay fits ρ̂ for P1, P2, P3, and E_Θ(0),
// E_Θ(H) and the future state AUC.
func DecayTable(recs []*Record) *Table {
	t := &Table{Name: "decay", Title: "Finite-memory decay (Experiment 1)",
		Columns: []string{"Stream", "κ", "τ", "Deletion mode", "Seed", "Method", "Clearance time",
			"ρ̂ P1", "ρ̂ P2", "ρ̂ P3", "Initial state", "Final state", "Future state AUC"}}
	for _, r := range recs {
		kappa := "–"
		if r.Source.Generated != nil {
			kappa = strconv.FormatFloat(r.Source.Generated.Kappa, 'g', -1, 64)
		}
		seed := "–"
		if r.Source.Generated != nil {
			seed = strconv.FormatUint(r.Source.Generated.Seed, 10)
		}
		for _, m := range r.Methods {
			s := m.Summary
			clear := math.NaN()
			if s.Clearance >= 0 {
				clear = float64(s.Clearance)
			}
			t.Rows = append(t.Rows, []Cell{text(r.Source.Kind), text(kappa), text(fmtInt(r.Config.Tau)),
				text(r.Config.Mode), text(seed), text(m.Label), integer(clear),
				optNum(s.Rho[0]), optNum(s.Rho[1]), optNum(s.Rho[2]),
				num(s.InitialState), num(s.FinalState), num(s.AUC)})
		}
	}
	return t
}

// RunTable returns the summary of a single run: one row per method with
// E_w(0), E_Z(0), E_Θ(0), E_Θ(H), the future state AUC, its ratio vs.
// no-op, the update-direction AUC, M_direct(0), clearance time, exact
// recovery (1 or 0) and the events replayed.
func RunTable(r *Record) *Table {
	t := &Table{Name: "run", Title: "Run " + r.ID,
		Columns: []string{"Method", "Initial param.", "Initial memory", "Initial state", "Final state",
			"Future state AUC", "AUC ratio vs. no-op", "Update-dir. AUC", "Direct memory mass",
			"Clearance time", "Exact recovery", "Events replayed"}}
	base := r.Method(BaselineName)
	for _, m := range r.Methods {
		s := m.Summary
		ratio := math.NaN()
		if base != nil {
			ratio = AUCRatio(s.AUC, base.Summary.AUC)
		}
		clear := math.NaN()
		if s.Clearance >= 0 {
			clear = float64(s.Clearance)
		}
		exact := 0.0
		if s.Exact {
			exact = 1
		}
		t.Rows = append(t.Rows, []Cell{text(m.Label), num(s.InitialParam), num(s.InitialMemory),
			num(s.InitialState), num(s.FinalState), num(s.AUC), num(ratio), num(s.UpdateAUC),
			integer(float64(s.DirectMass)), integer(clear), integer(exact), integer(float64(m.EventsReplayed))})
	}
	return t
}
