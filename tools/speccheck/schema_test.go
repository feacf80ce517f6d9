package speccheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/experiment"
	"unlearn/internal/strictjson"
	"unlearn/ledger"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/stream"
)

// schemaDir is docs/schemas relative to this package.
var schemaDir = filepath.Join("..", "..", "docs", "schemas")

// format is one published format: its schema, real documents produced by
// the toolkit in this test, the toolkit's own reader, and hand-broken
// documents that the schema must reject. Adding a schema for a new format
// is one row of formats().
type format struct {
	name string
	// schema is a file of docs/schemas, optionally with a #fragment.
	schema string
	// docs returns real documents by name.
	docs func(*outputs) map[string][]byte
	// instances splits a document into the JSON values the schema
	// validates; nil means the document is one value.
	instances func(doc []byte) [][]byte
	// read is the toolkit's reader of a whole document (o brings the
	// public key a signed format is verified with).
	read func(o *outputs, doc []byte) error
	// broken are edits of a real document that the schema must reject.
	broken []breakage
}

// breakage is a hand-broken document: doc names the real document it
// edits, edit returns the broken bytes, and readerRejects says whether the
// toolkit's reader refuses it too (where the reader is stricter than
// JSON Schema can be, or lenient where it is not, the flag is false).
type breakage struct {
	name          string
	doc           string
	edit          func(t *testing.T, doc []byte) []byte
	readerRejects bool
}

