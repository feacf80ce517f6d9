package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Sizes of a drawn figure. A panel is 4.4 × 3.4 in, so that two panels and
// a legend fit the width of a page or a browser window; PNGs are drawn at
// DPI dots per inch (4.4 in → 528 px).
const (
	panelW  = 4.4 * vg.Inch
	panelH  = 3.4 * vg.Inch
	titleH  = 0.4 * vg.Inch
	margin  = 0.12 * vg.Inch
	barW    = 1.6 * vg.Inch // the heat map's colour bar, its ticks and label
	DPI     = 120
	maxCols = 3
)

// Font sizes (points).
const (
	sizeTitle  = 12
	sizePanel  = 11
	sizeLabel  = 10
	sizeTick   = 9
	sizeLegend = 9.5
	sizeMark   = 8
)

// colours is the style cycle's colours: matplotlib's "tab10", familiar
// from the paper's plots, with its grey replaced by black so that it is
// not mistaken for the grey reference lines.
var colours = []color.NRGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x00, 0x00, 0x00, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

var grey = color.NRGBA{0x80, 0x80, 0x80, 0xff}

// glyphs is the style cycle's markers.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{},
	draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// dashes is the style cycle's line dashes: lines of neighbouring styles
// differ in dash as well as colour, so that coinciding curves (no-op and
// pair drop often do) stay distinguishable.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(2.5)}, nil, {vg.Points(2), vg.Points(2)}, nil,
	{vg.Points(8), vg.Points(2.5), vg.Points(2), vg.Points(2.5)}}

// markDashes are the reference lines' dashes: solid, dashed, dotted.
var markDashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1.2), vg.Points(2.4)}}

func colourOf(style int) color.NRGBA {
	if style < 0 {
		return grey
	}
	return colours[style%len(colours)]
}

// lineStyle is a series' line; a negative style is a grey dashed
// reference drawn as a series (a diagonal, which marks cannot draw).
func lineStyle(style int) draw.LineStyle {
	if style < 0 {
		return markStyle(Mark{Style: style, Dash: 1})
	}
	return draw.LineStyle{Color: colourOf(style), Width: vg.Points(1.3), Dashes: dashes[style%len(dashes)]}
}

func markStyle(m Mark) draw.LineStyle {
	w := vg.Points(1)
	if m.Style < 0 {
		w = vg.Points(0.9)
	}
	return draw.LineStyle{Color: colourOf(m.Style), Width: w, Dashes: markDashes[m.Dash%len(markDashes)]}
}

func glyphStyle(style int, radius vg.Length, alpha uint8) draw.GlyphStyle {
	c := colourOf(style)
	c.A = alpha
	return draw.GlyphStyle{Color: c, Radius: radius, Shape: glyphs[max(style, 0)%len(glyphs)]}
}

// handler draws every text of a figure (see richText).
var handler = richText{fonts: font.DefaultCache}

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: handler}
}

// WritePNG draws the figure as a PNG image (DPI dots per inch). The same
// figure always gives the same bytes.
func (f *Figure) WritePNG(w io.Writer) error {
	if err := f.Validate(); err != nil {
		return err
	}
	wd, ht := f.size()
	c := vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	if err := f.draw(draw.New(c)); err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
		return fmt.Errorf("report: figure %s: writing PNG: %w", f.ID, err)
	}
	return nil
}

// WriteSVG draws the figure as an SVG document. Fonts are not embedded
// (the text names Liberation fonts, and viewers substitute their own).
// The same figure always gives the same bytes.
func (f *Figure) WriteSVG(w io.Writer) error {
	if err := f.Validate(); err != nil {
		return err
	}
	wd, ht := f.size()
	c := vgsvg.New(wd, ht)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(rectPath(dc.Rectangle))
	if err := f.draw(dc); err != nil {
		return err
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("report: figure %s: writing SVG: %w", f.ID, err)
	}
	return nil
}

