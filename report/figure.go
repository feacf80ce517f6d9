package report

import (
	"math"

	"unlearn/experiment"
)

// Figure is the data of one figure: every value it plots, computed from run
// records, with its text. It is plain data — it encodes as JSON (NaN as
// null, see experiment.Floats) and golden tests compare it — and
// [Figure.WritePNG] and [Figure.WriteSVG] draw it.
type Figure struct {
	// ID is the file stem of the figure ("decay-rates-quadratic", …).
	ID string `json:"id"`
	// Paper is the \label of the paper's figure this one reproduces.
	Paper string `json:"paper"`
	// Title is drawn above the panels.
	Title string `json:"title"`
	// Caption says what the figure shows, which records it aggregates and
	// how, and how values that a log axis cannot show were treated.
	Caption string `json:"caption"`
	// Cols is the number of panels per row (at least 1).
	Cols int `json:"cols"`
	// Panels are drawn left to right, top to bottom.
	Panels []Panel `json:"panels"`
	// Legend holds entries beyond the series' own (reference-line styles);
	// the legend lists every distinct series name first, in order.
	Legend []LegendItem `json:"legend,omitempty"`
}

// Panel is one set of axes: series, reference marks, or a heat map.
type Panel struct {
	Title  string   `json:"title,omitempty"`
	X      Axis     `json:"x"`
	Y      Axis     `json:"y"`
	Series []Series `json:"series,omitempty"`
	Marks  []Mark   `json:"marks,omitempty"`
	Heat   *Heat    `json:"heat,omitempty"`
}

// Axis describes one axis of a panel.
type Axis struct {
	// Label names the quantity and its unit; "_{…}" and "^{…}" are drawn
	// as subscripts and superscripts ("E_{Θ}(k)").
	Label string `json:"label"`
	// Log selects a base-10 logarithmic scale; the panel then holds no
	// value ≤ 0 on this axis (builders drop or floor them and say so in the
	// caption).
	Log bool `json:"log,omitempty"`
	// Ticks, if not empty, are the only ticks (categorical axes: the
	// values are positions 0, 1, …).
	Ticks []Tick `json:"ticks,omitempty"`
	// Integer asks for ticks at integers only (counts).
	Integer bool `json:"integer,omitempty"`
	// Floor, if positive, is where a log axis draws the values 0 it cannot
	// show (see floorPanel): the axis labels that position "0" and has no
	// other tick between it and the next decade, so that a zero is never
	// read as the power of ten it is drawn at.
	Floor float64 `json:"floor,omitempty"`
}

// Tick is a labelled position on a categorical axis.
type Tick struct {
	Value float64 `json:"value"`
	Label string  `json:"label"`
}

// SeriesKind says how a series is drawn.
type SeriesKind string

// Series kinds.
const (
	// Line joins the points; NaN values break the line.
	Line SeriesKind = "line"
	// Steps draws a staircase (the value holds until the next x).
	Steps SeriesKind = "steps"
	// Points draws a marker at each point; NaN points are left out.
	Points SeriesKind = "points"
	// LinePoints draws both.
	LinePoints SeriesKind = "linepoints"
	// Cloud draws small translucent markers (one per configuration), not
	// listed in the legend.
	Cloud SeriesKind = "cloud"
)

// Series is a list of points drawn in one style.
type Series struct {
	// Name is the legend entry: the method's Label() as in the tables,
	// "τ = 10", …; empty for no entry.
	Name string `json:"name,omitempty"`
	// Style indexes the style cycle (colour, dash, marker): series of the
	// same Style look the same in every figure (methods use their index in
	// the records, so each method keeps its colour). A negative Style is
	// a grey dashed reference line (e.g. the diagonal y = x).
	Style int               `json:"style"`
	Kind  SeriesKind        `json:"kind"`
	X     experiment.Floats `json:"x"`
	Y     experiment.Floats `json:"y"`
}

// Mark is a reference line across a panel.
type Mark struct {
	// Vertical marks x = Value; otherwise y = Value.
	Vertical bool    `json:"vertical,omitempty"`
	Value    float64 `json:"value"`
	// Label is written beside the line (may be empty).
	Label string `json:"label,omitempty"`
	// Style is the colour of a series' Style, or -1 for grey.
	Style int `json:"style"`
	// Dash is a dash pattern: 0 solid, 1 dashed, 2 dotted.
	Dash int `json:"dash"`
}

// LegendItem is a legend entry drawn as a line of a mark's style.
type LegendItem struct {
	Name  string `json:"name"`
	Style int    `json:"style"`
	Dash  int    `json:"dash"`
}

// Heat is a heat map over two categorical axes: cell (i, j) is row i of
// the Y axis' ticks and column j of the X axis' ticks.
type Heat struct {
	// Z[i][j] is the colour value (NaN: no data, drawn grey).
	Z []experiment.Floats `json:"z"`
	// Text[i][j] is written in the cell.
	Text [][]string `json:"text"`
	// Label names the colour scale (quantity and unit).
	Label string `json:"label"`
	// Log says that Z holds base-10 logarithms: the colour bar is then
	// labelled with the values (10^{e}), not their logarithms.
	Log bool `json:"log,omitempty"`
}

// newHeat returns a Heat of rows × cols NaN cells.
func newHeat(rows, cols int, label string) *Heat {
	h := &Heat{Label: label, Z: make([]experiment.Floats, rows), Text: make([][]string, rows)}
	for i := range h.Z {
		h.Z[i] = make(experiment.Floats, cols)
		h.Text[i] = make([]string, cols)
		for j := range h.Z[i] {
			h.Z[i][j] = math.NaN()
		}
	}
	return h
}
