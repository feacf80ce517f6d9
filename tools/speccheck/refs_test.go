package speccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// legacyRefsRewritten is flipped to true once tools/rewrite-spec-refs.sh
// has rewritten the references of the time before docs/spec.md (the
// upper-case form and the path of the specification outside the
// repository). Until then the repository still holds them and only the
// current forms are checked; from then on every legacy reference, and any
// mention of the old path, is an error.
const legacyRefsRewritten = true

// specPath is docs/spec.md relative to this package.
var specPath = filepath.Join("..", "..", "docs", "spec.md")

// The old location of the specification, spelled in pieces so that this
// file does not mention it.
var oldSpecPaths = []string{"shared" + "/SPEC", "../" + "shared"}

// moduleRoot returns the folder of go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test")
		dir = parent
	}
}

// sourceFiles returns the *.go and *.md files of the repository, skipping
// .git and testdata folders.
func sourceFiles(t *testing.T, root string) []string {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == ".git" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext == ".go" || ext == ".md" {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// specSections returns the section numbers of docs/spec.md as a set.
func specSections(t *testing.T) (map[string]bool, []byte) {
	spec, err := os.ReadFile(specPath)
	require.NoError(t, err)
	known := map[string]bool{}
	for _, h := range Headings(spec) {
		require.False(t, known[h], "docs/spec.md has two headings §%s", h)
		known[h] = true
	}
	return known, spec
}

// unresolved returns the references whose section is not a heading.
func unresolved(refs []Ref, known map[string]bool) []Ref {
	var bad []Ref
	for _, r := range refs {
		if !known[r.Section] {
			bad = append(bad, r)
		}
	}
	return bad
}

func TestSpecHeadings(t *testing.T) {
	known, spec := specSections(t)
	// The sections of the first specification keep their numbers and
	// meaning, so that existing references land on the right text.
	for _, s := range []string{"1", "1.1", "1.2", "2", "3", "4", "5", "6", "7", "8"} {
		require.True(t, known[s], "docs/spec.md has no §%s", s)
	}
	for _, want := range []struct{ sec, title string }{
		{"1", "Events and streams"}, {"1.1", "Stream file format"}, {"1.2", "Synthetic generators"},
		{"2", "Online L-BFGS"}, {"3", "State-alignment metrics"}, {"4", "Deletion modes"},
		{"5", "Interventions"}, {"6", "Experiments"}, {"7", "Certification"}, {"8", "Conventions"},
	} {
		re := regexp.MustCompile(`(?m)^#{2,3} §` + regexp.QuoteMeta(want.sec) + `\.? ` + regexp.QuoteMeta(want.title))
		require.Regexp(t, re, string(spec), "§%s is not %q", want.sec, want.title)
	}
	// Every numbered heading has an explicit anchor on the line before it.
	lines := strings.Split(string(spec), "\n")
	for i, l := range lines {
		if m := headingRE.FindStringSubmatch(l); m != nil {
			anchor := `<a id="s` + strings.ReplaceAll(m[1], ".", "-") + `"></a>`
			require.True(t, i > 0 && lines[i-1] == anchor, "heading %q lacks the anchor %s", l, anchor)
		}
	}
	// References inside docs/spec.md ("see §9.4") resolve too.
	for i, l := range lines {
		for _, m := range regexp.MustCompile(`§(\d+(?:\.\d+)?)`).FindAllStringSubmatch(l, -1) {
			require.True(t, known[m[1]], "docs/spec.md line %d: §%s is not a heading", i+1, m[1])
		}
	}
}

// TestReferencesResolve walks the repository: every reference in a
// current form must name a heading of docs/spec.md. Legacy references and
// the old path are checked once legacyRefsRewritten is true.
func TestReferencesResolve(t *testing.T) {
	known, _ := specSections(t)
	root := moduleRoot(t)
	files := sourceFiles(t, root)
	require.NotEmpty(t, files)
	var current, legacy int
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, f)
		refs := References(b)
		for _, r := range unresolved(refs, known) {
			if !r.Legacy || legacyRefsRewritten {
				t.Errorf("%s:%d: %q: docs/spec.md has no §%s", rel, r.Line, r.Text, r.Section)
			}
		}
		for _, r := range refs {
			if !r.Legacy {
				current++
				continue
			}
			legacy++
			if legacyRefsRewritten {
				t.Errorf("%s:%d: %q: legacy reference, write \"spec §%s\"", rel, r.Line, r.Text, r.Section)
			}
		}
		for _, p := range oldSpecPaths {
			if legacyRefsRewritten && strings.Contains(string(b), p) {
				t.Errorf("%s: mentions %q: the specification is docs/spec.md", rel, p)
			}
		}
	}
	t.Logf("%d files, %d current references, %d legacy references", len(files), current, legacy)
}

func TestReferencesParse(t *testing.T) {
	s := "§" // kept apart so that the walk above does not see these references
	text := []byte("a spec " + s + "1.2 b\n" +
		"c SPEC " + s + "8's d; SPEC.md " + s + "4\n" +
		"e docs/spec.md " + s + "2–" + s + "5 and spec " + s + "3, " + s + "6 or " + s + "99\n" +
		"f spec" + s + "1 specref " + s + "2 (no references)\n" +
		"the sentence ends at spec " + s + "7.\n")
	var got []string
	for _, r := range References(text) {
		leg := ""
		if r.Legacy {
			leg = " legacy"
		}
		got = append(got, r.Section+leg)
	}
	require.Equal(t, []string{"1.2", "8 legacy", "4 legacy", "2", "5", "3", "6", "99", "7"}, got)
	known := map[string]bool{"1.2": true, "2": true, "3": true, "4": true, "5": true, "6": true, "7": true, "8": true}
	bad := unresolved(References(text), known)
	require.Len(t, bad, 1)
	require.Equal(t, "99", bad[0].Section)
	require.Equal(t, 3, bad[0].Line)

	md := []byte("# Title\n## §1. A\n### §1.2 B\n#### §1.2.3 C\n## §2 D\nnot ## §3. E\n##§4. F\n")
	require.Equal(t, []string{"1", "1.2", "1.2.3", "2"}, Headings(md))
}
