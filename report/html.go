package report

import (
	"encoding/base64"
	"html/template"
	"io"
	"strings"
)

// htmlPage is the report page: one file, figures embedded as base64 PNG,
// no scripts, no external style sheets, fonts or images.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Serif", "Times New Roman", serif; max-width: 78rem; margin: 2rem auto; padding: 0 1rem; color: #111; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; } h3 { font-size: 1.1rem; }
table { border-collapse: collapse; margin: 0.6rem 0 1.4rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; }
th { background: #f2f2f2; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { background: #f4f4f4; padding: 0 0.2rem; }
figure { margin: 1.2rem 0 2.4rem; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.92rem; max-width: 60rem; }
.note { border-left: 3px solid #c90; padding-left: 0.8rem; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{.Provenance}} Source: <code>{{.Source}}</code>.</p>
<h2>Configuration</h2>
<table>
<tr><th>Parameter</th><th>Value</th></tr>
{{range .Setup}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>
{{end}}</table>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}
<h2>Tables</h2>
{{range .Tables}}<h3>{{.Title}}</h3>
<table>
<tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Numeric}} class="n"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{end}}
<h2>Figures</h2>
{{range $i, $f := .Figures}}<figure id="{{$f.ID}}">
<h3>Figure {{$f.N}}. {{$f.Title}}</h3>
<img src="{{$f.Src}}" alt="{{$f.Alt}}">
<figcaption>{{$f.Caption}}{{if $f.Paper}} Paper: <code>{{$f.Paper}}</code>.{{end}}</figcaption>
</figure>
{{end}}
{{if .Omitted}}<h3>Not drawn</h3>
<ul>
{{range .Omitted}}<li><code>{{.ID}}</code>: {{.Reason}}</li>
{{end}}</ul>
{{end}}
</body>
</html>
`))

type htmlCell struct {
	Text    string
	Numeric bool
}

type htmlTable struct {
	Title   string
	Columns []string
	Rows    [][]htmlCell
}

type htmlFigure struct {
	N              int
	ID, Alt, Paper string
	Src            template.URL
	Title, Caption template.HTML
}

// writeHTML writes the report page with the rendered figures embedded.
func (r *Report) writeHTML(w io.Writer, imgs []rendered) error {
	data := struct {
		Title, Source string
		Provenance    template.HTML
		Setup         []Item
		Notes         []string
		Tables        []htmlTable
		Figures       []htmlFigure
		Omitted       []Omission
	}{Title: r.Title, Source: r.Source, Setup: r.Setup, Notes: r.Notes, Omitted: r.Figures.Omitted}
	// provenanceText marks commands with backquotes; they become <code>.
	var b strings.Builder
	for i, part := range strings.Split(r.provenanceText(), "`") {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(part) + "</code>")
		} else {
			b.WriteString(template.HTMLEscapeString(part))
		}
	}
	data.Provenance = template.HTML(b.String())
	for _, t := range r.Tables {
		ht := htmlTable{Title: t.Title, Columns: t.Columns}
		for _, row := range t.Rows {
			cells := make([]htmlCell, len(row))
			for j, c := range row {
				text := c.Text
				if c.Numeric {
					text = c.Markdown()
				}
				cells[j] = htmlCell{Text: text, Numeric: c.Numeric}
			}
			ht.Rows = append(ht.Rows, cells)
		}
		data.Tables = append(data.Tables, ht)
	}
	for i, f := range r.Figures.Figures {
		data.Figures = append(data.Figures, htmlFigure{
			N: i + 1, ID: f.ID, Alt: plain(f.Title), Paper: f.Paper,
			// A data URI of our own PNG: safe, and html/template would
			// otherwise refuse the data: scheme.
			Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(imgs[i].png)),
			// Titles carry sub/superscript markup; richHTML escapes the text.
			Title: template.HTML(richHTML(f.Title)), Caption: template.HTML(richHTML(f.Caption)),
		})
	}
	return htmlPage.Execute(w, data)
}
