package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// sweepChild is the environment variable that makes
// TestHostileNumericFlags run the sweep itself (in a child process of the
// test binary, watched by the parent).
const sweepChild = "UNLEARN_SWEEP_CHILD"

// Hostile values of each flag type: not-a-number, infinities, zero,
// negative, huge, subnormal and the integer extremes.
var hostileValues = map[string][]string{
	"float64":      {"NaN", "+Inf", "-Inf", "0", "-1", "1e308", "5e-324"},
	"int":          {"0", "-1", "9223372036854775807", "-9223372036854775808", "2147483648"},
	"int64":        {"0", "-1", "9223372036854775807", "-9223372036854775808", "2147483648"},
	"uint64":       {"0", "18446744073709551615"},
	"intSlice":     {"0", "-1", "9223372036854775807", "2147483648"},
	"int64Slice":   {"0", "-1", "9223372036854775807"},
	"uintSlice":    {"0", "18446744073709551615"},
	"float64Slice": {"NaN", "+Inf", "0", "-1", "1e308", "5e-324"},
	"duration":     {"0s", "-1s", "2540400h"},
}

// unparsable are values each flag type's parser refuses ("2x" for a
// number, "10" without a unit for a duration): the message must name the
// flag and say what the value should be, in words.
var unparsable = map[string][]string{
	"float64": {"2x"}, "int": {"2x", "1.5"}, "int64": {"2x"}, "uint64": {"-1", "2x"},
	"intSlice": {"1,2x"}, "int64Slice": {"1,2x"}, "uintSlice": {"2x"}, "float64Slice": {"1,2x"},
	"duration": {"10", "x", "10 minutes"},
}

// goWordsInMessages are Go's own words that no message of the tool may
// show a user (a Go package's error prefix, a Go API name).
var goWordsInMessages = []string{"strconv.", "time: ", "json: ", "Go struct", "Go value", "with Create"}