func formats() []format {
	streamDocs := func(kinds ...string) func(*outputs) map[string][]byte {
		return func(o *outputs) map[string][]byte {
			m := map[string][]byte{}
			for _, k := range kinds {
				m[k] = o.streams[k]
			}
			return m
		}
	}
	readStream := func(_ *outputs, doc []byte) error { _, err := stream.Read(bytes.NewReader(doc)); return err }
	return append([]format{
		{
			name: "stream header", schema: "olbfgs-stream-v1.header.schema.json",
			docs:      streamDocs("quadratic", "logistic", "quadratic-deletes", "multinomial"),
			instances: func(doc []byte) [][]byte { return lines(doc)[:1] },
			read:      readStream,
			broken: []breakage{
				{"format v2", "quadratic", editLine(0, set("format", "olbfgs-stream/v2")), true},
				{"unknown kind", "quadratic", editLine(0, set("kind", "cubic")), true},
				{"d = 0", "logistic", editLine(0, set("d", 0)), true},
				{"missing d", "logistic", editLine(0, del("d")), true},
				{"lambda in a quadratic stream", "quadratic", editLine(0, set("lambda", 0.05)), true},
				{"missing H1", "quadratic", editLine(0, del("H1")), true},
				{"H0 in a logistic stream", "logistic", editLine(0, set("H0", [][]float64{{1}})), true},
				{"negative lambda", "logistic", editLine(0, set("lambda", -1)), true},
				{"H0 of strings", "quadratic", editLine(0, set("H0", [][]string{{"1"}})), true},
				{"multinomial without k", "multinomial", editLine(0, del("k")), true},
				{"k = 1", "multinomial", editLine(0, set("k", 1)), true},
				{"k in a logistic stream", "logistic", editLine(0, set("k", 3)), true},
			},
		},
		{
			name: "multinomial stream events", schema: "olbfgs-stream-v1.event.schema.json#/$defs/multinomial",
			docs:      streamDocs("multinomial"),
			instances: func(doc []byte) [][]byte { return lines(doc)[1:] },
			read:      readStream,
			broken: []breakage{
				{"negative class", "multinomial", editLine(1, set("y", -1)), true},
				{"fractional class", "multinomial", editLine(1, set("y", 0.5)), true},
				{"index of a string", "multinomial", editLine(31, set("x_index", []string{"0", "2"})), true},
				{"missing x", "multinomial", editLine(1, del("x")), true},
			},
		},
		{
			name: "quadratic stream events", schema: "olbfgs-stream-v1.event.schema.json#/$defs/quadratic",
			docs:      streamDocs("quadratic", "quadratic-deletes"),
			instances: func(doc []byte) [][]byte { return lines(doc)[1:] },
			read:      readStream,
			broken: []breakage{
				{"unknown field", "quadratic", editLine(1, set("x", []float64{1, 2, 3})), true},
				{"alpha above 1", "quadratic", editLine(1, set("alpha", 1.5)), true},
				{"missing a", "quadratic", editLine(1, del("a")), true},
				{"fractional id", "quadratic", editLine(1, set("id", 1.5)), true},
				{"id as a string", "quadratic", editLine(1, set("id", "1")), true},
				{"unknown op", "quadratic", editLine(1, set("op", "update")), true},
				{"delete with a payload", "quadratic-deletes", editDelete(set("a", []float64{1, 2, 3})), true},
				{"delete without id", "quadratic-deletes", editDelete(del("id")), true},
			},
		},
		{
			name: "logistic stream events", schema: "olbfgs-stream-v1.event.schema.json#/$defs/logistic",
			docs:      streamDocs("logistic"),
			instances: func(doc []byte) [][]byte { return lines(doc)[1:] },
			read:      readStream,
			broken: []breakage{
				{"y = 0", "logistic", editLine(2, set("y", 0)), true},
				{"a in a logistic stream", "logistic", editLine(2, set("a", []float64{1, 2, 3})), true},
				{"x of strings", "logistic", editLine(2, set("x", []string{"1", "2", "3"})), true},
				{"missing y", "logistic", editLine(2, del("y")), true},
			},
		},
		{
			name: "snapshot", schema: "olbfgs-state-v1.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.snapshots },
			read: func(_ *outputs, doc []byte) error { _, _, err := olbfgs.UnmarshalSnapshot(doc); return err },
			broken: []breakage{
				{"unknown field", "logistic", editDoc(set("extra", 1)), true},
				{"format v2", "logistic", editDoc(set("format", "olbfgs-state/v2")), true},
				{"eta = 0", "logistic", editDoc(set("config/eta", 0)), true},
				{"unknown config field", "logistic", editDoc(set("config/lr", 0.1)), true},
				{"missing stream", "logistic", editDoc(del("stream")), true},
				{"missing w", "logistic", editDoc(del("w")), true},
				{"pair with an unknown field", "quadratic-deletes", editDoc(set("memory/0/rho", 1)), true},
				{"w of strings", "logistic", editDoc(set("w", []string{"0", "0", "0"})), true},
				{"stream header of the other kind", "logistic", editDoc(set("stream/H0", [][]float64{{1}})), true},
				{"negative t", "logistic", editDoc(set("t", -1)), true},
				{"pair guard without its window", "certifiable", editDoc(del("config/pair_min")), true},
				{"pair angle 1", "certifiable", editDoc(set("config/pair_angle", 1)), true},
				{"negative radius", "certifiable", editDoc(set("config/radius", -1)), true},
				{"sample bound as a string", "certifiable", editDoc(set("config/sample_bound", "2")), true},
				{"an option in a v1 snapshot", "logistic", editDoc(set("config/average", true)), true},
			},
		},
		{
			name: "snapshot v2", schema: "olbfgs-state-v2.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.snapshotsV2 },
			read: func(_ *outputs, doc []byte) error { _, _, err := olbfgs.UnmarshalSnapshot(doc); return err },
			broken: []breakage{
				{"format v1", "practitioner", editDoc(set("format", "olbfgs-state/v1")), true},
				{"missing inserts", "practitioner", editDoc(del("inserts")), true},
				{"standardization without the option", "multinomial", editDoc(set("standardization", map[string]any{"n": 0, "mean": []float64{0, 0, 0}, "m2": []float64{0, 0, 0}})), true},
				{"missing average", "practitioner", editDoc(del("average")), true},
				{"negative m2", "practitioner", editDoc(set("standardization/m2/0", -1)), true},
				{"share above 1", "practitioner", editDoc(set("progress/recent_accuracy", 1.5)), true},
				{"unknown progress field", "multinomial-practitioner", editDoc(set("progress/top5", 0.9)), true},
				{"step power above 1", "practitioner", editDoc(set("config/step_power", 2)), true},
				{"outputs 1", "multinomial", editDoc(set("config/outputs", 1)), true},
				{"no option", "multinomial", editDoc(del("config/outputs")), true},
			},
		},
		{
			name: "run record", schema: "unlearn-run-v2.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.records },
			read: func(_ *outputs, doc []byte) error { _, err := experiment.ReadRecord(bytes.NewReader(doc)); return err },
			broken: []breakage{
				{"format v3", "file", editDoc(set("format", "unlearn-run/v3")), true},
				{"unknown summary field", "file", editDoc(set("methods/0/summary/median", 1)), true},
				{"unknown config field", "generated", editDoc(set("config/stream/noise", 1)), true},
				{"series value Inf unquoted as a word", "generated", editDoc(set("methods/1/series/E_w/0", "Inf")), true},
				{"unknown deletion mode", "file", editDoc(set("config/mode", "sideways")), false},
				{"two decay fits", "file", editDoc(set("methods/0/summary/rho", []float64{1, 1})), true},
				{"clearance -2", "file", editDoc(set("methods/0/summary/clearance", -2)), false},
				{"no methods", "file", editDoc(set("methods", []any{})), false},
				{"short source hash", "file", editDoc(set("source/sha256", "abc")), false},
				{"file seed beside a generated stream", "generated", editDoc(set("source/seed", 3)), false},
				{"negative file seed", "file", editDoc(set("source/seed", -1)), true},
			},
		},
		{
			name: "results manifest", schema: "unlearn-results-v1.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.manifests },
			read: func(_ *outputs, doc []byte) error {
				var m experiment.Manifest
				if err := strictjson.Decode(bytes.NewReader(doc), &m); err != nil {
					return err
				}
				if m.Format != experiment.ManifestFormat {
					return fmt.Errorf("format %q", m.Format)
				}
				return nil
			},
			broken: []breakage{
				{"format v2", "grid", editDoc(set("format", "unlearn-results/v2")), true},
				{"unknown config field", "grid", editDoc(set("grid/configs/0/speed", 1)), true},
				{"shard 1of2", "grid", editDoc(set("shards/0", "1of2")), false},
				{"t_del = 0", "grid", editDoc(set("grid/configs/0/t_del", 0)), false},
			},
		},
		{
			name: "release", schema: "unlearn-release-v1.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.releases },
			read: func(_ *outputs, doc []byte) error { _, err := certify.ParseRelease(doc); return err },
			broken: []breakage{
				{"format v2", "derived noop", editDoc(set("format", "unlearn-release/v2")), true},
				{"a pair with its source", "exact window", editDoc(set("memory/0/source", []int{31, 32})), true},
				{"an event counter t", "derived noop", editDoc(set("t", 40)), true},
				{"deleted ids", "derived noop", editDoc(set("deleted", []int{35})), true},
				{"a skip counter", "diameter", editDoc(set("skipped", 0)), true},
				{"a hash of the state", "diameter", editDoc(set("sha256", strings.Repeat("0", 64))), true},
				{"loss header with metadata", "derived noop", editDoc(set("loss/seed", 3)), true},
				{"pair without y", "exact window", editDoc(del("memory/0/y")), true},
				{"w of strings", "diameter", editDoc(set("w", []string{"0", "0", "0"})), true},
				{"unknown config field", "diameter", editDoc(set("config/lr", 0.1)), true},
				{"pair guard without its window", "diameter", editDoc(set("config/pair_min", 0)), true},
				{"config without radius", "diameter", editDoc(del("config/radius")), false},
				{"config without the pair guard's fields", "diameter", editDoc(del("config/pair_angle")), false},
				{"contract with an unknown field", "contract csv", editDoc(set("contract/mean", []float64{0, 0, 0})), true},
				{"contract of another format", "contract csv", editDoc(set("contract/format", "xls")), true},
				{"contract classes as numbers", "contract idx", editDoc(set("contract/classes", []int{0, 6})), true},
				{"one class", "contract csv", editDoc(set("contract/classes", []string{"sick"})), true},
				{"idx contract without its scale", "contract idx", editDoc(del("contract/scale")), true},
				{"csv contract with an image scale", "contract csv", editDoc(set("contract/scale", 255)), true},
				{"csv contract without features", "contract csv", editDoc(del("contract/features")), true},
				{"libsvm contract with a label column", "contract libsvm", editDoc(set("contract/label", "y")), true},
				{"a repeated feature", "contract csv", editDoc(set("contract/features/1", "age")), true},
				{"the file name", "contract csv", editDoc(set("contract/file", "patients.csv")), true},
			},
		},
		{
			name: "evaluation", schema: "unlearn-evaluation-v1.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.evaluations },
			read: func(_ *outputs, doc []byte) error {
				var r model.Report
				if err := strictjson.Decode(bytes.NewReader(doc), &r); err != nil {
					return err
				}
				if r.Format != model.ReportFormat {
					return fmt.Errorf("format %q", r.Format)
				}
				return nil
			},
			broken: []breakage{
				{"format v2", "classifier", editDoc(set("format", "unlearn-evaluation/v2")), true},
				{"an unknown metric", "classifier", editDoc(set("models/0/precision", 0.5)), true},
				{"recall as a string", "classifier", editDoc(set("models/0/classes/0/recall", "0.5")), true},
				{"no models", "classifier", editDoc(set("models", []any{})), false},
				{"accuracy above 1", "classifier", editDoc(set("models/0/accuracy", 1.5)), false},
				{"a classifier without its log loss", "classifier", editDoc(del("models/0/log_loss")), false},
				{"a regression with an accuracy", "regression", editDoc(set("models/0/accuracy", 0.5)), false},
				{"n = 0", "regression", editDoc(set("models/0/n", 0)), false},
				{"a negative count", "classifier", editDoc(set("models/0/confusion/0/0", -1)), false},
				{"no score spread", "classifier", editDoc(del("models/0/scores")), false},
				{"a negative score spread", "classifier", editDoc(set("models/0/scores/sd", -1)), false},
				{"the noise's spread without σ", "classifier", editDoc(del("models/1/sigma")), false},
				{"σ without the noise's spread", "classifier", editDoc(del("models/1/noise_on_scores")), false},
				{"σ = 0", "classifier", editDoc(set("models/1/sigma", 0)), false},
			},
		},
		{
			name: "predictions", schema: "unlearn-predictions-v1.schema.json",
			docs:      func(o *outputs) map[string][]byte { return o.predictions },
			instances: lines,
			read: func(_ *outputs, doc []byte) error {
				for i, l := range lines(doc) {
					var v map[string]any
					if err := json.Unmarshal(l, &v); err != nil {
						return fmt.Errorf("line %d: %w", i+1, err)
					}
				}
				return nil
			},
			broken: []breakage{
				{"a probability above 1", "classifier", editLine(0, set("p_sick", 1.5)), false},
				{"an id object", "classifier", editLine(1, set("id", map[string]any{"k": 1})), false},
				{"a numeric label", "classifier", editLine(2, set("label", 6)), false},
				{"no id", "regression", editLine(0, del("id")), false},
				{"a label beside a prediction", "regression", editLine(0, set("label", "x")), false},
				{"an unknown field", "regression", editLine(0, set("score", 1)), false},
				{"not an object", "regression", func(t *testing.T, doc []byte) []byte { return append([]byte("[1]\n"), doc...) }, true},
			},
		},
		{
			name: "certificate", schema: "unlearn-certificate-v2.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.certificates },
			read: func(_ *outputs, doc []byte) error { _, err := certify.ParseCertificate(doc); return err },
			broken: []breakage{
				{"format v1", "derived noop", editDoc(set("format", "unlearn-certificate/v1")), true},
				{"a hash of the state before the noise", "derived noop", editDoc(set("before_sha256", strings.Repeat("0", 64))), true},
				{"covers", "diameter", editDoc(set("covers", "state")), true},
				{"redacted", "diameter", editDoc(set("redacted", true)), true},
				{"memory kept", "diameter", editDoc(set("memory", "keep")), true},
				{"unknown calibration", "diameter", editDoc(set("calibration", "laplace")), true},
				{"unspecified provenance", "diameter", editDoc(set("provenance", "unspecified")), true},
				{"v1 bound inputs", "derived noop", editDoc(set("alpha/bound", map[string]any{"G": 1})), true},
				{"v1 given source", "assumed rebuild", editDoc(set("alpha/source", "given")), false},
				{"estimated provenance", "assumed rebuild", editDoc(set("provenance", "estimated")), false},
				{"assumed alpha labelled proved", "assumed rebuild", editDoc(set("alpha/provenance", "proved")), false},
				{"beta with a derived alpha", "derived noop", editDoc(set("beta", 0.001)), false},
				{"exact with noise", "exact window", editDoc(set("sigma", 1)), false},
				{"exact with a reset memory", "exact oracle", editDoc(set("memory", "reset")), false},
				{"noised without a sampler", "derived noop", editDoc(set("sampler", "none")), false},
				{"seeded and deployable", "derived noop", editDoc(set("deployable", true)), false},
				{"derived without its deletion", "derived retain-ft", editDoc(del("alpha/deletion")), false},
				{"derived alpha of an oracle replay", "derived noop", editDoc(set("alpha/deletion/intervention/kind", "oracle")), false},
				{"window of another intervention", "derived noop", editDoc(set("alpha/deletion/intervention/window", 10)), false},
				{"window 0 written", "derived window", editDoc(set("alpha/deletion/intervention/window", 0)), false},
				{"negative age", "derived noop", editDoc(set("alpha/deletion/ages/0", -1)), false},
				{"repeated age", "derived window", editDoc(set("alpha/deletion/ages", []int{10, 10})), false},
				{"diameter without a radius", "diameter", editDoc(set("config/radius", 0)), false},
				{"config without radius", "derived noop", editDoc(del("config/radius")), false},
				{"reset with retained inserts", "derived noop", editDoc(set("retained", 3)), false},
				{"radius binding of a pair drop", "derived logistic unguarded", editDoc(set("alpha/binding", "radius")), false},
				{"recursion binding with a reason", "derived noop", editDoc(set("alpha/why", "because")), false},
				{"diameter binding without its reason", "derived logistic unguarded", editDoc(del("alpha/why")), false},
				{"diameter source without its reason", "diameter", editDoc(del("alpha/why")), false},
				{"assumed alpha with a binding", "assumed rebuild", editDoc(set("alpha/binding", "diameter")), false},
				{"signature without key id", "derived noop", editDoc(del("key_id")), false},
				{"signature not hex", "exact window", editDoc(set("signature", "zz")), false},
				{"short release hash", "diameter", editDoc(set("release_sha256", "abc")), false},
			},
		},
		{
			name: "ledger", schema: "unlearn-ledger-v1.schema.json",
			docs:      func(o *outputs) map[string][]byte { return o.ledgers },
			instances: lines,
			read: func(o *outputs, doc []byte) error {
				_, err := ledger.Parse("ledger", doc, o.publicKey)
				return err
			},
			broken: []breakage{
				{"format v2", "empty", editLine(0, set("genesis/format", "unlearn-ledger/v2")), true},
				{"genesis at seq 1", "empty", editLine(0, set("seq", 1)), true},
				{"genesis with a charge", "charged", editLine(0, set("charge", map[string]any{"label": "x", "certificate": "x", "alpha": 1, "sigma": 1, "beta": 0})), true},
				{"short key id", "empty", editLine(0, set("genesis/key_id", "abc")), true},
				{"unknown record type", "charged", editLine(1, set("type", "refund")), true},
				{"unknown charge field", "charged", editLine(1, set("charge/zcdp", 0.1)), true},
				{"negative alpha", "charged", editLine(1, set("charge/alpha", -1)), true},
				{"charge without totals", "charged", editLine(1, del("totals")), true},
				{"zero releases", "charged", editLine(1, set("totals/releases", 0)), true},
				{"prev not a hash", "charged", editLine(2, set("prev", "abc")), true},
				{"signature not base64", "charged", editLine(2, set("sig", "not a signature")), true},
				{"seal with totals", "charged", editLastLine(set("totals", map[string]any{"releases": 1, "epsilon": 0, "beta": 0})), true},
			},
		},
		{
			name: "public key", schema: "unlearn-public-key-v1.schema.json",
			docs: func(o *outputs) map[string][]byte { return map[string][]byte{"public": o.keys["public"]} },
			read: func(_ *outputs, doc []byte) error { _, err := sign.ParsePublic("pub", doc); return err },
			broken: []breakage{
				{"format v2", "public", editDoc(set("format", "unlearn-public-key/v2")), true},
				{"a secret key's format", "public", editDoc(set("format", "unlearn-secret-key/v1")), true},
				{"31-byte key", "public", editDoc(set("public_key", strings.Repeat("A", 40)+"AA==")), true},
				{"base64 with non-zero padding bits", "public", editDoc(set("public_key", strings.Repeat("A", 43)+"B=")), true},
				{"short key id", "public", editDoc(set("key_id", "abc")), true},
				{"missing key id", "public", editDoc(del("key_id")), true},
				{"a seed in the public file", "public", editDoc(set("ed25519_seed", strings.Repeat("A", 43)+"=")), true},
			},
		},
		{
			name: "secret key", schema: "unlearn-secret-key-v1.schema.json",
			docs: func(o *outputs) map[string][]byte { return map[string][]byte{"secret": o.keys["secret"]} },
			read: func(_ *outputs, doc []byte) error { _, err := sign.ParseSecret("key", doc); return err },
			broken: []breakage{
				{"format v2", "secret", editDoc(set("format", "unlearn-secret-key/v2")), true},
				{"missing seed", "secret", editDoc(del("ed25519_seed")), true},
				{"16-byte commitment secret", "secret", editDoc(set("commit_secret", strings.Repeat("A", 22)+"==")), true},
				{"unknown field", "secret", editDoc(set("private_key", "x")), true},
				{"key id in upper case", "secret", editDoc(set("key_id", strings.Repeat("A", 32))), true},
			},
		},
		{
			name: "accountant", schema: "unlearn-accountant-v2.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.accountants },
			read: func(_ *outputs, doc []byte) error { var a certify.Accountant; return json.Unmarshal(doc, &a) },
			broken: []breakage{
				{"format v1", "spent", editDoc(set("format", "unlearn-accountant/v1")), true},
				{"unknown field", "spent", editDoc(set("epsilon", 1)), true},
				{"budget delta 1", "empty", editDoc(set("budget/delta", 1)), true},
				{"budget delta 0", "empty", editDoc(set("budget/delta", 0)), true},
				{"negative sigma", "spent", editDoc(set("charges/0/sigma", -1)), true},
				{"charge beta 1", "spent", editDoc(set("charges/0/beta", 1)), true},
				{"missing totals", "spent", editDoc(del("spent")), true},
				{"v1 zcdp charge", "spent", editDoc(set("charges/1/zcdp", 0.1)), true},
				{"charge without sigma", "spent", editDoc(del("charges/1/sigma")), true},
				{"totals without mu", "spent", editDoc(del("spent/mu")), true},
				{"exceeded", "spent", editDoc(set("spent/exceeded", true)), true},
			},
		},
	}, receiptFormats()...)
}

