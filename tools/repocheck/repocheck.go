package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Benchmarks returns the names of the top-level benchmark functions
// (func BenchmarkXxx(b *testing.B)) declared in the _test.go files of dir,
// sorted.
func Benchmarks(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Benchmark") && takesB(fn) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// takesB reports whether fn's only parameter is a *testing.B.
func takesB(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "B"
}

// A Citation is one benchmark cited in a text.
type Citation struct {
	// Line is the 1-based line of the citation.
	Line int
	// Package is the folder of the package cited, relative to the module
	// root without "./" ("store", "internal/membw"), or "" for a name
	// cited without its package.
	Package string
	// Name is a benchmark's name (BenchmarkIngest) when Pattern is "".
	Name string
	// Pattern is one alternative of the top level of a command's -bench
	// regular expression ("Ingest" of -bench 'Ingest|Forget/d=10'), matched
	// against the package's benchmark names as `go test` does.
	Pattern string
}

var (
	// nameRE: BenchmarkXxx, optionally qualified by its package's last
	// path element (noise.BenchmarkSecureAddNoise).
	nameRE = regexp.MustCompile(`\b(?:([a-z][a-z0-9]*)\.)?(Benchmark[A-Z0-9_][A-Za-z0-9_]*)`)
	// commandRE: a go test command, to the end of the line or of the code
	// span.
	commandRE = regexp.MustCompile("go test ([^`\n]*)")
	// benchRE: the -bench flag and its value, quoted or bare.
	benchRE = regexp.MustCompile(`(?:^|\s)-bench(?:=|\s+)('[^']*'|"[^"]*"|\S+)`)
	// pkgRE: a package argument (./store, ./internal/membw).
	pkgRE = regexp.MustCompile(`(?:^|\s)\./([A-Za-z0-9_./-]*)`)
)

// Citations returns the benchmark citations of a Markdown text: each
// BenchmarkXxx name (with the package it is qualified by, if any), and
// each top-level alternative of the -bench pattern of a `go test` command
// that names exactly one package folder (./store). A command with a
// pattern that cannot be split safely — parentheses, brackets — gives
// the whole first level as one pattern.
func Citations(md []byte) []Citation {
	var out []Citation
	for i, line := range strings.Split(string(md), "\n") {
		for _, m := range nameRE.FindAllStringSubmatch(line, -1) {
			out = append(out, Citation{Line: i + 1, Package: m[1], Name: m[2]})
		}
		for _, m := range commandRE.FindAllStringSubmatch(line, -1) {
			args := m[1]
			b := benchRE.FindStringSubmatch(args)
			pkgs := pkgRE.FindAllStringSubmatch(args, -1)
			if b == nil || len(pkgs) != 1 {
				continue
			}
			pkg := strings.TrimSuffix(pkgs[0][1], "/")
			for _, p := range alternatives(firstLevel(strings.Trim(b[1], `'"`))) {
				out = append(out, Citation{Line: i + 1, Package: pkg, Pattern: p})
			}
		}
	}
	return out
}

// firstLevel returns the part of a -bench pattern before its first
// unbracketed slash (the part matched against top-level benchmark names).
func firstLevel(p string) string {
	depth := 0
	for i, c := range p {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				return p[:i]
			}
		}
	}
	return p
}

// alternatives splits a pattern without groups at its '|'s; a pattern
// with groups is returned whole.
func alternatives(p string) []string {
	if strings.ContainsAny(p, "()[]") {
		return []string{p}
	}
	return strings.Split(p, "|")
}

// Matches reports whether the benchmark names include one the pattern
// matches as `go test -bench` does (an unanchored regular expression on
// the full name, BenchmarkXxx); an invalid pattern matches nothing.
func Matches(pattern string, names []string) bool {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return false
	}
	for _, n := range names {
		if re.MatchString(n) {
			return true
		}
	}
	return false
}
