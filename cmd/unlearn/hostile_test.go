package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileInputs is issue 14's acceptance test: every hostile input and
// bad argument it lists makes the command fail (a non-nil error is a
// non-zero exit status in main) with a message naming what the user wrote,
// and nothing panics. Each case failed on the code before the fix: it
// either succeeded (a NUL dropped a deletion, 0 fell back to a default,
// --shard 0/0 ran unsharded), panicked (t_del + H overflowed), or blamed a
// flag or field the user did not write.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	good := filepath.Join(dir, "good.jsonl")
	_, err := runCLI(t, "gen", "--events", "20", "--d", "3", "--out", good)
	require.NoError(t, err)
	raw, err := os.ReadFile(good)
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(raw), "\n")

	lh := `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}`
	ins := `{"op":"insert","id":3,"x":[0.1,-1.2],"y":-1}`
	withMeta := func(meta string) string { return strings.TrimSuffix(lh, "}") + "," + meta + "}" }
	streams := map[string]string{
		"nul-delete":  write("nul-delete.jsonl", lh+"\n"+ins+"\x00"+`{"op":"delete","id":3}`+"\n"),
		"nul-header":  write("nul-header.jsonl", lh+"\x00 this is not json\n"+ins+"\n"),
		"nul-object":  write("nul-object.jsonl", lh+"\n"+`{"op":"insert",`+"\x00"+`"id":1,"x":[1,2],"y":1}`+"\n"),
		"meta-1e999":  write("meta-1e999.jsonl", withMeta(`"meta":1e999`)+"\n"+ins+"\n"),
		"meta-neg":    write("meta-neg.jsonl", withMeta(`"meta":-1e999`)+"\n"+ins+"\n"),
		"meta-nested": write("meta-nested.jsonl", withMeta(`"m":{"a":[1,2,1e400]}`)+"\n"+ins+"\n"),
		"bom":         write("bom.jsonl", "\uFEFF"+string(raw)),
		"no-header":   write("no-header.jsonl", ins+"\n"),
		"header-only": write("header-only.jsonl", header+"\n"),
	}
	out := func(name string) string { return filepath.Join(dir, "out", name) }
	require.NoError(t, os.Mkdir(filepath.Join(dir, "out"), 0o755))
	maxInt := strconv.FormatInt(1<<63-1, 10)
	small := []string{"--events", "40", "--d", "3"} // a small generated stream for run

	tests := []struct {
		name string
		args []string
		want []string // substrings the message must contain
		not  string   // a substring it must not contain ("" for none)
	}{
		// Streams.
		{"NUL before a delete", []string{"train", "--stream", streams["nul-delete"], "--out", out("s")}, []string{"line 2", "U+0000", "column 45"}, ""},
		{"NUL after the header", []string{"train", "--stream", streams["nul-header"], "--out", out("s")}, []string{"line 1", "U+0000"}, ""},
		{"NUL inside an object", []string{"train", "--stream", streams["nul-object"], "--out", out("s")}, []string{"line 2", "U+0000"}, "end of line"},
		{"1e999 in metadata", []string{"train", "--stream", streams["meta-1e999"], "--out", out("s")}, []string{"line 1", `field "meta"`, "1e999"}, ""},
		{"-1e999 in metadata", []string{"train", "--stream", streams["meta-neg"], "--out", out("s")}, []string{"line 1", `field "meta"`, "-1e999"}, ""},
		{"1e400 nested in metadata", []string{"train", "--stream", streams["meta-nested"], "--out", out("s")}, []string{"line 1", `field "m.a[2]"`, "1e400"}, ""},
		{"byte-order mark", []string{"train", "--stream", streams["bom"], "--out", out("s")}, []string{"line 1", "byte-order mark"}, "ï"},
		{"missing header", []string{"train", "--stream", streams["no-header"], "--out", out("s")}, []string{"line 1", "header", "looks like an event"}, ""},
		{"header-only stream", []string{"run", "--stream", streams["header-only"], "--t-del", "1"}, []string{"--stream", "0 event(s)"}, "--horizon"},

		// Integer overflow of t_del + H (a panic before).
		{"run huge horizon", append([]string{"run", "--t-del", "10", "--horizon", maxInt}, small...), []string{"--horizon", maxInt}, ""},
		{"run huge t_del", append([]string{"run", "--t-del", maxInt, "--horizon", "5"}, small...), []string{"--t-del", maxInt}, ""},
		{"run huge horizon on a file", []string{"run", "--stream", good, "--t-del", "10", "--horizon", maxInt}, []string{"--horizon", maxInt}, ""},
		{"decay huge horizon", []string{"decay", "--kind", "quadratic", "--tau", "5", "--mode", "recent", "--kappa", "10", "--seed", "1", "--horizon", maxInt, "--no-report", "--out", out("d")}, []string{"--horizon", maxInt}, ""},
		{"decay huge t_del", []string{"decay", "--kind", "quadratic", "--tau", "5", "--mode", "recent", "--kappa", "10", "--seed", "1", "--t-del", maxInt, "--no-report", "--out", out("d")}, []string{"--t-del", maxInt}, ""},

		// Silent defaults and flags that do not apply.
		{"gen events 0", []string{"gen", "--events", "0", "--out", out("g")}, []string{"--events", "0"}, ""},
		{"gen d 0", []string{"gen", "--d", "0", "--out", out("g")}, []string{"--d", "0"}, ""},
		{"gen kappa 0", []string{"gen", "--kappa", "0", "--out", out("g")}, []string{"--kappa", "0"}, ""},
		{"gen feature-scale 0", []string{"gen", "--kind", "logistic", "--feature-scale", "0", "--out", out("g")}, []string{"--feature-scale", "0"}, ""},
		{"gen feature-scale on quadratic", []string{"gen", "--kind", "quadratic", "--feature-scale", "5", "--out", out("g")}, []string{"--feature-scale", "logistic only"}, ""},
		{"bench shard 0/0", []string{"bench", "--quick", "--shard", "0/0", "--no-report", "--out", out("b")}, []string{"--shard", "0/0"}, ""},
		{"train tau 0", []string{"train", "--stream", good, "--tau", "0", "--out", out("s")}, []string{"--tau", "0"}, ""},

		// Errors that blamed what the user did not write.
		{"run t_del beyond the stream", []string{"run", "--stream", good, "--t-del", "800"}, []string{"--t-del", "800", "T = 20"}, "--horizon"},
		{"bound no contraction", []string{"bound", "--G", "1", "--hmin", "0.25", "--hmax", "1", "--constants-source", "assumed", "--mu", "1", "--L", "4"}, []string{"--mu 1 --L 4", "ρ = 1.95"}, "--rho: "},
		{"bound mu without hmin", []string{"bound", "--G", "1", "--constants-source", "assumed", "--mu", "1", "--L", "4"}, []string{"--hmin", "required"}, "--rho: "},
		{"decay huge d", []string{"decay", "--kind", "quadratic", "--tau", "5", "--mode", "recent", "--kappa", "10", "--seed", "1", "--d", "3000000", "--no-report", "--out", out("d")}, []string{"--d", "3000000"}, "--mq"},
		{"decay count beyond the prefix", []string{"decay", "--kind", "quadratic", "--tau", "5", "--mode", "recent", "--kappa", "10", "--seed", "1", "--count", "400", "--no-report", "--out", out("d")}, []string{"--count", "400"}, ""},
		{"gen d 5000", []string{"gen", "--d", "5000", "--out", out("g")}, []string{"--d", "5000"}, "Options"},
		{"run output folder missing", append([]string{"run", "--t-del", "10", "--out", filepath.Join(dir, "nowhere", "r.json")}, small...), []string{"--out", "nowhere"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("unlearn %s panicked: %v", strings.Join(tt.args, " "), r)
					}
				}()
				_, err = runCLI(t, tt.args...)
			}()
			require.Error(t, err, "unlearn %s succeeded", strings.Join(tt.args, " "))
			msg := fmt.Sprint(err)
			for _, w := range tt.want {
				assert.Contains(t, msg, w, "the message must name what the user wrote")
			}
			if tt.not != "" {
				assert.NotContains(t, msg, tt.not, "the message blames something the user did not write")
			}
		})
	}
	ents, err := os.ReadDir(filepath.Join(dir, "out"))
	require.NoError(t, err)
	assert.Empty(t, ents, "a failed command left an output behind")
}