// Validate checks that the figure can be drawn; errors wrap ErrFigure and
// name the panel and series.
func (f *Figure) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFigure, f.ID, fmt.Sprintf(format, args...))
	}
	if len(f.Panels) == 0 {
		return bad("no panels")
	}
	for i, p := range f.Panels {
		if p.Heat != nil {
			h := p.Heat
			if len(h.Z) != len(p.Y.Ticks) || len(h.Text) != len(h.Z) {
				return bad("panel %d: heat map of %d rows (text %d) for %d y ticks", i, len(h.Z), len(h.Text), len(p.Y.Ticks))
			}
			for r := range h.Z {
				if len(h.Z[r]) != len(p.X.Ticks) || len(h.Text[r]) != len(p.X.Ticks) {
					return bad("panel %d: heat map row %d has %d cells (text %d) for %d x ticks", i, r, len(h.Z[r]), len(h.Text[r]), len(p.X.Ticks))
				}
			}
			continue
		}
		for j, s := range p.Series {
			if len(s.X) != len(s.Y) {
				return bad("panel %d, series %d (%s): %d x values, %d y values", i, j, s.Name, len(s.X), len(s.Y))
			}
			for k := range s.X {
				if p.X.Log && s.X[k] <= 0 || p.Y.Log && s.Y[k] <= 0 {
					return bad("panel %d, series %d (%s): point %d (%g, %g) on a log axis", i, j, s.Name, k, s.X[k], s.Y[k])
				}
				if math.IsInf(s.X[k], 0) || math.IsInf(s.Y[k], 0) {
					return bad("panel %d, series %d (%s): point %d is infinite", i, j, s.Name, k)
				}
			}
		}
		for j, m := range p.Marks {
			if (m.Vertical && p.X.Log || !m.Vertical && p.Y.Log) && !(m.Value > 0) || math.IsInf(m.Value, 0) || math.IsNaN(m.Value) {
				return bad("panel %d, mark %d: value %g", i, j, m.Value)
			}
		}
	}
	return nil
}

func (f *Figure) grid() (cols, rows int) {
	cols = f.Cols
	if cols < 1 {
		cols = 1
	}
	cols = min(cols, maxCols, len(f.Panels))
	rows = (len(f.Panels) + cols - 1) / cols
	return cols, rows
}

// legendEntries returns the legend: one entry per distinct series name, in
// order of appearance, then the figure's extra items.
func (f *Figure) legendEntries() (names []string, thumbs [][]plot.Thumbnailer) {
	for _, p := range f.Panels {
		for _, s := range p.Series {
			if s.Name == "" || s.Kind == Cloud || slices.Contains(names, s.Name) {
				continue
			}
			names = append(names, s.Name)
			thumbs = append(thumbs, seriesThumbs(s))
		}
	}
	for _, it := range f.Legend {
		l := &plotter.Line{LineStyle: markStyle(Mark{Style: it.Style, Dash: it.Dash})}
		names = append(names, it.Name)
		thumbs = append(thumbs, []plot.Thumbnailer{l})
	}
	return names, thumbs
}

func seriesThumbs(s Series) []plot.Thumbnailer {
	var th []plot.Thumbnailer
	if s.Kind == Line || s.Kind == Steps || s.Kind == LinePoints {
		th = append(th, &plotter.Line{LineStyle: lineStyle(s.Style)})
	}
	if s.Kind == Points || s.Kind == LinePoints {
		th = append(th, &plotter.Scatter{GlyphStyle: glyphStyle(s.Style, pointRadius(s.Kind), 0xff)})
	}
	return th
}

func pointRadius(k SeriesKind) vg.Length {
	switch k {
	case Points:
		return vg.Points(4)
	case Cloud:
		return vg.Points(1.8)
	}
	return vg.Points(2.8)
}

func (f *Figure) legendWidth() vg.Length {
	names, _ := f.legendEntries()
	if len(names) == 0 {
		return 0
	}
	st := textStyle(sizeLegend)
	var w vg.Length
	for _, n := range names {
		w = max(w, st.Width(n))
	}
	return w + vg.Points(20) + st.Width(" ") + 2*margin
}

