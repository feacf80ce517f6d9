package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"unlearn/experiment"
)

// baseline returns the record's no-op method (Experiment 1 runs it alone),
// or its first method.
func baseline(r *experiment.Record) *experiment.MethodResult {
	if m := r.Method(experiment.BaselineName); m != nil {
		return m
	}
	return &r.Methods[0]
}

// metric selects one per-step series of a method.
type metric func(*experiment.Series) []float64

func etheta(s *experiment.Series) []float64 { return s.ETheta }
func ew(s *experiment.Series) []float64     { return s.Ew }
func ez(s *experiment.Series) []float64     { return s.EZ }

// medianSeries returns the pointwise median over recs of the baseline
// method's metric, over the steps every record has (NaN-aware, see
// experiment.Median), or nil when a record kept no series.
func medianSeries(recs []*experiment.Record, get metric) []float64 {
	n := -1
	for _, r := range recs {
		s := baseline(r).Series
		if s == nil {
			return nil
		}
		if l := len(get(s)); n < 0 || l < n {
			n = l
		}
	}
	if n <= 0 {
		return nil
	}
	out := make([]float64, n)
	col := make([]float64, len(recs))
	for k := range out {
		for i, r := range recs {
			col[i] = get(baseline(r).Series)[k]
		}
		out[k] = experiment.Median(col)
	}
	return out
}

// hasSeries reports whether every record kept its series.
func hasSeries(recs []*experiment.Record) bool {
	for _, r := range recs {
		for _, m := range r.Methods {
			if m.Series == nil {
				return false
			}
		}
	}
	return len(recs) > 0
}

// stepSeries returns x = 0..len(y)−1 and y thinned to at most max points
// (every s-th step, s = ⌈n/max⌉, and the last one), with the values that a
// log axis cannot show (≤ 0) replaced by NaN when log is set. It returns
// how many values it dropped.
func stepSeries(y []float64, max int, log bool) (xs, ys experiment.Floats, dropped int) {
	n := len(y)
	s := (n + max - 1) / max
	if s < 1 {
		s = 1
	}
	for k := 0; k < n; k += s {
		xs, ys = append(xs, float64(k)), append(ys, y[k])
	}
	if last := n - 1; last >= 0 && int(xs[len(xs)-1]) != last {
		xs, ys = append(xs, float64(last)), append(ys, y[last])
	}
	if log {
		for i, v := range ys {
			if !(v > 0) && !math.IsNaN(v) {
				ys[i] = math.NaN()
				dropped++
			}
		}
	}
	return xs, ys, dropped
}

// logStepSeries is stepSeries for a log x axis: x = k + 1, and the
// thinning keeps a step when it is the first of its bucket of width
// log(n)/max in log(k+1) — every early step, fewer and fewer later.
func logStepSeries(y []float64, max int) (xs, ys experiment.Floats, dropped int) {
	n := len(y)
	width := math.Log(float64(n)) / float64(max)
	last := -1.0
	for k, v := range y {
		b := math.Floor(math.Log(float64(k+1)) / width)
		if b == last && k != n-1 {
			continue
		}
		last = b
		if !(v > 0) && !math.IsNaN(v) {
			v = math.NaN()
			dropped++
		}
		xs, ys = append(xs, float64(k+1)), append(ys, v)
	}
	return xs, ys, dropped
}

// allNonPositive reports whether no value of y is positive (NaN counts as
// not positive).
func allNonPositive(y []float64) bool {
	for _, v := range y {
		if v > 0 {
			return false
		}
	}
	return true
}

// floorPanel replaces the values ≤ 0 on the log y axis of p by a floor one
// decade below the smallest positive value of the panel (rounded down to a
// power of ten), draws a grey dotted line there, labels that position "0"
// on the axis (Axis.Floor) so that a zero is not read as the power of ten
// it is drawn at, and returns the floor and the number of values floored
// (0, 0 when there were none). The line has no label of its own: points on
// the floor would draw over it.
func floorPanel(p *Panel) (floor float64, n int) {
	lo := math.Inf(1)
	for _, s := range p.Series {
		for _, v := range s.Y {
			if v > 0 && v < lo {
				lo = v
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo = 1
	}
	floor = math.Pow(10, math.Floor(math.Log10(lo))-1)
	for i := range p.Series {
		for j, v := range p.Series[i].Y {
			if v <= 0 {
				p.Series[i].Y[j] = floor
				n++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	p.Y.Floor = floor
	p.Marks = append(p.Marks, Mark{Value: floor, Style: -1, Dash: 2})
	return floor, n
}

// categorical returns ticks at 0, 1, … labelled labels.
func categorical(labels []string) []Tick {
	t := make([]Tick, len(labels))
	for i, l := range labels {
		t[i] = Tick{Value: float64(i), Label: l}
	}
	return t
}

// g formats a number for captions and cells: 3 significant digits.
func g(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// sci formats a number for a figure (see richText): 3 significant digits,
// as m·10^{e} below 10⁻³ and from 10⁴ on.
func sci(v float64) string {
	a := math.Abs(v)
	if math.IsNaN(v) || v == 0 || a >= 1e-3 && a < 1e4 || math.IsInf(v, 0) {
		return g(v)
	}
	e := math.Floor(math.Log10(a))
	m := v / math.Pow(10, e)
	if math.Abs(m) >= 9.995 { // rounds up to 10.0
		m, e = m/10, e+1
	}
	return strconv.FormatFloat(m, 'f', 2, 64) + "·10^{" + strings.Replace(strconv.Itoa(int(e)), "-", "−", 1) + "}"
}

// fmtKappa formats κ ("–" when unknown).
func fmtKappa(k float64) string {
	if math.IsNaN(k) {
		return "–"
	}
	return strconv.FormatFloat(k, 'g', -1, 64)
}

// seedList returns the distinct seeds of recs as "1, 2, 3".
func seedList(recs []*experiment.Record) string {
	seeds := distinct(recs, func(r *experiment.Record) uint64 { return recordKey(r).seed },
		cmp.Compare[uint64])
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ", ")
}

// plural returns "1 record" or "n records".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// kappas returns the distinct condition numbers of recs, ascending (NaN,
// for file streams, last and once).
func kappas(recs []*experiment.Record) []float64 {
	var out []float64
	nan := false
	for _, r := range recs {
		k := recordKey(r).kappa
		if math.IsNaN(k) {
			nan = true
			continue
		}
		found := false
		for _, v := range out {
			found = found || v == k
		}
		if !found {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	if nan {
		out = append(out, math.NaN())
	}
	return out
}
