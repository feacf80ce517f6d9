package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/store"
)

// This file keeps the tool's messages in the user's words: a bad flag
// value is said as what it should be ("not a whole number", "a duration
// with its unit, e.g. 10m"), a file given to a flag that wants another
// kind of file is named as what it is ("this is a certificate, not a
// release"), a directory where a file is wanted names the flag, and what
// the libraries' errors still say in Go's words (strconv., time:, json:)
// is rewritten before it reaches the user.

// flagParseError is the root command's flag error function: a value the
// flag's type cannot parse is named by its flag and said in words; other
// errors (an unknown flag, a missing value) are cobra's. Every one is a
// usage error (exit status 2).
func flagParseError(_ *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) || ive.GetFlag() == nil {
		return usageError{err}
	}
	f := ive.GetFlag()
	return flagError(f.Name, "%s", valueWords(f.Value.Type(), ive.GetValue(), ive.Unwrap()))
}

// valueWords says why value, given to a flag of pflag type typ, was
// refused by the type's parser (cause).
func valueWords(typ, value string, cause error) string {
	bad := value
	var ne *strconv.NumError
	if errors.As(cause, &ne) {
		bad = ne.Num
	}
	in := ""
	if bad != value {
		in = fmt.Sprintf(" (in %q)", value)
	}
	elem := strings.TrimSuffix(typ, "Slice")
	switch {
	case typ == "duration":
		return fmt.Sprintf("%q is not a duration: write a number with its unit, e.g. 10m, 90s, 1h30m or 500ms", value)
	case ne != nil && errors.Is(ne.Err, strconv.ErrRange):
		return fmt.Sprintf("%q is out of range%s", bad, in)
	case elem == "bool":
		return fmt.Sprintf("%q is not true or false%s", bad, in)
	case strings.HasPrefix(elem, "float"):
		return fmt.Sprintf("%q is not a number%s", bad, in)
	case strings.HasPrefix(elem, "uint"):
		return fmt.Sprintf("%q is not a whole number ≥ 0%s", bad, in)
	case strings.HasPrefix(elem, "int"):
		return fmt.Sprintf("%q is not a whole number%s", bad, in)
	}
	return fmt.Sprintf("%q: %s", value, plainText(cause.Error()))
}

// knownFormats are the format tags of the files the toolkit writes (the
// "format" field of a JSON file, of a stream's or a ledger's first line),
// by prefix, and what each file is called in messages.
var knownFormats = []struct{ prefix, what string }{
	{"olbfgs-state/", "a state snapshot (unlearn train --out, unlearn export)"},
	{"olbfgs-stream/", "an event stream (unlearn gen, unlearn convert)"},
	{"unlearn-release/", "a release (unlearn release --out, unlearn certify --out)"},
	{"unlearn-certificate/", "a certificate (unlearn release --certificate)"},
	{"unlearn-secret-key/", "a secret key (unlearn keygen)"},
	{"unlearn-public-key/", "a public key (unlearn keygen)"},
	{"unlearn-receipt/", "a deletion receipt"},
	{"unlearn-forget-request/", "a forget-request commitment"},
	{"unlearn-ledger/", "a budget ledger (unlearn budget --init)"},
	{"unlearn-evaluation/", "an evaluation report (unlearn evaluate --json)"},
	{"unlearn-run/", "a run record (unlearn run)"},
	{"unlearn-results/", "a results manifest (unlearn bench)"},
	{"unlearn-accountant/", "an accountant's state"},
	{"unlearn-tightness/", "a tightness record (unlearn tightness)"},
}