// compile compiles a schema of docs/schemas (with an optional fragment),
// resolving references between the files.
func compile(t *testing.T, ref string) *jsonschema.Schema {
	t.Helper()
	file, frag, _ := strings.Cut(ref, "#")
	abs, err := filepath.Abs(filepath.Join(schemaDir, file))
	require.NoError(t, err)
	loc := "file://" + filepath.ToSlash(abs)
	if frag != "" {
		loc += "#" + frag
	}
	sch, err := jsonschema.NewCompiler().Compile(loc)
	require.NoError(t, err, "schema %s", ref)
	return sch
}

// validate validates one JSON value.
func validate(sch *jsonschema.Schema, inst []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(inst))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// validateDoc validates every instance of doc, reporting the first failure
// with its position.
func validateDoc(f format, sch *jsonschema.Schema, doc []byte) error {
	insts := [][]byte{doc}
	if f.instances != nil {
		insts = f.instances(doc)
	}
	for i, inst := range insts {
		if err := validate(sch, inst); err != nil {
			return fmt.Errorf("instance %d: %w", i, err)
		}
	}
	return nil
}

func TestSchemasAcceptRealOutputs(t *testing.T) {
	o := realOutputs(t)
	for _, f := range formats() {
		t.Run(f.name, func(t *testing.T) {
			sch := compile(t, f.schema)
			docs := f.docs(o)
			require.NotEmpty(t, docs)
			for name, doc := range docs {
				require.NoError(t, f.read(o, doc), "the toolkit's reader, document %s", name)
				require.NoError(t, validateDoc(f, sch, doc), "document %s:\n%s", name, doc)
			}
		})
	}
}

