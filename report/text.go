package report

import (
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// richText is a text.Handler for one-line labels with superscripts and
// subscripts: "10^{−5}", "E_{Θ}(k)", "λ_{Z}". The Liberation fonts that
// gonum/plot ships have no superscript minus and its LaTeX handler no
// subscripts, so exponents and indices are drawn as smaller raised or
// lowered runs of the same font. Braces are required; other text is plain.
type richText struct{ fonts *font.Cache }

var _ text.Handler = richText{}

// Script runs are drawn at scriptScale of the font size, raised by
// supRaise or lowered by subDrop font sizes (the usual typographic
// proportions: TeX's \scriptstyle is 0.7).
const (
	scriptScale = 0.7
	supRaise    = 0.38
	subDrop     = 0.18
)

type run struct {
	s     string
	shift int // +1 superscript, −1 subscript
}

// parse splits a line into plain, superscript and subscript runs.
func parse(line string) []run {
	var runs []run
	for line != "" {
		i := strings.IndexAny(line, "^_")
		if i < 0 || i+1 >= len(line) || line[i+1] != '{' {
			if i < 0 {
				runs = append(runs, run{s: line})
				break
			}
			runs = append(runs, run{s: line[:i+1]})
			line = line[i+1:]
			continue
		}
		j := strings.IndexByte(line[i:], '}')
		if j < 0 {
			runs = append(runs, run{s: line})
			break
		}
		if i > 0 {
			runs = append(runs, run{s: line[:i]})
		}
		shift := 1
		if line[i] == '_' {
			shift = -1
		}
		runs = append(runs, run{s: line[i+2 : i+j], shift: shift})
		line = line[i+j+1:]
	}
	return runs
}

func (h richText) Cache() *font.Cache { return h.fonts }

func (h richText) Extents(fnt font.Font) font.Extents {
	face := h.fonts.Lookup(fnt, fnt.Size)
	return face.Extents()
}

func (h richText) Lines(txt string) []string {
	return strings.Split(strings.TrimRight(txt, "\n"), "\n")
}

func scriptFont(fnt font.Font) font.Font {
	fnt.Size = vg.Length(float64(fnt.Size) * scriptScale)
	return fnt
}

func (h richText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	face := h.fonts.Lookup(fnt, fnt.Size)
	ext := face.Extents()
	height, depth = ext.Ascent, ext.Descent
	small := scriptFont(fnt)
	sface := h.fonts.Lookup(small, small.Size)
	sext := sface.Extents()
	for _, r := range parse(txt) {
		if r.shift == 0 {
			width += face.Width(r.s)
			continue
		}
		width += sface.Width(r.s)
		if r.shift > 0 {
			height = max(height, supRaise*fnt.Size+sext.Ascent)
		} else {
			depth = max(depth, subDrop*fnt.Size+sext.Descent)
		}
	}
	return width, height, depth
}

func (h richText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if txt == "" {
		return
	}
	face := h.fonts.Lookup(sty.Font, sty.Font.Size)
	small := scriptFont(sty.Font)
	sface := h.fonts.Lookup(small, small.Size)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	// As text.Plain: rotate the anchor into the rotated frame, then align.
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos, sin := vg.Length(cos64), vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	ht := sty.Height(txt)
	ext := face.Extents()
	pt.Y += ht*vg.Length(sty.YAlign) - ext.Ascent
	for i, line := range lines {
		w, _, _ := h.Box(line, sty.Font)
		x := pt.X + vg.Length(sty.XAlign)*w
		y := pt.Y + vg.Length(len(lines)-i)*sty.Font.Size
		for _, r := range parse(line) {
			switch r.shift {
			case 0:
				c.FillString(face, vg.Point{X: x, Y: y}, r.s)
				x += face.Width(r.s)
			case 1:
				c.FillString(sface, vg.Point{X: x, Y: y + supRaise*sty.Font.Size}, r.s)
				x += sface.Width(r.s)
			default:
				c.FillString(sface, vg.Point{X: x, Y: y - subDrop*sty.Font.Size}, r.s)
				x += sface.Width(r.s)
			}
		}
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}