// size returns the canvas size: the panels' grid, the title above and the
// legend to the right.
func (f *Figure) size() (w, h vg.Length) {
	cols, rows := f.grid()
	w = vg.Length(cols)*panelW + f.legendWidth() + 2*margin
	if f.Panels[0].Heat != nil {
		w += barW
	}
	w = max(w, textStyle(sizeTitle).Width(f.Title)+4*margin)
	return w, vg.Length(rows)*panelH + titleH + 2*margin
}

func rectPath(r vg.Rectangle) vg.Path {
	var p vg.Path
	p.Move(r.Min)
	p.Line(vg.Point{X: r.Max.X, Y: r.Min.Y})
	p.Line(r.Max)
	p.Line(vg.Point{X: r.Min.X, Y: r.Max.Y})
	p.Close()
	return p
}

// draw draws the figure on dc.
func (f *Figure) draw(dc draw.Canvas) (err error) {
	defer func() {
		// gonum/plot panics on data it cannot draw; Validate should have
		// caught it, but a report must not crash on a figure.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: drawing: %v", ErrFigure, f.ID, r)
		}
	}()
	dc = draw.Crop(dc, margin, -margin, margin, -margin)
	// Title.
	ts := textStyle(sizeTitle)
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
	dc.FillText(ts, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y}, f.Title)
	body := draw.Crop(dc, 0, 0, 0, -titleH)
	// Legend, right of the panels.
	if lw := f.legendWidth(); lw > 0 {
		names, thumbs := f.legendEntries()
		lg := plot.NewLegend()
		lg.TextStyle = textStyle(sizeLegend)
		lg.Top, lg.Left = true, true
		lg.ThumbnailWidth = vg.Points(20)
		lg.Padding = vg.Points(2.5)
		for i, n := range names {
			lg.Add(n, thumbs[i]...)
		}
		area := draw.Crop(body, body.Max.X-body.Min.X-lw+margin, 0, 0, -vg.Points(22))
		lg.Draw(area)
		body = draw.Crop(body, 0, -lw, 0, 0)
	}
	cols, rows := f.grid()
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	var (
		bar      *plot.Plot
		barPanel [2]int
	)
	for i := range f.Panels {
		p, b, err := f.Panels[i].plot()
		if err != nil {
			return fmt.Errorf("%w: %s: panel %d: %w", ErrFigure, f.ID, i, err)
		}
		plots[i/cols][i%cols] = p
		if b != nil {
			bar, barPanel = b, [2]int{i / cols, i % cols}
		}
	}
	var barArea draw.Canvas
	if bar != nil {
		// The bar's own column, 0.3 in clear of the heat map's frame; its
		// height is set to the map's rows below.
		barArea = draw.Crop(body, body.Max.X-body.Min.X-barW+0.3*vg.Inch, -0.15*vg.Inch, 0, 0)
		body = draw.Crop(body, 0, -barW, 0, 0)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(14)}
	canvases := plot.Align(plots, tiles, body)
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	if bar != nil {
		// The colour bar spans the heat map's rows.
		dc := plots[barPanel[0]][barPanel[1]].DataCanvas(canvases[barPanel[0]][barPanel[1]])
		barArea.Min.Y, barArea.Max.Y = dc.Min.Y, dc.Max.Y
		bar.Draw(barArea)
	}
	return nil
}

// newPlot returns a gonum plot with the figures' text handler and sizes
// (gonum's alignments are kept).
func newPlot() *plot.Plot {
	pl := plot.New()
	pl.TextHandler = handler
	pl.Title.TextStyle.Handler = handler
	pl.Title.TextStyle.Font.Size = sizePanel
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Handler, a.Tick.Label.Handler = handler, handler
		a.Label.TextStyle.Font.Size = sizeLabel
		a.Tick.Label.Font.Size = sizeTick
	}
	pl.Legend.TextStyle.Handler = handler
	return pl
}