func TestSchemasRejectBrokenDocuments(t *testing.T) {
	o := realOutputs(t)
	for _, f := range formats() {
		t.Run(f.name, func(t *testing.T) {
			sch := compile(t, f.schema)
			docs := f.docs(o)
			require.NotEmpty(t, f.broken, "every format has hand-broken documents")
			for _, b := range f.broken {
				doc, ok := docs[b.doc]
				require.True(t, ok, "%s: no document %q", b.name, b.doc)
				broken := b.edit(t, doc)
				require.NotEqual(t, string(doc), string(broken), "%s: the edit changed nothing", b.name)
				require.Error(t, validateDoc(f, sch, broken), "%s: the schema accepted:\n%s", b.name, broken)
				if b.readerRejects {
					require.Error(t, f.read(o, broken), "%s: the toolkit's reader accepted it", b.name)
				} else {
					require.NoError(t, f.read(o, broken), "%s: the reader rejects it: mark readerRejects", b.name)
				}
			}
		})
	}
}

// checkedElsewhere are the schemas whose documents are checked by the
// tests of the package that issues them rather than by a row of formats(),
// with the test that does.
var checkedElsewhere = map[string]string{
	// A receipt is issued by a served deletion request (package serve);
	// certify's test validates a signed receipt and the one it carries.
	"unlearn-receipt-v1.schema.json": "certify.TestReceiptSchema",
}

