package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	stdhtml "html"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
	"unlearn/internal/atomicfile"
)

// checkSVG parses b as XML and checks that its root element is <svg>.
func checkSVG(t *testing.T, name string, b []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "%s: not well-formed XML", name)
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	require.Equal(t, "svg", root, "%s: root element", name)
}

// checkPNG decodes b as PNG and checks that it is at least one panel big.
func checkPNG(t *testing.T, name string, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err, "%s: not a PNG", name)
	// A panel is 4.4 × 3.4 in at DPI dots per inch.
	sz := img.Bounds().Size()
	require.GreaterOrEqual(t, sz.X, int(4.4*DPI), "%s: width in pixels, smaller than one panel", name)
	require.GreaterOrEqual(t, sz.Y, int(3.4*DPI), "%s: height in pixels, smaller than one panel", name)
}

// quadraticOnly returns the results restricted to the quadratic stream:
// every kind of figure, half the drawing (under the race detector a figure
// takes about half a second).
func quadraticOnly(res *experiment.Results) *experiment.Results {
	out := &experiment.Results{Manifest: res.Manifest}
	for _, r := range res.Records {
		if r.Source.Kind == "quadratic" {
			out.Records = append(out.Records, r)
		}
	}
	return out
}

func TestReportWrite(t *testing.T) {
	r := fixed(t)
	for _, tt := range []struct {
		name string
		res  *experiment.Results
	}{{"decay", quadraticOnly(r.decay)}, {"bench", r.bench}} {
		t.Run(tt.name, func(t *testing.T) {
			res := *tt.res
			res.Manifest.Provenance = &experiment.Provenance{Command: []string{"unlearn", tt.name, "--out", "x"}, Version: "test"}
			rep, err := FromResults(&res, "x", Options{})
			require.NoError(t, err)
			dir := filepath.Join(t.TempDir(), "report")
			require.NoError(t, rep.Write(dir))
			html := readFile(t, filepath.Join(dir, HTMLFile))
			md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
			// The embedded images, attribute entities (html/template writes
			// "+" as &#43;) decoded.
			var srcs []string
			for _, m := range regexp.MustCompile(`<img src="([^"]*)"`).FindAllSubmatch(html, -1) {
				srcs = append(srcs, stdhtml.UnescapeString(string(m[1])))
			}
			for _, f := range rep.Figures.Figures {
				t.Run(f.ID, func(t *testing.T) {
					p := readFile(t, filepath.Join(dir, FiguresDir, f.ID+".png"))
					s := readFile(t, filepath.Join(dir, FiguresDir, f.ID+".svg"))
					require.NotEmpty(t, p, "empty PNG file")
					require.NotEmpty(t, s, "empty SVG file")
					checkPNG(t, f.ID+".png", p)
					checkSVG(t, f.ID+".svg", s)
					// The page embeds exactly this PNG.
					if !slices.Contains(srcs, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(p)) {
						t.Error("report.html does not embed the figure's PNG")
					}
					if !strings.Contains(md, "]("+FiguresDir+"/"+f.ID+".png)") {
						t.Error("report.md does not link the figure")
					}
				})
			}
			t.Run("self-contained page", func(t *testing.T) {
				// No external resources: every src is a data URI, no links
				// to style sheets or scripts.
				for _, m := range regexp.MustCompile(`(?i)(src|href)="([^"]*)"`).FindAllSubmatch(html, -1) {
					if !bytes.HasPrefix(m[2], []byte("data:")) {
						t.Errorf("external reference %s", m[0])
					}
				}
				if bytes.Contains(html, []byte("<script")) || bytes.Contains(html, []byte("<link")) {
					t.Error("the page loads scripts or style sheets")
				}
			})
			t.Run("names command, version and seeds", func(t *testing.T) {
				for _, want := range []string{"unlearn " + tt.name + " --out x", "unlearn test", "| seeds (stream, random deletions, probes) |"} {
					if !strings.Contains(md, want) {
						t.Errorf("report.md lacks %q", want)
					}
				}
				if !bytes.Contains(html, []byte("<code>unlearn "+tt.name+" --out x</code>")) {
					t.Error("report.html does not name the command")
				}
			})
			t.Run("figures.json is the figure data", func(t *testing.T) {
				var got Set
				require.NoError(t, json.Unmarshal(readFile(t, filepath.Join(dir, DataFile)), &got))
				require.Equal(t, len(rep.Figures.Figures), len(got.Figures), "figures in figures.json")
				for i, f := range rep.Figures.Figures {
					assert.Equal(t, f.ID, got.Figures[i].ID, "figure %d in figures.json", i)
					assert.Equal(t, f.Caption, got.Figures[i].Caption, "caption of %s in figures.json", f.ID)
					assert.Len(t, got.Figures[i].Panels, len(f.Panels), "panels of %s in figures.json", f.ID)
				}
				assert.Equal(t, rep.Figures.Omitted, got.Omitted, "omitted figures in figures.json")
			})
		})
	}
}

