package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
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
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", name, root)
	}
}

// checkPNG decodes b as PNG and checks that it is at least one panel big.
func checkPNG(t *testing.T, name string, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	// A panel is 4.4 × 3.4 in at DPI dots per inch.
	if sz := img.Bounds().Size(); sz.X < int(4.4*DPI) || sz.Y < int(3.4*DPI) {
		t.Fatalf("%s: %v pixels, smaller than one panel", name, sz)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "report")
			if err := rep.Write(dir); err != nil {
				t.Fatal(err)
			}
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
					if len(p) == 0 || len(s) == 0 {
						t.Fatal("empty figure file")
					}
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
				if err := json.Unmarshal(readFile(t, filepath.Join(dir, DataFile)), &got); err != nil {
					t.Fatal(err)
				}
				if len(got.Figures) != len(rep.Figures.Figures) || got.Figures[0].ID != rep.Figures.Figures[0].ID {
					t.Fatalf("figures.json holds %d figures, want %d", len(got.Figures), len(rep.Figures.Figures))
				}
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
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 1 || rep.Tables[0].Name != "run" {
		t.Errorf("tables %v, want the run table", rep.Tables)
	}
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unlearn run --out run.json", "bench-trajectories", fmt.Sprintf("U = %v", rec.U)} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report of a record lacks %q", want)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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
				if err := w.write(&a); err != nil {
					t.Fatal(err)
				}
				if err := w.write(&b); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("%s differs between two renderings", w.ext)
				}
			}
		})
	}
	t.Run("report folder", func(t *testing.T) {
		rep := smallReport([]*Figure{figureByID(t, decay, "decay-mass-quadratic")})
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		if err := rep.Write(a); err != nil {
			t.Fatal(err)
		}
		if err := rep.Write(b); err != nil {
			t.Fatal(err)
		}
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
	if err := os.WriteFile(keep, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rep.Write(dir); !errors.Is(err, atomicfile.ErrNotReplaceable) {
		t.Fatalf("Write into a foreign folder: %v, want ErrNotReplaceable", err)
	}
	if string(readFile(t, keep)) != "precious" {
		t.Fatal("a refused Write touched the folder")
	}
	// A previous report is replaced.
	out := filepath.Join(dir, "report")
	for range 2 {
		if err := rep.Write(out); err != nil {
			t.Fatalf("writing over a previous report: %v", err)
		}
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
			if tt.ok != (err == nil) {
				t.Fatalf("Validate = %v, want ok = %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrFigure) {
				t.Fatalf("Validate = %v, want ErrFigure", err)
			}
			if err := f.WritePNG(io.Discard); tt.ok != (err == nil) {
				t.Fatalf("WritePNG = %v, want ok = %v", err, tt.ok)
			}
		})
	}
}
