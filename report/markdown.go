package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"unlearn/experiment"
)

// plain removes the sub- and superscript markup of figure text ("E_{Θ}(H)"
// → "E_Θ(H)", "10^{−5}" → "10^−5") for Markdown.
func plain(s string) string {
	var b strings.Builder
	for _, r := range parse(s) {
		switch r.shift {
		case 1:
			b.WriteString("^" + r.s)
		case -1:
			b.WriteString("_" + r.s)
		default:
			b.WriteString(r.s)
		}
	}
	return b.String()
}

// richHTML escapes s for HTML with its markup as <sub> and <sup>.
func richHTML(s string) string {
	var b strings.Builder
	for _, r := range parse(s) {
		switch r.shift {
		case 1:
			b.WriteString("<sup>" + html.EscapeString(r.s) + "</sup>")
		case -1:
			b.WriteString("<sub>" + html.EscapeString(r.s) + "</sub>")
		default:
			b.WriteString(html.EscapeString(r.s))
		}
	}
	return b.String()
}

// mdCell escapes a table cell for Markdown.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// provenanceText says what made the results, in one sentence.
func (r *Report) provenanceText() string {
	p := r.Provenance
	if p == nil {
		return "The results do not record the command that made them (they were written before commands were recorded, or built in code)."
	}
	s := fmt.Sprintf("Made by `%s` (unlearn %s).", strings.Join(p.Command, " "), p.Version)
	for i, part := range p.Parts {
		s += fmt.Sprintf(" Part %d: `%s` (unlearn %s).", i+1, strings.Join(part.Command, " "), part.Version)
	}
	return s
}

// WriteMarkdown writes the report as Markdown; figures are linked as
// figures/ID.png (and .svg) relative to the report, as Write lays them out.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.Title)
	fmt.Fprintf(&b, "%s Source: `%s`.\n\n", r.provenanceText(), r.Source)
	b.WriteString("## Configuration\n\n| Parameter | Value |\n| --- | --- |\n")
	for _, it := range r.Setup {
		fmt.Fprintf(&b, "| %s | %s |\n", mdCell(it.Name), mdCell(it.Value))
	}
	b.WriteString("\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "> %s\n\n", n)
	}
	b.WriteString("## Tables\n\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()
	if err := experiment.WriteTablesMarkdown(w, r.Tables); err != nil {
		return err
	}
	b.WriteString("## Figures\n\n")
	for i, f := range r.Figures.Figures {
		title := plain(f.Title)
		fmt.Fprintf(&b, "### Figure %d. %s\n\n", i+1, title)
		fmt.Fprintf(&b, "![%s](%s/%s.png)\n\n", title, FiguresDir, f.ID)
		fmt.Fprintf(&b, "%s", f.Caption)
		if f.Paper != "" {
			fmt.Fprintf(&b, " Paper: `%s`.", f.Paper)
		}
		fmt.Fprintf(&b, " [SVG](%s/%s.svg)\n\n", FiguresDir, f.ID)
	}
	if len(r.Figures.Omitted) > 0 {
		b.WriteString("### Not drawn\n\n")
		for _, o := range r.Figures.Omitted {
			fmt.Fprintf(&b, "- `%s`: %s\n", o.ID, o.Reason)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
