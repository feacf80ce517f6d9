package speccheck

import (
	"bytes"
	"regexp"
	"strings"
)

// headingRE matches a numbered heading of docs/spec.md: "## §1. Title",
// "### §1.2 Title".
var headingRE = regexp.MustCompile(`^#{2,4} §(\d+(?:\.\d+)*)\.?\s`)

// Headings returns the section numbers of the numbered headings of a
// Markdown document ("1", "1.2", …), in order.
func Headings(md []byte) []string {
	var out []string
	for _, line := range bytes.Split(md, []byte("\n")) {
		if m := headingRE.FindSubmatch(line); m != nil {
			out = append(out, string(m[1]))
		}
	}
	return out
}

// Ref is one section reference found in a text.
type Ref struct {
	// Section is the section number referred to, such as "1.2".
	Section string
	// Line is the 1-based line of the reference.
	Line int
	// Text is the reference as written, such as "spec §1.2".
	Text string
	// Legacy reports a reference in a form other than the current ones,
	// "spec §n" and "docs/spec.md §n" in lower case: the upper-case form, or
	// the file name with its extension, of the time before docs/spec.md
	// existed (tools/rewrite-spec-refs.sh rewrites them).
	Legacy bool
}

// refRE matches a reference and any further sections listed after it
// ("spec §2–§5", "spec §3 and §8", "spec §1, §4").
var (
	refRE  = regexp.MustCompile(`(?i)(?:docs/)?\bspec(?:\.md)? §(\d+(?:\.\d+)?)((?:\s*(?:,|–|-|and|or|to)\s*§\d+(?:\.\d+)?)*)`)
	moreRE = regexp.MustCompile(`§(\d+(?:\.\d+)?)`)
)

// References returns the section references of text, each listed section
// of a reference separately.
func References(text []byte) []Ref {
	var out []Ref
	for i, line := range bytes.Split(text, []byte("\n")) {
		for _, m := range refRE.FindAllSubmatchIndex(line, -1) {
			whole := string(line[m[0]:m[1]])
			legacy := !strings.HasPrefix(whole, "spec §") && !strings.HasPrefix(whole, "docs/spec.md §")
			head := string(line[m[0]:m[3]])
			out = append(out, Ref{Section: string(line[m[2]:m[3]]), Line: i + 1, Text: head, Legacy: legacy})
			if m[4] >= 0 {
				for _, mm := range moreRE.FindAllSubmatch(line[m[4]:m[5]], -1) {
					out = append(out, Ref{Section: string(mm[1]), Line: i + 1, Text: "§" + string(mm[1]), Legacy: legacy})
				}
			}
		}
	}
	return out
}