// goIdentifiers match what a message shows of Go's names rather than the
// user's: a CamelCase or mixedCase word (SampleBound, SkipLines, hMin), an
// indexed field path ([0].), a configuration type (Config.) and a struct
// field dumped as "Name = value".
var goIdentifiers = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z]+[A-Z][A-Za-z0-9]*)\b`),
	regexp.MustCompile(`\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b`),
	regexp.MustCompile(`\[[0-9]+\]\.`),
	regexp.MustCompile(`\b[A-Z]\w*Config\.|\bConfig\.`),
	regexp.MustCompile(`\b[A-Z][a-z][A-Za-z0-9]* = `),
}

// freshPath matches the fresh output paths of the sweep's cases.
var freshPath = regexp.MustCompile(`out/[fd][0-9]+`)

// plainWordsInMessages are words goIdentifiers match that are not Go's.
var plainWordsInMessages = map[string]bool{"NaN": true, "MiB": true, "GiB": true, "KiB": true, "SQLite": true}

// packagePrefixInMessage matches a library package's error prefix in a
// message ("store: ", "bound: "), at its start or after a link of its
// chain: what failed is said in the user's words instead.
var packagePrefixInMessage = regexp.MustCompile(`(?:^|: |\()(?:align|audit|bound|certify|dataset|experiment|ledger|model|noise|olbfgs|report|serve|sign|store|stream|unlearn): `)

// goNamesIn says which package prefix (packagePrefixInMessage) and which
// Go identifier (goIdentifiers) msg shows, if any.
func goNamesIn(msg string) []string {
	var probs []string
	if p := packagePrefixInMessage.FindString(msg); p != "" {
		probs = append(probs, fmt.Sprintf("shows the package prefix %q", strings.TrimLeft(p, ": (")))
	}
	for _, re := range goIdentifiers {
		for _, w := range re.FindAllString(msg, -1) {
			if !plainWordsInMessages[w] {
				probs = append(probs, fmt.Sprintf("shows the Go identifier %q", w))
				break
			}
		}
	}
	return probs
}

// refusalProblems says what is wrong with msg, the message refusing a
// value of flag --name: it must name the flag the user typed.
func refusalProblems(name, msg string) []string {
	var probs []string
	if !strings.Contains(msg, "--"+name) {
		probs = append(probs, "does not name --"+name)
	}
	return probs
}

// TestHostileNumericFlags sweeps every numeric flag of every command with
// hostile values (NaN, ±Inf, 0, negative, huge, subnormal,
// 9223372036854775807, …), each on a small valid invocation of its
// command: nothing may panic, run out of memory or hang; an error or a
// result are both fine. The sweep runs in child processes, each sweeping
// its share of the commands (sweepShards, side by side); the parent
// kills a child if its resident memory passes 3 GiB (the race detector's
// shadow memory included) or it runs past 5 minutes, naming the case it
// was in. Each case must also finish within 20 s. No message may show
// Go's own words (goWordsInMessages), and a value the flag's type cannot
// parse (unparsable) is refused naming the flag. Every refusal of a
// value (an error other than what the base says without the flag) must
// name the flag (refusalProblems), and no message may show a package
// prefix or a Go identifier (goNamesIn). (The bases are small:
// the sweep's 2,100 cases take about half a minute under the race detector, split over the two children.)
func TestHostileNumericFlags(t *testing.T) {
	if shard := os.Getenv(sweepChild); shard != "" {
		runSweep(t, shard)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("the watchdog reads /proc")
	}
	// Two children, each sweeping every other command, side by side.
	for k := range sweepShards {
		t.Run(fmt.Sprintf("shard %d of %d", k+1, sweepShards), func(t *testing.T) {
			t.Parallel()
			watchSweep(t, fmt.Sprintf("%d/%d", k, sweepShards))
		})
	}
}

// sweepShards is the number of child processes the sweep is split into
// (by command; a command's cases run in one child, in order).
const sweepShards = 2

// watchSweep runs the child that sweeps shard ("k/n") and kills it if its
// resident memory passes 3 GiB or it runs past 5 minutes.
func watchSweep(t *testing.T, shard string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileNumericFlags$", "-test.v")
	cmd.Env = append(os.Environ(), sweepChild+"="+shard)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var last string
	var log []string
	deadline := time.Now().Add(5 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				done = true
				break
			}
			if strings.HasPrefix(l, "case ") {
				last = l
			} else {
				log = append(log, l)
			}
		case <-tick.C:
			if rss := residentKiB(cmd.Process.Pid); rss > 3<<20 {
				cmd.Process.Kill()
				t.Fatalf("the sweep used %d MiB of memory in %s", rss>>10, last)
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("the sweep ran past 5 minutes, in %s", last)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the sweep failed (last %s): %v\n%s", last, err, strings.Join(log, "\n"))
	}
	for _, l := range log {
		if strings.Contains(l, " cases") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// residentKiB returns the resident memory of process pid (VmRSS), or 0.
func residentKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

// sweepBases are small valid invocations of each command ("@" is a fresh
// output path, "@dir" a fresh output folder).
func sweepBases() map[string][][]string {
	eps := []string{"--epsilon", "1", "--delta", "1e-5"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	data := []string{"--data", "d.csv", "--label", "y"}
	return map[string][][]string{
		"gen":      {{"--events", "20", "--d", "3", "--out", "@"}},
		"train":    {{"--stream", "l.jsonl", "--out", "@"}, cat(data, []string{"--out", "@"})},
		"run":      {{"--stream", "l.jsonl", "--t-del", "10", "--horizon", "10"}, cat(data, []string{"--t-del", "6"})},
		"decay":    {{"--kind", "quadratic", "--tau", "3", "--mode", "recent", "--kappa", "10", "--seed", "1", "--events", "60", "--t-del", "20", "--horizon", "20", "--d", "3", "--mq", "2", "--no-report", "--out", "@dir"}},
		"bench":    {cat(data, []string{"--taus", "3,4", "--seeds", "1", "--modes", "recent", "--events", "12", "--t-del", "6", "--mq", "2", "--shard", "0/2", "--no-report", "--out", "@dir"})},
		"bound":    {{"--G", "1", "--hmin", "0.5", "--hmax", "1", "--constants-source", "assumed", "--rho", "0.5", "--ages", "3", "--horizon", "5"}},
		"budget":   {{"--ledger", "@", "--init", "--epsilon", "1", "--delta", "1e-5", "--key", "certifier.key"}},
		"certify":  {cat([]string{"--state", "state.json", "--out", "@", "--certificate", "@", "--insecure-seeded", "1"}, eps), cat([]string{"--state", "state.json", "--stream", "l.jsonl", "--out", "@", "--certificate", "@", "--memory", "rebuild", "--retained", "l.jsonl"}, eps)},
		"convert":  {{"d.csv", "--label", "y", "--out", "@"}, {"d.svm", "--out", "@"}},
		"evaluate": {{"--state", "state.json", "--stream", "l.jsonl"}, {"--store", "model", "--data", "d.csv", "--label", "y"}},
		"forget":   {{"--store", "model", "--ids", "3"}},
		"ingest":   {cat([]string{"--store", "model", "--id-offset", "1000"}, data)},
		"init":     {{"--store", "@dir", "--kind", "logistic", "--d", "3"}, cat([]string{"--store", "@dir"}, data)},
		"plan":     {cat([]string{"--stream", "l.jsonl", "--ages", "3", "--radius", "5", "--sample-bound", "3"}, eps)},
		"release":  {cat([]string{"--store", "model", "--out", "@", "--certificate", "@", "--no-ledger", "--insecure-seeded", "1"}, eps)},
		"releases": {{"--store", "model", "--get", "1", "--out", "@"}},
		"sigma":    {{"--alpha", "1", "--epsilon", "1", "--delta", "1e-5"}},
		"predict": {cat([]string{"--store", "model", "--out", "@"}, data),
			cat([]string{"--release", "r0.json", "--certificate", "c0.json", "--public-key", "certifier.pub", "--out", "@"}, data)},
		"tune": {cat(data, []string{"--etas", "0.1", "--lambdas", "0.01"})},
		// 256.0.0.1 is no address: serve stops at listening once its flags are accepted.
		"serve":  {{"--store", "model", "--addr", "256.0.0.1:1", "--key", "certifier.key"}},
		"verify": {{"--receipt", "r0.json", "--public-key", "certifier.pub", "--nonce", "00", "--ids", "1"}},
		"audit":  {cat([]string{"--stream", "l.jsonl", "--intervention", "noop", "--alpha", "1", "--seeded-noise", "1", "--trials", "100", "--t-del", "20"}, eps), cat([]string{"--store", "model", "--ids", "5", "--seeded-noise", "1", "--trials", "100"}, eps)},
	}
}

// runSweep is the child: it builds the inputs and runs every case of the
// commands of its shard ("k/n": the k-th of every n commands with numeric
// flags, counting from 0).
func runSweep(t *testing.T, shard string) {
	var k, of int
	if _, err := fmt.Sscanf(shard, "%d/%d", &k, &of); err != nil || of < 1 || k < 0 || k >= of {
		t.Fatalf("%s=%q: want k/n", sweepChild, shard)
	}
	t.Chdir(t.TempDir())
	run := func(args ...string) {
		t.Helper()
		out, err := runCLI(t, args...)
		require.NoError(t, err, "%v: %s", args, out)
	}
	var csv, svm strings.Builder
	csv.WriteString("a,b,y\n")
	for i := range 12 {
		fmt.Fprintf(&csv, "%g,%g,%d\n", 0.1*float64(i), -0.05*float64(i), i%2)
		fmt.Fprintf(&svm, "%d 1:%g 3:%g\n", 2*(i%2)-1, 0.1*float64(i), -0.05*float64(i))
	}
	require.NoError(t, os.WriteFile("d.csv", []byte(csv.String()), 0o644))
	require.NoError(t, os.WriteFile("d.svm", []byte(svm.String()), 0o644))
	run("gen", "--kind", "logistic", "--events", "40", "--d", "2", "--seed", "3", "--out", "l.jsonl")
	run("train", "--stream", "l.jsonl", "--radius", "5", "--sample-bound", "10", "--out", "state.json")
	run("keygen", "--out", "certifier")
	run("init", "--store", "model", "--data", "d.csv", "--label", "y", "--tau", "3", "--radius", "5", "--sample-bound", "10")
	run("ingest", "--store", "model", "--data", "d.csv", "--label", "y")
	run("release", "--store", "model", "--epsilon", "1", "--delta", "1e-5", "--out", "r0.json", "--certificate", "c0.json", "--key", "certifier.key")

	bases := sweepBases()
	n := 0
	fresh := func(a string) string {
		switch a {
		case "@":
			n++
			return filepath.Join("out", fmt.Sprintf("f%d", n))
		case "@dir":
			n++
			return filepath.Join("out", fmt.Sprintf("d%d", n))
		}
		return a
	}
	require.NoError(t, os.Mkdir("out", 0o755))
	values := hostileValues
	root := newRootCmd()
	cases, swept := 0, 0
	for _, c := range root.Commands() {
		var flags []*pflag.Flag
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := hostileValues[f.Value.Type()]; ok {
				flags = append(flags, f)
			}
		})
		if len(flags) == 0 {
			continue
		}
		if swept++; (swept-1)%of != k {
			continue
		}
		bs, ok := bases[c.Name()]
		if !ok {
			t.Errorf("command %s has numeric flags but no base invocation in sweepBases", c.Name())
			continue
		}
		// What each base says without the swept flag: the same words with
		// it are the base's outcome (serve's address, forget's id already
		// forgotten), not a refusal of the flag's value.
		baseMsg := make([]string, len(bs))
		for i, base := range bs {
			args := []string{c.Name()}
			for _, a := range base {
				args = append(args, fresh(a))
			}
			// Twice: a base that changes the store (ingest, forget) says
			// the second time what every case after it meets.
			for range 2 {
				if _, err := runCLI(t, args...); err != nil {
					baseMsg[i] = freshPath.ReplaceAllString(err.Error(), "@")
				}
			}
		}
		for _, f := range flags {
			bad := map[string]bool{}
			vals := slices.Clone(values[f.Value.Type()])
			for _, v := range unparsable[f.Value.Type()] {
				bad[v] = true
				vals = append(vals, v)
			}
			for _, v := range vals {
				for bi, base := range bs {
					args := []string{c.Name()}
					for _, a := range base {
						args = append(args, fresh(a))
					}
					args = append(args, "--"+f.Name+"="+v)
					cases++
					fmt.Printf("case %d: unlearn %s\n", cases, strings.Join(args, " "))
					start := time.Now()
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Errorf("unlearn %s panicked: %v", strings.Join(args, " "), r)
							}
						}()
						_, err := runCLI(t, args...)
						if err == nil {
							if bad[v] {
								t.Errorf("unlearn %s: accepted", strings.Join(args, " "))
							}
							return
						}
						msg := err.Error()
						for _, w := range goWordsInMessages {
							if strings.Contains(msg, w) {
								t.Errorf("unlearn %s: the message shows Go's %q: %s", strings.Join(args, " "), w, msg)
							}
						}
						for _, p := range goNamesIn(msg) {
							t.Errorf("unlearn %s: the message %s: %s", strings.Join(args, " "), p, msg)
						}
						if bad[v] && !strings.Contains(msg, "--"+f.Name+": ") {
							t.Errorf("unlearn %s: the message does not name --%s: %s", strings.Join(args, " "), f.Name, msg)
						}
						if baseMsg[bi] == freshPath.ReplaceAllString(msg, "@") {
							return
						}
						for _, p := range refusalProblems(f.Name, msg) {
							t.Errorf("unlearn %s: the message %s: %s", strings.Join(args, " "), p, msg)
						}
					}()
					if os.Getenv("UNLEARN_SWEEP_TIMES") != "" {
						fmt.Printf("time %s %s %v\n", c.Name(), f.Name, time.Since(start).Microseconds())
					}
					if d := time.Since(start); d > 20*time.Second {
						t.Errorf("unlearn %s took %v", strings.Join(args, " "), d.Round(time.Second))
					}
				}
			}
		}
	}
	t.Logf("shard %s: %d cases", shard, cases)
}