// TestEverySchemaIsChecked fails when a file of docs/schemas has no row in
// formats() (nor a test named in checkedElsewhere), or when docs/spec.md
// does not link it.
func TestEverySchemaIsChecked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var used []string
	for _, f := range formats() {
		file, _, _ := strings.Cut(f.schema, "#")
		used = append(used, file)
	}
	spec, err := os.ReadFile(specPath)
	require.NoError(t, err)
	for _, f := range files {
		base := filepath.Base(f)
		if _, ok := checkedElsewhere[base]; !ok {
			require.Contains(t, used, base, "schema %s has no row in formats()", base)
		}
		require.True(t, strings.Contains(string(spec), "(schemas/"+base+")"), "docs/spec.md does not link %s", base)
		compile(t, base)
	}
}

// lines splits a JSON Lines document into its lines (without newlines).
func lines(doc []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(doc, []byte("\n")), []byte("\n"))
}

// set returns an edit that sets the value at a slash-separated path of
// object keys and array indices (the last step may add a key).
func set(path string, v any) func(t *testing.T, root any) any {
	return func(t *testing.T, root any) any {
		parent, last := walk(t, root, path)
		switch p := parent.(type) {
		case map[string]any:
			p[last] = v
		case []any:
			i := index(t, last, len(p))
			p[i] = v
		default:
			t.Fatalf("set %s: parent is %T", path, parent)
		}
		return root
	}
}

