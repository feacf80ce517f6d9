package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overwriteFixture builds, in the current folder, what the commands read:
// a stream, a CSV data set (and one named like a mapping file), a state
// snapshot with its release and certificate, a key pair, a model store
// with its own budget ledger and a kept release, another ledger and a
// folder standing for results.
func overwriteFixture(t *testing.T) {
	t.Helper()
	run := func(args ...string) {
		t.Helper()
		out, err := runCLI(t, args...)
		require.NoError(t, err, "%v: %s", args, out)
	}
	var csv strings.Builder
	csv.WriteString("a,b,y\n")
	for i := range 12 {
		fmt.Fprintf(&csv, "%g,%g,%d\n", 0.1*float64(i), -0.05*float64(i), i%2)
	}
	require.NoError(t, os.WriteFile("d.csv", []byte(csv.String()), 0o644))
	require.NoError(t, os.WriteFile("dm.ids.csv", []byte(csv.String()), 0o644))
	require.NoError(t, os.MkdirAll("results0", 0o755))
	require.NoError(t, os.WriteFile("results0/manifest.json", []byte("{}"), 0o644))
	run("gen", "--kind", "logistic", "--events", "40", "--d", "2", "--seed", "3", "--out", "l.jsonl")
	run("train", "--stream", "l.jsonl", "--radius", "5", "--sample-bound", "10", "--out", "state.json")
	run("keygen", "--out", "certifier")
	run("certify", "--state", "state.json", "--stream", "l.jsonl", "--out", "rel.json", "--certificate", "cert.json",
		"--epsilon", "1", "--delta", "1e-5", "--insecure-seeded", "1", "--key", "certifier.key")
	run("init", "--store", "model", "--data", "d.csv", "--label", "y", "--tau", "3", "--radius", "5", "--sample-bound", "10")
	run("ingest", "--store", "model", "--data", "d.csv", "--label", "y")
	run("budget", "--ledger", "model/budget.ledger", "--init", "--epsilon", "5", "--delta", "1e-5", "--key", "certifier.key")
	run("budget", "--ledger", "other.ledger", "--init", "--epsilon", "5", "--delta", "1e-5", "--key", "certifier.key")
	run("release", "--store", "model", "--epsilon", "1", "--delta", "1e-5", "--key", "certifier.key", "--out", "r0.json", "--certificate", "c0.json")
}

// treeDigest maps every file and link under the current folder to a
// digest of its content (a link to its target).
func treeDigest(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			m[p] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			m[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		case d.IsDir():
			m[p] = "dir"
		}
		return nil
	}))
	return m
}