func TestReportFromRecord(t *testing.T) {
	r := fixed(t)
	var rec *experiment.Record
	for _, q := range r.bench.Records {
		if q.Methods[0].Series != nil {
			rec = q
		}
	}
	rec2 := *rec
	rec2.Provenance = &experiment.Provenance{Command: []string{"unlearn", "run", "--out", "run.json"}, Version: "test"}
	rep, err := FromRecord(&rec2, "run.json", Options{})
	require.NoError(t, err)
	if assert.Len(t, rep.Tables, 1, "tables, want the run table") {
		assert.Equal(t, "run", rep.Tables[0].Name, "table")
	}
	var b bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&b))
	for _, want := range []string{"unlearn run --out run.json", "bench-trajectories", fmt.Sprintf("U = %v", rec.U)} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report of a record lacks %q", want)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestDeterministic renders figures of several kinds (a heat map, clouds,
// steps with marks) twice, and writes a report twice: every
// byte must agree (gonum/plot's PNG and SVG output has no timestamps or
// random identifiers; figures render in parallel, each on its own canvas).
func TestDeterministic(t *testing.T) {
	r := fixed(t)
	decay := mustFigures(t, r.decay.Records)
	bench := mustFigures(t, r.bench.Records)
	// A heat map with text and colour bar, and translucent scatter clouds
	// with medians and a floor line; the report folder adds steps and marks
	// (decay-mass). Under the race detector each rendering takes about half
	// a second, hence three figures rather than all.
	figs := []*Figure{figureByID(t, decay, "decay-heatmap-quadratic"), figureByID(t, bench, "bench-efficiency-quadratic")}
	for _, f := range figs {
		t.Run(f.ID, func(t *testing.T) {
			for _, w := range []struct {
				ext   string
				write func(io.Writer) error
			}{{"png", f.WritePNG}, {"svg", f.WriteSVG}} {
				var a, b bytes.Buffer
				require.NoError(t, w.write(&a))
				require.NoError(t, w.write(&b))
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("%s differs between two renderings", w.ext)
				}
			}
		})
	}
	t.Run("report folder", func(t *testing.T) {
		rep := smallReport([]*Figure{figureByID(t, decay, "decay-mass-quadratic")})
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		require.NoError(t, rep.Write(a))
		require.NoError(t, rep.Write(b))
		files := []string{HTMLFile, MarkdownFile, DataFile}
		for _, f := range rep.Figures.Figures {
			files = append(files, filepath.Join(FiguresDir, f.ID+".png"), filepath.Join(FiguresDir, f.ID+".svg"))
		}
		for _, f := range files {
			if !bytes.Equal(readFile(t, filepath.Join(a, f)), readFile(t, filepath.Join(b, f))) {
				t.Errorf("%s differs between two writes of the same report", f)
			}
		}
	})
}

// smallReport is a report of the given figures and no tables.
func smallReport(figs []*Figure) *Report {
	return &Report{Title: "test", Source: "x", Setup: []Item{{"a", "b"}}, Figures: &Set{Figures: figs}}
}

func TestReportWriteRefusesForeignFolders(t *testing.T) {
	r := fixed(t)
	rep := smallReport([]*Figure{figureByID(t, mustFigures(t, r.decay.Records), "decay-rates-quadratic")})
	dir := t.TempDir()
	keep := filepath.Join(dir, "thesis.tex")
	require.NoError(t, os.WriteFile(keep, []byte("precious"), 0o644))
	require.ErrorIs(t, rep.Write(dir), atomicfile.ErrNotReplaceable, "Write into a foreign folder")
	require.Equal(t, "precious", string(readFile(t, keep)), "a refused Write touched the folder")
	// A previous report is replaced.
	out := filepath.Join(dir, "report")
	for range 2 {
		require.NoError(t, rep.Write(out), "writing over a previous report")
	}
}

func TestValidate(t *testing.T) {
	ok := func() *Figure {
		return &Figure{ID: "f", Panels: []Panel{{
			X: Axis{Label: "x"}, Y: Axis{Label: "y", Log: true},
			Series: []Series{{Name: "s", Kind: Line, X: experiment.Floats{0, 1}, Y: experiment.Floats{1, 2}}},
		}}}
	}
	tests := []struct {
		name   string
		mutate func(f *Figure)
		ok     bool
	}{
		{"valid", func(*Figure) {}, true},
		{"NaN on a log axis is a gap", func(f *Figure) { f.Panels[0].Series[0].Y[0] = nan() }, true},
		{"no panels", func(f *Figure) { f.Panels = nil }, false},
		{"unequal lengths", func(f *Figure) { f.Panels[0].Series[0].X = experiment.Floats{0} }, false},
		{"zero on a log axis", func(f *Figure) { f.Panels[0].Series[0].Y[1] = 0 }, false},
		{"infinite value", func(f *Figure) { f.Panels[0].Series[0].X[1] = inf() }, false},
		{"mark at zero on a log axis", func(f *Figure) { f.Panels[0].Marks = []Mark{{Value: 0}} }, false},
		{"ragged heat map", func(f *Figure) {
			f.Panels[0] = Panel{X: Axis{Ticks: categorical([]string{"a", "b"})}, Y: Axis{Ticks: categorical([]string{"c"})},
				Heat: &Heat{Z: []experiment.Floats{{1}}, Text: [][]string{{"1"}}}}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ok()
			tt.mutate(f)
			err := f.Validate()
			if tt.ok {
				require.NoError(t, err, "Validate")
				require.NoError(t, f.WritePNG(io.Discard), "WritePNG")
			} else {
				require.ErrorIs(t, err, ErrFigure, "Validate")
				require.Error(t, f.WritePNG(io.Discard), "WritePNG")
			}
		})
	}
}