// plot builds the gonum plot of a panel, and the colour bar of a heat map.
func (p *Panel) plot() (*plot.Plot, *plot.Plot, error) {
	pl := newPlot()
	pl.Title.Text = p.Title
	pl.X.Label.Text, pl.Y.Label.Text = p.X.Label, p.Y.Label
	if p.Heat != nil {
		bar, err := p.heat(pl)
		return pl, bar, err
	}
	// Log axes are drawn as linear axes of log₁₀ values with decade ticks
	// (gonum's LogScale places the axis label's glyph box at the
	// arithmetic midpoint of the range, which squeezes log panels).
	series, marks := p.scaled()
	xr, yr := ranges(series, marks, len(p.X.Ticks))
	setAxis(&pl.X, p.X, xr)
	setAxis(&pl.Y, p.Y, yr)
	gr := plotter.NewGrid()
	gr.Vertical.Color, gr.Horizontal.Color = color.Gray{0xe4}, color.Gray{0xe4}
	gr.Vertical.Width, gr.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	if len(p.X.Ticks) > 0 {
		gr.Vertical.Color = nil
	}
	pl.Add(gr)
	for _, m := range marks {
		if err := addMark(pl, m, xr, yr); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range series {
		if err := addSeries(pl, s); err != nil {
			return nil, nil, err
		}
	}
	return pl, nil, nil
}

// scaled returns copies of the panel's series and marks with the values on
// log axes replaced by their base-10 logarithms.
func (p *Panel) scaled() ([]Series, []Mark) {
	tr := func(log bool, vs []float64) []float64 {
		out := make([]float64, len(vs))
		for i, v := range vs {
			out[i] = v
			if log {
				out[i] = math.Log10(v)
			}
		}
		return out
	}
	series := make([]Series, len(p.Series))
	for i, s := range p.Series {
		s.X, s.Y = tr(p.X.Log, s.X), tr(p.Y.Log, s.Y)
		series[i] = s
	}
	marks := make([]Mark, len(p.Marks))
	for i, m := range p.Marks {
		if m.Vertical && p.X.Log || !m.Vertical && p.Y.Log {
			m.Value = math.Log10(m.Value)
		}
		marks[i] = m
	}
	return series, marks
}

// span is an axis range.
type span struct{ min, max float64 }

// ranges returns the ranges of the axes over the (scaled) series and
// marks; a categorical x axis of n categories spans [−0.5, n−0.5].
func ranges(series []Series, marks []Mark, categories int) (x, y span) {
	x, y = span{math.Inf(1), math.Inf(-1)}, span{math.Inf(1), math.Inf(-1)}
	for _, s := range series {
		for k := range s.X {
			if math.IsNaN(s.X[k]) || math.IsNaN(s.Y[k]) {
				continue
			}
			x.add(s.X[k])
			y.add(s.Y[k])
		}
	}
	for _, m := range marks {
		if m.Vertical {
			x.add(m.Value)
		} else {
			y.add(m.Value)
		}
	}
	for _, a := range []*span{&x, &y} {
		if math.IsInf(a.min, 1) { // no data
			a.min, a.max = 0, 1
		}
		if a.min == a.max {
			a.min, a.max = a.min-0.5, a.max+0.5
		}
		// 3 % of air on both sides, so that no point sits on the frame.
		pad := 0.03 * (a.max - a.min)
		a.min, a.max = a.min-pad, a.max+pad
	}
	if categories > 0 {
		x = span{-0.5, float64(categories) - 0.5}
	}
	return x, y
}

func (s *span) add(v float64) {
	s.min, s.max = math.Min(s.min, v), math.Max(s.max, v)
}

func setAxis(a *plot.Axis, ax Axis, r span) {
	a.Min, a.Max = r.min, r.max
	switch {
	case len(ax.Ticks) > 0:
		ts := make(plot.ConstantTicks, len(ax.Ticks))
		for i, t := range ax.Ticks {
			ts[i] = plot.Tick{Value: t.Value, Label: t.Label}
		}
		a.Tick.Marker = ts
	case ax.Log:
		a.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
			ts := floorTicks(logTicks(math.Pow(10, lo), math.Pow(10, hi)), ax.Floor)
			for i := range ts {
				ts[i].Value = math.Log10(ts[i].Value)
			}
			return ts
		})
	case ax.Integer:
		a.Tick.Marker = plot.TickerFunc(integerTicks)
	default:
		a.Tick.Marker = plot.TickerFunc(linearTicks)
	}
}