// TestNoCommandWritesOverItsInputsOrAStore is the attacker's test of the
// output guard (internal/pathguard): every command that writes a file is
// aimed at one of its own inputs, at another of its outputs, at a model
// store's database, its directory or any file in it, and at a ledger — by
// the same path, with a "./" prefix, through a symbolic link and through a
// hard link. Each must be refused as a usage error naming the flag, with
// nothing at all written (every file under the folder keeps its bytes: no
// input, store or ledger changed, nothing charged, nothing created).
func TestNoCommandWritesOverItsInputsOrAStore(t *testing.T) {
	t.Chdir(t.TempDir())
	overwriteFixture(t)
	// A ledger reached under a name that does not say so.
	require.NoError(t, os.Link("other.ledger", "led.key"))

	type target struct {
		path  string
		links bool // also try a symlink and a hard link to it
	}
	file := func(p string) target { return target{p, true} }
	name := func(p string) target { return target{p, false} } // a folder, or a name that does not exist
	store := []target{file("model/store.db"), file("model/budget.ledger"), name("model/new.json"), name("model")}
	ledgers := []target{file("other.ledger")}
	eps := []string{"--epsilon", "1", "--delta", "1e-5"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	cases := []struct {
		name    string
		args    []string // "@" is the output path
		flag    string   // the flag the error must name
		targets []target
	}{
		{"gen --out", []string{"gen", "--events", "5", "--out", "@"}, "--out", append(store, ledgers...)},
		{"train --out", []string{"train", "--stream", "l.jsonl", "--out", "@"}, "--out", append([]target{file("l.jsonl")}, store...)},
		{"train --data --out", []string{"train", "--data", "d.csv", "--label", "y", "--out", "@"}, "--out", []target{file("d.csv")}},
		{"train --data mapping beside --out", []string{"train", "--data", "dm.ids.csv", "--format", "csv", "--label", "y", "--out", "dm"}, "--out (its id mapping)", nil},
		{"run --out", []string{"run", "--stream", "l.jsonl", "--t-del", "10", "--out", "@"}, "--out", append([]target{file("l.jsonl")}, ledgers...)},
		{"run --series-csv", []string{"run", "--stream", "l.jsonl", "--t-del", "10", "--series-csv", "@"}, "--series-csv", []target{file("l.jsonl"), file("model/store.db")}},
		{"decay --out", []string{"decay", "--tau", "3", "--no-report", "--out", "@"}, "--out", []target{name("model"), name("."), name("results0/..")}},
		{"bench --out", []string{"bench", "--quick", "--no-report", "--out", "@"}, "--out", []target{name("model"), name(".")}},
		{"bench --cpuprofile", []string{"bench", "--quick", "--no-report", "--out", "res", "--cpuprofile", "@"}, "--cpuprofile", append(store[:2], ledgers...)},
		{"merge --out", []string{"merge", "results0", "--out", "@"}, "--out", []target{name("results0"), name("."), name("model")}},
		{"certify --out", with([]string{"certify", "--state", "state.json", "--stream", "l.jsonl", "--key", "certifier.key", "--certificate", "c2.json", "--out", "@"}, eps...),
			"--out", []target{file("state.json"), file("l.jsonl"), file("certifier.key"), file("model/store.db"), file("other.ledger")}},
		{"certify --certificate", with([]string{"certify", "--state", "state.json", "--out", "r2.json", "--certificate", "@"}, eps...),
			"--certificate", []target{file("state.json"), name("r2.json"), file("model/budget.ledger")}},
		{"report --out", []string{"report", "results0", "--out", "@"}, "--out", []target{name("results0"), name("."), name("model")}},
		{"gendocs --out", []string{"gendocs", "--out", "@"}, "--out", append(store[:2], ledgers...)},
		{"keygen --out", []string{"keygen", "--force", "--out", "@"}, "--out", []target{name("model/k"), name("model/budget"), name("led")}},
		{"budget --add: ledger is the certificate", []string{"budget", "--add", "cert.json", "--key", "certifier.key", "--ledger", "@"}, "--ledger", []target{file("cert.json"), file("certifier.key")}},
		{"budget --init in a store", []string{"budget", "--init", "--epsilon", "1", "--delta", "1e-5", "--key", "certifier.key", "--ledger", "@"}, "--ledger", []target{file("model/store.db"), name("model/new.ledger")}},
		{"convert --out", []string{"convert", "d.csv", "--label", "y", "--out", "@"}, "--out", append([]target{file("d.csv")}, store...)},
		{"export --out", []string{"export", "--store", "model", "--out", "@"}, "--out", append(store, ledgers...)},
		{"audit --out", with([]string{"audit", "--stream", "l.jsonl", "--intervention", "noop", "--out", "@"}, eps...), "--out", append([]target{file("l.jsonl")}, store...)},
		{"audit --store --out", with([]string{"audit", "--store", "model", "--ids", "1", "--out", "@"}, eps...), "--out", store},
		{"init --store", []string{"init", "--store", "@", "--header", "l.jsonl"}, "--store", []target{name("model/inner"), name(".")}},
		{"release --out", with([]string{"release", "--store", "model", "--key", "certifier.key", "--certificate", "c3.json", "--out", "@"}, eps...),
			"--out", append([]target{file("certifier.key")}, append(store, ledgers...)...)},
		{"release --certificate", with([]string{"release", "--store", "model", "--key", "certifier.key", "--out", "r3.json", "--certificate", "@"}, eps...),
			"--certificate", append([]target{name("r3.json")}, store...)},
		{"release --out is the ledger", with([]string{"release", "--store", "model", "--key", "certifier.key", "--ledger", "other.ledger", "--certificate", "c3.json", "--out", "@"}, eps...),
			"--out", []target{file("other.ledger")}},
		{"release --ledger inside the store", with([]string{"release", "--store", "model", "--key", "certifier.key", "--out", "r3.json", "--certificate", "c3.json", "--ledger", "@"}, eps...),
			"--ledger", []target{file("model/store.db")}},
		{"releases --out", []string{"releases", "--store", "model", "--get", "1", "--out", "@"}, "--out", store},
		{"releases --certificate", []string{"releases", "--store", "model", "--get", "1", "--out", "r4.json", "--certificate", "@"}, "--certificate", append([]target{name("r4.json")}, store...)},
		{"ingest --mapping", []string{"ingest", "--store", "model", "--data", "d.csv", "--label", "y", "--id", "a", "--mapping", "@"}, "--mapping", append([]target{file("d.csv")}, store...)},
	}
	n := 0
	for _, c := range cases {
		variants := map[string]string{}
		for _, tg := range c.targets {
			variants[tg.path] = tg.path
			variants["./"+tg.path] = "./" + tg.path
			if tg.links {
				n++
				sym, hard := fmt.Sprintf("sym%d", n), fmt.Sprintf("hard%d", n)
				abs, err := filepath.Abs(tg.path)
				require.NoError(t, err)
				require.NoError(t, os.Symlink(abs, sym))
				require.NoError(t, os.Link(tg.path, hard))
				variants["symlink to "+tg.path] = sym
				variants["hard link to "+tg.path] = hard
			}
		}
		if len(c.targets) == 0 {
			variants["as written"] = ""
		}
		for what, p := range variants {
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "@", p)
			}
			t.Run(c.name+" "+what, func(t *testing.T) {
				before := treeDigest(t)
				var err error
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("unlearn %s panicked: %v", strings.Join(args, " "), r)
						}
					}()
					_, err = runCLI(t, args...)
				}()
				require.Error(t, err, "unlearn %s was accepted", strings.Join(args, " "))
				var ue usageError
				assert.True(t, errors.As(err, &ue), "a usage error (exit status 2): %v", err)
				assert.True(t, strings.HasPrefix(err.Error(), c.flag+" ") || strings.HasPrefix(err.Error(), c.flag+": "), "the error names %s: %v", c.flag, err)
				if !strings.HasPrefix(err.Error(), "--mapping: ") { // ingest's own check of a mapping inside its store comes first
					assert.Contains(t, err.Error(), "nothing was written")
				}
				assert.Equal(t, before, treeDigest(t), "unlearn %s changed or created files", strings.Join(args, " "))
			})
		}
	}
}