// fileFlags are the flags that name an existing file of one kind, by the
// format tag its content carries ("" for none of the toolkit's own
// formats: an IDX labels file; a data file in CSV, LIBSVM or IDX has none
// either), and what that file is called.
var fileFlags = map[string]struct{ prefix, what string }{
	"state":       {"olbfgs-state/", "a state snapshot"},
	"release":     {"unlearn-release/", "a release"},
	"certificate": {"unlearn-certificate/", "a certificate"},
	"add":         {"unlearn-certificate/", "a certificate"},
	"stream":      {"olbfgs-stream/", "an event stream"},
	"retained":    {"olbfgs-stream/", "an event stream"},
	"key":         {"unlearn-secret-key/", "a secret key"},
	"public-key":  {"unlearn-public-key/", "a public key"},
	"receipt":     {"unlearn-receipt/", "a deletion receipt"},
	"data":        {"olbfgs-stream/", "a data file (CSV, LIBSVM or IDX) or an event stream"},
	"labels":      {"", "an IDX labels file"},
}

// outputFlags are, by command, the flags of fileFlags that name a file the
// command writes, not one it reads.
var outputFlags = map[string][]string{
	"certify":  {"certificate"},
	"release":  {"certificate"},
	"releases": {"certificate"},
}

// checkFileFlags refuses, naming the flag, a file flag of cmd given a
// directory or a file of another of the toolkit's known kinds, and a
// --store given a file. It reads at most the first 64 KiB of a regular
// file, and nothing of anything else (a FIFO is read by the command only).
func checkFileFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		for _, path := range flagPaths(f) {
			if err = checkFileFlag(cmd, f.Name, path); err != nil {
				return
			}
		}
	})
	return err
}

// flagPaths returns the values of a string or string-list flag.
func flagPaths(f *pflag.Flag) []string {
	switch f.Value.Type() {
	case "string":
		return []string{f.Value.String()}
	case "stringSlice", "stringArray":
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			return sv.GetSlice()
		}
	}
	return nil
}