// logTicks returns ticks for a log axis: a labelled tick at every decade
// (every second or third one on wide ranges), unlabelled minor ticks at
// 2..9 times a decade, and labelled ticks at 2 and 5 times a decade on
// ranges of less than two decades.
func logTicks(lo, hi float64) []plot.Tick {
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	decades := e1 - e0
	span := math.Log10(hi / lo)
	every := 1
	switch {
	case span > 18:
		every = 4
	case span > 12:
		every = 3
	case span > 6:
		every = 2
	}
	var ticks []plot.Tick
	for e := e0; e <= e1; e++ {
		v := math.Pow(10, float64(e))
		label := ""
		if (e-e0)%every == 0 {
			label = powerLabel(e)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
		if decades > 8 || e == e1 {
			continue
		}
		for m := 2; m <= 9; m++ {
			t := plot.Tick{Value: float64(m) * v}
			if span <= 2 && (m == 2 || m == 5) {
				t.Label = strconv.Itoa(m) + "·" + powerLabel(e)
				if e >= -2 && e <= 3 {
					t.Label = strconv.FormatFloat(float64(m)*v, 'f', -1, 64)
				}
			}
			ticks = append(ticks, t)
		}
	}
	return relabelNarrow(ticks, lo, hi)
}

// floorTicks, for a log axis with zeros drawn at floor > 0, drops the
// ticks from the floor up to (not including) ten times the floor and puts a
// tick labelled "0" at the floor; with floor ≤ 0 it returns ticks as they
// are.
func floorTicks(ticks []plot.Tick, floor float64) []plot.Tick {
	if !(floor > 0) {
		return ticks
	}
	out := []plot.Tick{{Value: floor, Label: "0"}}
	for _, t := range ticks {
		if t.Value < 10*floor*(1-1e-9) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// relabelNarrow makes sure a log axis narrower than a decade has at least
// two labelled ticks inside [lo, hi] (a colour bar over 0.027–0.074 had only
// "0.05"): it labels every m·10^e tick there, and if that is still too few
// (a range within one m·10^e step), it returns round linear ticks instead.
func relabelNarrow(ticks []plot.Tick, lo, hi float64) []plot.Tick {
	inside := func() int {
		n := 0
		for _, t := range ticks {
			if t.Label != "" && t.Value >= lo && t.Value <= hi {
				n++
			}
		}
		return n
	}
	if inside() >= 2 {
		return ticks
	}
	for i, t := range ticks {
		if t.Label == "" && t.Value >= lo && t.Value <= hi {
			e := int(math.Floor(math.Log10(t.Value) + 1e-9))
			m := int(math.Round(t.Value / math.Pow(10, float64(e))))
			ticks[i].Label = strconv.Itoa(m) + "·" + powerLabel(e)
			if e >= -2 && e <= 3 {
				ticks[i].Label = strconv.FormatFloat(float64(m)*math.Pow(10, float64(e)), 'f', max(0, -e), 64)
			}
		}
	}
	if inside() >= 2 {
		return ticks
	}
	return linearTicks(lo, hi)
}

// powerLabel writes 10^e as a decimal for −2 ≤ e ≤ 3 and with a raised
// exponent otherwise ("10^{−6}", see richText).
func powerLabel(e int) string {
	if e >= -2 && e <= 3 {
		return strconv.FormatFloat(math.Pow(10, float64(e)), 'f', -1, 64)
	}
	return "10^{" + strings.Replace(strconv.Itoa(e), "-", "−", 1) + "}"
}

// linearTicks returns labelled ticks at a round step (1, 2 or 5 times a
// power of ten) giving 4 to 10 of them, with as many decimals as the step
// needs, and unlabelled ticks halfway.
func linearTicks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	raw := (hi - lo) / 5
	e := math.Floor(math.Log10(raw))
	step := math.Pow(10, e)
	// The smallest of 1, 2, 5, 10 times 10^e that is at least 2/3 of the
	// raw step: 4 to 10 labelled ticks over the range.
	for _, m := range []float64{2, 5, 10} {
		if step*1.5 >= raw {
			break
		}
		step = m * math.Pow(10, e)
	}
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo / step * 2); i/2*step <= hi; i++ {
		v := i / 2 * step
		if math.Mod(i, 2) != 0 {
			ticks = append(ticks, plot.Tick{Value: v})
			continue
		}
		if math.Abs(v) < step*1e-9 {
			v = 0 // no "−0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strings.Replace(strconv.FormatFloat(v, 'f', dec, 64), "-", "−", 1)})
	}
	return ticks
}

// integerTicks returns ticks at integers, at most about 10 labelled.
func integerTicks(lo, hi float64) []plot.Tick {
	step := math.Max(1, math.Ceil((hi-lo)/8))
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		if v == 0 {
			v = 0 // not −0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strings.Replace(strconv.FormatFloat(v, 'f', 0, 64), "-", "−", 1)})
	}
	return ticks
}

// addMark draws a reference line across the panel and its label.
func addMark(pl *plot.Plot, m Mark, x, y span) error {
	var pts plotter.XYs
	if m.Vertical {
		pts = plotter.XYs{{X: m.Value, Y: y.min}, {X: m.Value, Y: y.max}}
	} else {
		pts = plotter.XYs{{X: x.min, Y: m.Value}, {X: x.max, Y: m.Value}}
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.LineStyle = markStyle(m)
	pl.Add(l)
	if m.Label == "" {
		return nil
	}
	st := textStyle(sizeMark)
	st.Color = colourOf(m.Style)
	lab := plotter.XYLabels{XYs: plotter.XYs{pts[1]}, Labels: []string{m.Label}}
	if !m.Vertical {
		lab.XYs = plotter.XYs{{X: x.min, Y: m.Value}}
	}
	ls, err := plotter.NewLabels(lab)
	if err != nil {
		return err
	}
	ls.TextStyle[0] = st
	if m.Vertical {
		ls.TextStyle[0].XAlign, ls.TextStyle[0].YAlign = draw.XLeft, draw.YTop
		ls.Offset = vg.Point{X: vg.Points(2), Y: -vg.Points(2)}
	} else {
		ls.TextStyle[0].XAlign, ls.TextStyle[0].YAlign = draw.XLeft, draw.YBottom
		ls.Offset = vg.Point{X: vg.Points(3), Y: vg.Points(1.5)}
	}
	pl.Add(ls)
	return nil
}

// addSeries draws a series: lines split at NaN, markers at non-NaN points.
func addSeries(pl *plot.Plot, s Series) error {
	var segs []plotter.XYs
	var cur plotter.XYs
	for k := range s.X {
		if math.IsNaN(s.X[k]) || math.IsNaN(s.Y[k]) {
			if len(cur) > 0 {
				segs, cur = append(segs, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: s.X[k], Y: s.Y[k]})
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	for _, seg := range segs {
		switch s.Kind {
		case Line, Steps, LinePoints:
			if len(seg) == 1 && s.Kind != LinePoints {
				// A lone point between gaps: a dot, or it would vanish.
				sc, err := plotter.NewScatter(seg)
				if err != nil {
					return err
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: colourOf(s.Style), Radius: vg.Points(1.2), Shape: draw.CircleGlyph{}}
				pl.Add(sc)
				continue
			}
			l, err := plotter.NewLine(seg)
			if err != nil {
				return err
			}
			l.LineStyle = lineStyle(s.Style)
			if s.Kind == Steps {
				l.StepStyle = plotter.PostStep
				l.LineStyle.Dashes = nil
			}
			pl.Add(l)
		}
		if s.Kind == Points || s.Kind == LinePoints || s.Kind == Cloud {
			sc, err := plotter.NewScatter(seg)
			if err != nil {
				return err
			}
			alpha := uint8(0xff)
			if s.Kind == Cloud {
				alpha = 0x60 // translucent, so that dense clouds show their density
			}
			sc.GlyphStyle = glyphStyle(s.Style, pointRadius(s.Kind), alpha)
			pl.Add(sc)
		}
	}
	return nil
}

// luminance returns the relative luminance of c in [0, 1] (ITU-R BT.709
// weights on the non-linear components, enough to pick a text colour).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

// heatGrid adapts a Heat to plotter.GridXYZ.
type heatGrid struct{ h *Heat }

func (g heatGrid) Dims() (c, r int)   { return len(g.h.Z[0]), len(g.h.Z) }
func (g heatGrid) Z(c, r int) float64 { return g.h.Z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// heatColours is a sequential colour map, light yellow (small) to dark red
// (large): ColorBrewer's YlOrRd with luminance interpolation.
func heatColours() (palette.ColorMap, error) {
	pal, err := brewer.GetPalette(brewer.TypeSequential, "YlOrRd", 9)
	if err != nil {
		return nil, err
	}
	// NewLuminance wants luminance increasing: give it dark red to light
	// yellow and reverse the map.
	cs := slices.Clone(pal.Colors())
	slices.Reverse(cs)
	cm, err := moreland.NewLuminance(cs)
	if err != nil {
		return nil, err
	}
	return palette.Reverse(cm), nil
}

// heat draws the heat map into pl and returns its colour bar.
func (p *Panel) heat(pl *plot.Plot) (*plot.Plot, error) {
	h := p.Heat
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range h.Z {
		for _, v := range row {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	cm, err := heatColours()
	if err != nil {
		return nil, err
	}
	cm.SetMin(lo)
	cm.SetMax(hi)
	setAxis(&pl.X, p.X, span{-0.5, float64(len(p.X.Ticks)) - 0.5})
	setAxis(&pl.Y, p.Y, span{-0.5, float64(len(p.Y.Ticks)) - 0.5})
	if len(h.Z) > 0 && len(h.Z[0]) > 0 {
		hm := plotter.NewHeatMap(heatGrid{h}, cm.Palette(256))
		hm.Min, hm.Max = lo, hi
		hm.NaN = color.Gray{0xd0}
		pl.Add(hm)
		var lab plotter.XYLabels
		for r, row := range h.Text {
			for c, t := range row {
				lab.XYs = append(lab.XYs, plotter.XY{X: float64(c), Y: float64(r)})
				lab.Labels = append(lab.Labels, t)
			}
		}
		ls, err := plotter.NewLabels(lab)
		if err != nil {
			return nil, err
		}
		i := 0
		for _, row := range h.Z {
			for _, z := range row {
				ls.TextStyle[i] = textStyle(sizeLabel)
				ls.TextStyle[i].XAlign, ls.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
				if !math.IsNaN(z) {
					// White text on cells darker than mid-grey (0.45
					// rather than 0.5: black stays on the palette's
					// saturated oranges, where it reads better).
					if c, err := cm.At(z); err == nil && luminance(c) < 0.45 {
						ls.TextStyle[i].Color = color.White
					}
				}
				i++
			}
		}
		pl.Add(ls)
	}
	bar := newPlot()
	bar.HideX()
	bar.Y.Label.Text = h.Label
	bar.Y.Min, bar.Y.Max = lo, hi
	bar.Y.Padding = 0
	if h.Log {
		bar.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
			ts := logTicks(math.Pow(10, lo), math.Pow(10, hi))
			for i := range ts {
				ts[i].Value = math.Log10(ts[i].Value)
			}
			return ts
		})
	}
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	return bar, nil
}