// del returns an edit that removes the key at path.
func del(path string) func(t *testing.T, root any) any {
	return func(t *testing.T, root any) any {
		parent, last := walk(t, root, path)
		p, ok := parent.(map[string]any)
		require.True(t, ok, "del %s: parent is %T", path, parent)
		_, ok = p[last]
		require.True(t, ok, "del %s: no such key", path)
		delete(p, last)
		return root
	}
}

func walk(t *testing.T, root any, path string) (any, string) {
	steps := strings.Split(path, "/")
	cur := root
	for _, s := range steps[:len(steps)-1] {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[s]
			require.True(t, ok, "path %s: no key %q", path, s)
			cur = next
		case []any:
			cur = c[index(t, s, len(c))]
		default:
			t.Fatalf("path %s: %T at %q", path, cur, s)
		}
	}
	return cur, steps[len(steps)-1]
}

func index(t *testing.T, s string, n int) int {
	var i int
	_, err := fmt.Sscan(s, &i)
	require.NoError(t, err)
	require.True(t, i >= 0 && i < n, "index %d out of range %d", i, n)
	return i
}

// decode decodes a JSON value keeping numbers exact.
func decode(t *testing.T, b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

func encode(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// editDoc applies edit to a one-value document.
func editDoc(edit func(*testing.T, any) any) func(*testing.T, []byte) []byte {
	return func(t *testing.T, doc []byte) []byte { return encode(t, edit(t, decode(t, doc))) }
}

// editLine applies edit to line n (0-based) of a JSON Lines document.
func editLine(n int, edit func(*testing.T, any) any) func(*testing.T, []byte) []byte {
	return func(t *testing.T, doc []byte) []byte {
		ls := slices.Clone(lines(doc))
		ls[n] = encode(t, edit(t, decode(t, ls[n])))
		return append(bytes.Join(ls, []byte("\n")), '\n')
	}
}

// editLastLine applies edit to the last line of a JSON Lines document.
func editLastLine(edit func(*testing.T, any) any) func(*testing.T, []byte) []byte {
	return func(t *testing.T, doc []byte) []byte { return editLine(len(lines(doc))-1, edit)(t, doc) }
}

// editDelete applies edit to the first delete event of a stream.
func editDelete(edit func(*testing.T, any) any) func(*testing.T, []byte) []byte {
	return func(t *testing.T, doc []byte) []byte {
		for i, l := range lines(doc) {
			if bytes.Contains(l, []byte(`"op":"delete"`)) {
				return editLine(i, edit)(t, doc)
			}
		}
		t.Fatal("no delete event")
		return nil
	}
}
