package certify

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// csvHeader is the loss header of a logistic model trained on a CSV: its
// metadata records the data source as package dataset writes it.
func csvHeader(t *testing.T, d int) stream.Header {
	t.Helper()
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: 0.05}
	features := make([]string, d)
	for i := range features {
		features[i] = string(rune('a' + i))
	}
	require.NoError(t, h.SetMeta(dataset.MetaSource, dataset.Source{File: "secret-export.csv", Format: dataset.CSV,
		Label: "y", ID: "email", Classes: []string{"no", "yes"}, Shuffle: new(uint64(7))}))
	require.NoError(t, h.SetMeta(dataset.MetaFeatures, features))
	return h
}

// TestReleaseCarriesTheContract: a release of a model trained on a data
// file carries its contract (and nothing else of the header's metadata),
// reads back, and is covered by the certificate's hash.
func TestReleaseCarriesTheContract(t *testing.T) {
	const d, tau = 3, 4
	r := rand.New(rand.NewPCG(4, 11))
	events := logisticStream(r, d, 50)
	loss, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	state, err := olbfgs.Replay(logisticCfg(d, tau), loss, events)
	require.NoError(t, err)
	h := csvHeader(t, d)
	rel, cert, err := Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(2), Header: &h})
	require.NoError(t, err)
	want := &model.Contract{Format: dataset.CSV, Features: []string{"a", "b", "c"}, Label: "y", ID: "email", Classes: []string{"no", "yes"}}
	require.Equal(t, want, rel.Contract)
	b, err := rel.Marshal()
	require.NoError(t, err)
	for _, word := range []string{"secret-export", "shuffle", "file"} {
		require.NotContains(t, string(b), word, "the contract carries no other metadata")
	}
	back, err := ParseRelease(b)
	require.NoError(t, err)
	require.Equal(t, want, back.Contract)
	_, err = Verify(cert, b, nil)
	require.NoError(t, err)

	// Editing the contract (swapping the classes) breaks the hash.
	edited := bytes.Replace(b, []byte(`"no",`), []byte(`"yes",`), 1)
	edited = bytes.Replace(edited, []byte(`"yes"`+"\n"), []byte(`"no"`+"\n"), 1)
	require.NotEqual(t, b, edited)
	_, err = Verify(cert, edited, nil)
	wantVerifyError(t, err, "release_sha256", ErrHash)

	// A release without a contract (older releases, synthetic streams)
	// has no "contract" field at all.
	plain, _, err := Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(2)})
	require.NoError(t, err)
	pb, err := plain.Marshal()
	require.NoError(t, err)
	require.NotContains(t, string(pb), "contract")
	require.Nil(t, plain.Contract)
}

func TestParseReleaseChecksTheContract(t *testing.T) {
	const d = 3
	loss, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	state, err := olbfgs.New(logisticCfg(d, 2), loss)
	require.NoError(t, err)
	h := csvHeader(t, d)
	rel, _, err := Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(3), Header: &h})
	require.NoError(t, err)
	b, err := rel.Marshal()
	require.NoError(t, err)
	for name, edit := range map[string]func(c map[string]any){
		"two names for d = 3": func(c map[string]any) { c["features"] = []string{"a", "b"} },
		"three classes":       func(c map[string]any) { c["classes"] = []string{"x", "y", "z"} },
		"unknown format":      func(c map[string]any) { c["format"] = "xls" },
	} {
		t.Run(name, func(t *testing.T) {
			var d2 map[string]any
			require.NoError(t, json.Unmarshal(b, &d2))
			edit(d2["contract"].(map[string]any))
			eb, err := json.Marshal(d2)
			require.NoError(t, err)
			_, err = ParseRelease(eb)
			wantVerifyError(t, err, "release.contract", ErrRelease)
		})
	}
	// An unknown contract field is refused like any unknown field.
	var d3 map[string]any
	require.NoError(t, json.Unmarshal(b, &d3))
	d3["contract"].(map[string]any)["mean"] = []float64{0}
	eb, err := json.Marshal(d3)
	require.NoError(t, err)
	_, err = ParseRelease(eb)
	require.ErrorIs(t, err, ErrRelease)
	require.True(t, strings.Contains(err.Error(), "mean"))
}

// TestSpecRefusesAMalformedContract: a header whose data source record
// does not describe the state is refused before anything is released.
func TestSpecRefusesAMalformedContract(t *testing.T) {
	const d = 3
	loss, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	state, err := olbfgs.New(logisticCfg(d, 2), loss)
	require.NoError(t, err)
	h := csvHeader(t, d)
	require.NoError(t, h.SetMeta(dataset.MetaFeatures, []string{"a"}))
	_, _, err = Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(3), Header: &h})
	wantSpecError(t, err, "Header", ErrSpec)
}