func checkFileFlag(cmd *cobra.Command, name, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if name == "store" {
		fi, err := os.Stat(path)
		if err == nil && !fi.IsDir() {
			what := fileKind(path)
			if what == "" {
				what = "a file"
			}
			return flagError(name, "%s is %s, not a model store (the directory unlearn init makes)", path, what)
		}
		return nil
	}
	want, ok := fileFlags[name]
	if !ok {
		return nil
	}
	for _, o := range outputFlags[cmd.Name()] {
		if o == name {
			return nil
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil // the command says it cannot read it
	}
	if fi.IsDir() {
		hint := ""
		if _, err := os.Stat(filepath.Join(path, store.FileName)); err == nil && cmd.Flags().Lookup("store") != nil {
			hint = fmt.Sprintf("; it is a model store: give it as --store %s", path)
		}
		return flagError(name, "%s is a directory, not %s%s", path, want.what, hint)
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	got, tag := fileKind(path), formatTag(path)
	if got == "" || (want.prefix != "" && strings.HasPrefix(tag, want.prefix)) {
		// Not one of the toolkit's files (a data file), or the kind wanted.
		return nil
	}
	return flagError(name, "%s is %s, not %s", path, got, want.what)
}

// fileKind says what the regular file path is, if it is one of the
// toolkit's own formats or a model store's database, or "".
func fileKind(path string) string {
	head := readHead(path)
	if bytes.HasPrefix(head, []byte("SQLite format 3\x00")) {
		return "an SQLite database (a model store's is store.db: give its directory as --store)"
	}
	tag := formatOf(head)
	for _, k := range knownFormats {
		if strings.HasPrefix(tag, k.prefix) {
			return k.what
		}
	}
	return ""
}

// formatTag returns the format tag of the file path, or "".
func formatTag(path string) string { return formatOf(readHead(path)) }

// readHead returns the first 64 KiB of the file path (nil if unreadable).
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return b
}

// ledgerTag finds a ledger's format tag in its first line.
var ledgerTag = regexp.MustCompile(`"format":"(unlearn-ledger/[^"]*)"`)

// formatOf returns the format tag of a file's first bytes: the "format"
// field of its first JSON object (a stream's header line, a whole JSON
// file), or a ledger's, or "".
func formatOf(head []byte) string {
	line, _, _ := bytes.Cut(head, []byte{'\n'})
	if m := ledgerTag.FindSubmatch(line); m != nil {
		return string(m[1])
	}
	dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(head)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for range 64 {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		key, ok := t.(string)
		if !ok {
			return ""
		}
		if key == "format" {
			var v string
			if dec.Decode(&v) != nil {
				return ""
			}
			return v
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// plainError returns err with its message in the user's words
// (plainText); errors.Is and errors.As see err through it.
func plainError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if p := plainText(msg); p != msg {
		return &wordedError{msg: p, err: err}
	}
	return err
}

// wordedError is an error with its message rewritten.
type wordedError struct {
	msg string
	err error
}

func (e *wordedError) Error() string { return e.msg }
func (e *wordedError) Unwrap() error { return e.err }

// Go's words in library errors, and the user's.
var goWords = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`strconv\.Parse(Float|Complex): parsing ("(?:[^"\\]|\\.)*"): invalid syntax`), `$2 is not a number`},
	{regexp.MustCompile(`strconv\.(?:Parse(?:Int|Uint)|Atoi): parsing ("(?:[^"\\]|\\.)*"): invalid syntax`), `$1 is not a whole number`},
	{regexp.MustCompile(`strconv\.\w+: parsing ("(?:[^"\\]|\\.)*"): value out of range`), `$1 is out of range`},
	{regexp.MustCompile(`strconv\.\w+: parsing ("(?:[^"\\]|\\.)*"): ([^;:]*)`), `$1: $2`},
	{regexp.MustCompile(`time: (?:missing unit in duration|unknown unit "[^"]*" in duration|invalid duration) ("(?:[^"\\]|\\.)*")`), `$1 is not a duration: write a number with its unit, e.g. 10m, 90s, 1h30m or 500ms`},
	{regexp.MustCompile(`json: cannot unmarshal (\w+) into Go struct field \w+\.([\w.]+) of type (\S+)`), `field "$2": a JSON $1 where $3 is wanted`},
	{regexp.MustCompile(`json: cannot unmarshal (\w+) into Go value of type (\S+)`), `a JSON $1 where $2 is wanted`},
	{regexp.MustCompile(`(^|[ (])json: `), `$1`},
	{regexp.MustCompile(`certify: verify: (\w+): `), `the certificate does not check at its field "$1": `},
	{regexp.MustCompile(`no contraction: factor ≥ 1`), `the update map does not contract, so no bound on the distance holds`},
	{regexp.MustCompile(`(^|: )open (\S+): `), `${1}cannot open $2: `},
}

// goTypes are Go's type names in JSON errors, in words.
var goTypes = strings.NewReplacer(
	" where float64 ", " where a number ", " where int64 ", " where a whole number ",
	" where int ", " where a whole number ", " where uint64 ", " where a whole number ",
	" where string ", " where a string ", " where bool ", " where true or false ",
	" where []float64 ", " where a list of numbers ", " where []string ", " where a list of strings ",
)

// plainText rewrites what Go's libraries say in their own words
// (strconv.ParseInt: parsing "2x": invalid syntax; time: missing unit in
// duration "10"; json: unknown field "x") in the user's, says the toolkit's
// refused quantities by their meaning (argWords), replaces the names of
// Go methods (goNames), and drops the toolkit's package prefixes
// ("store: ", "bound: ") from the chain: the Go error keeps them for
// library users, the user reads what failed.
func plainText(msg string) string {
	for _, w := range goWords {
		msg = w.re.ReplaceAllString(msg, w.repl)
	}
	msg = argError.ReplaceAllStringFunc(msg, argWords)
	msg = goNames.Replace(msg)
	for {
		m := packagePrefix.ReplaceAllString(msg, "$1")
		m = repeatedLink.ReplaceAllStringFunc(m, onceLink)
		if m == msg {
			break
		}
		msg = m
	}
	return goTypes.Replace(msg)
}

