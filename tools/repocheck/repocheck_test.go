package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the module root relative to this package.
var root = filepath.Join("..", "..")

// walk calls f for every file under root whose name ends in one of exts,
// skipping .git and testdata folders.
func walk(t *testing.T, f func(path string), exts ...string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == ".git" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(path, e) {
				f(path)
				break
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// allBenchmarks maps each package folder (relative to the module root,
// slash-separated) to its benchmarks.
func allBenchmarks(t *testing.T) map[string][]string {
	t.Helper()
	dirs := map[string]bool{}
	walk(t, func(path string) { dirs[filepath.Dir(path)] = true }, "_test.go")
	out := map[string][]string{}
	for dir := range dirs {
		names, err := Benchmarks(dir)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		out[filepath.ToSlash(rel)] = names
	}
	return out
}

func TestCitations(t *testing.T) {
	md := "Run `go test ./store -run '^$' -bench 'Ingest|Forget/d=10' -benchtime=1x`.\n" +
		"| `noise.BenchmarkSecureAddNoise` | BenchmarkTwoLoop/d=25 |\n" +
		"`go test ./internal/membw -bench=Sum$ -count 3` and `go test ./align -bench '(A|B)/x'`\n" +
		"`go test ./a ./b -bench X` names two packages; `go test ./c -run Y` no benchmark.\n"
	require.Equal(t, []Citation{
		{Line: 1, Package: "store", Pattern: "Ingest"},
		{Line: 1, Package: "store", Pattern: "Forget"},
		{Line: 2, Package: "noise", Name: "BenchmarkSecureAddNoise"},
		{Line: 2, Name: "BenchmarkTwoLoop"},
		{Line: 3, Package: "internal/membw", Pattern: "Sum$"},
		{Line: 3, Package: "align", Pattern: "(A|B)"},
	}, Citations([]byte(md)))
	require.True(t, Matches("Sum$", []string{"BenchmarkCopyScale", "BenchmarkSum"}))
	require.False(t, Matches("Certify", []string{"BenchmarkSum"}))
	require.False(t, Matches("(", []string{"BenchmarkSum"}), "an invalid pattern matches nothing")
}

func TestBenchmarks(t *testing.T) {
	names, err := Benchmarks(filepath.Join(root, "store"))
	require.NoError(t, err)
	require.Contains(t, names, "BenchmarkIngest")
	require.Contains(t, names, "BenchmarkForget")
	for _, n := range names {
		require.True(t, strings.HasPrefix(n, "Benchmark"))
	}
}

// TestDocsCiteExistingBenchmarks: every benchmark that README.md or a
// Markdown file of docs/ cites exists — a name in the package it is
// qualified by (or in some package), a command's -bench pattern in the
// command's package — so that a deleted or renamed benchmark cannot stay
// cited (docs/performance.md once cited certify benchmarks deleted long
// before).
func TestDocsCiteExistingBenchmarks(t *testing.T) {
	benches := allBenchmarks(t)
	byName := map[string][]string{} // benchmark name → package folders
	for pkg, names := range benches {
		for _, n := range names {
			byName[n] = append(byName[n], pkg)
		}
	}
	var docs []string
	walk(t, func(path string) {
		rel, _ := filepath.Rel(root, path)
		if rel == "README.md" || strings.HasPrefix(filepath.ToSlash(rel), "docs/") {
			docs = append(docs, path)
		}
	}, ".md")
	require.Contains(t, docs, filepath.Join(root, "docs", "performance.md"))
	cited := 0
	for _, path := range docs {
		md, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, c := range Citations(md) {
			cited++
			where := path + ":" + strconv.Itoa(c.Line)
			switch {
			case c.Pattern != "":
				names, ok := benches[c.Package]
				if !ok {
					t.Errorf("%s: `go test ./%s -bench %s`: no package folder %s with tests", where, c.Package, c.Pattern, c.Package)
				} else if !Matches(c.Pattern, names) {
					t.Errorf("%s: `go test ./%s -bench %s` matches no benchmark of %s (it has %v)", where, c.Package, c.Pattern, c.Package, names)
				}
			default:
				pkgs := byName[c.Name]
				if len(pkgs) == 0 {
					t.Errorf("%s: %s is declared nowhere", where, c.Name)
					continue
				}
				if c.Package == "" {
					continue
				}
				found := false
				for _, p := range pkgs {
					found = found || p == c.Package || strings.HasSuffix(p, "/"+c.Package)
				}
				if !found {
					t.Errorf("%s: %s.%s: %s is declared in %v, not in package %s", where, c.Package, c.Name, c.Name, pkgs, c.Package)
				}
			}
		}
	}
	require.NotZero(t, cited, "the docs cite no benchmark: is Citations broken?")
}

// ciRun returns .ci/run without its comments and blank lines, one
// command per line (continuation lines joined).
func ciRun(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)
	var out []string
	cont := ""
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cont += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		out = append(out, cont+line)
		cont = ""
	}
	return out
}

// TestCIRunsTheREADMETestCommand: the README tells users to run
// `go test -race ./...`, and .ci/run runs exactly that command (with
// environment variables before it at most), so that what CI passes is what
// users run.
func TestCIRunsTheREADMETestCommand(t *testing.T) {
	const command = "go test -race ./..."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "\n"+command+" ", "the README's test command")
	re := regexp.MustCompile(`^(?:[A-Z_]+=\S+\s+)*` + regexp.QuoteMeta(command) + `$`)
	for _, line := range ciRun(t) {
		if re.MatchString(line) {
			return
		}
	}
	t.Fatalf(".ci/run does not run %q as a command of its own", command)
}

// TestRaceSkipsRunInCI: every test that skips under the race detector
// (testutil.SkipUnderRace) is named in a go test command of .ci/run
// without -race, so that CI still runs it.
func TestRaceSkipsRunInCI(t *testing.T) {
	var skipping []string
	fset := token.NewFileSet()
	walk(t, func(path string) {
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "SkipUnderRace" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testutil" {
						skipping = append(skipping, fn.Name.Name)
					}
				}
				return true
			})
		}
	}, "_test.go")
	require.NotEmpty(t, skipping, "no test calls testutil.SkipUnderRace: is the search broken?")
	var noRace []string
	for _, line := range ciRun(t) {
		if strings.Contains(line, "go test ") && !strings.Contains(line, "-race") {
			noRace = append(noRace, line)
		}
	}
	for _, name := range skipping {
		re := regexp.MustCompile(`\b` + name + `\b`)
		found := false
		for _, line := range noRace {
			found = found || re.MatchString(line)
		}
		if !found {
			t.Errorf("%s skips under the race detector, but no go test command of .ci/run without -race names it", name)
		}
	}
}