// packagePrefix matches a package's prefix of the toolkit's library errors
// at the start of the message or of a link of its chain.
var packagePrefix = regexp.MustCompile(`(^|: |\()(?:align|audit|bound|certify|dataset|experiment|ledger|model|noise|olbfgs|report|serve|sign|store|stream|unlearn): `)

// repeatedLink matches a link of the chain said twice in a row
// ("forget: forget: "), once the package prefix between them is dropped.
var repeatedLink = regexp.MustCompile(`(^|: )([a-z]+): ([a-z]+): `)

// onceLink says a link of repeatedLink once when it is repeated.
func onceLink(m string) string {
	sub := repeatedLink.FindStringSubmatch(m)
	if sub[2] != sub[3] {
		return m
	}
	return sub[1] + sub[2] + ": "
}

// goNames are Go names in library messages, and the user's words.
var goNames = strings.NewReplacer(
	"Release refuses", "a release is refused",
	"GetRelease refuses", "reading the release is refused",
)

// argError matches the message of bound's and noise's argument errors:
// "bound: rho = 61502.131947125235: no contraction: factor ≥ 1".
var argError = regexp.MustCompile(`\b(?:bound|noise): ([A-Za-z][\w.]*)(\[[0-9]+\])? = ([-+]?(?:[0-9.]+(?:e[-+]?[0-9]+)?|Inf|NaN)): `)

// quantities name the arguments of bound's and noise's errors.
var quantities = map[string]string{
	"rho": "the contraction factor ρ", "alpha": "the sensitivity α", "sigma": "the noise scale σ",
	"epsilon": "ε", "delta": "δ", "delta0": "the initial distance δ₀", "mu": "the parameter μ",
	"Mu": "the strong convexity μ", "G": "the gradient bound G", "Constants.G": "the gradient bound G",
	"etaEps": "the step's error term η·ε", "Eta": "the step size η", "Eta0": "the first step size η₀",
	"HMin": "the curvature floor h_min", "Tau": "the memory τ", "Horizon": "the number of steps",
	"Steps": "the number of steps", "steps": "the number of steps", "Decay": "the decay",
	"age": "the deletion age", "Ages": "the deletion age", "n": "the count", "Quantile": "the quantile",
	"Deleted": "the number of deleted samples", "Start": "the start", "Memory": "the memory model",
	"Provenance": "the provenance", "Delta0Provenance": "the provenance of δ₀", "Case": "the case",
	"Average.From": "the averaging's start", "Average.Power": "the averaging's power",
	"dists": "the distances", "errs": "the errors", "ranges": "the ranges",
}

// shortFloat writes an exponent as people do: 6.2e4, not 6.2e+04.
var shortFloat = strings.NewReplacer("e+0", "e", "e+", "e", "e-0", "e-")

// argWords says one argument error's prefix in words: the quantity by its
// meaning and its value with 2 significant digits; a contraction factor
// not below 1 is said as such.
func argWords(m string) string {
	sub := argError.FindStringSubmatch(m)
	name, ok := quantities[sub[1]]
	if !ok {
		name = "the value"
	}
	v, err := strconv.ParseFloat(sub[3], 64)
	val := sub[3]
	if err == nil {
		val = shortFloat.Replace(strconv.FormatFloat(v, 'g', 2, 64))
	}
	if sub[1] == "rho" && err == nil && v >= 1 {
		return fmt.Sprintf("%s = %s is not below 1: ", name, val)
	}
	return fmt.Sprintf("%s = %s: ", name, val)
}

// plainWords wraps the run functions of cmd and its subcommands: file
// flags are checked first (checkFileFlags), and errors come out in the
// user's words: library fields as the command's flags (rewordFields), a
// cause set by several flags with the values given (causeHint), Go's words
// rewritten (plainError).
func plainWords(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		plainWords(c)
	}
	run := cmd.RunE
	if run == nil {
		return
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := checkFileFlags(c); err != nil {
			return err
		}
		return plainError(causeHint(c, rewordFields(c, run(c, args))))
	}
}
