package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/certify"
)

// TestLedgerStateMachine drives a ledger with random appends (cheap and
// expensive, new and repeated certificates) and reopenings, beside a model
// (the list of accepted releases). After every action: the file loads,
// holds exactly the model's releases in order, its totals are those of a
// fresh accountant fed the model, and a refused append left the file
// unchanged byte for byte.
func TestLedgerStateMachine(t *testing.T) {
	key := newKey(t)
	root := t.TempDir()
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		path := filepath.Join(root, fmt.Sprintf("l%d", run))
		b := certify.Budget{
			Epsilon: rapid.SampledFrom([]float64{0.5, 1, 2, 4}).Draw(rt, "epsilon"),
			Delta:   rapid.SampledFrom([]float64{1e-6, 1e-5, 1e-3}).Draw(rt, "delta"),
		}
		l, err := Create(path, b, key)
		if err != nil {
			rt.Fatal(err)
		}
		var model []Release
		var loaded []byte // the file's bytes as last loaded and checked…
		loadedFor := -1   // …against a model of this many releases
		rt.Repeat(map[string]func(*rapid.T){
			"append": func(rt *rapid.T) {
				r := Release{
					Label:       rapid.SampledFrom([]string{"", "release"}).Draw(rt, "label"),
					Certificate: fmt.Sprintf("c%d", rapid.IntRange(0, 12).Draw(rt, "cert")),
					Alpha:       rapid.SampledFrom([]float64{0, 0.1, 1, 2.5}).Draw(rt, "alpha"),
					Sigma:       rapid.Float64Range(0.5, 200).Draw(rt, "sigma"),
					Beta:        rapid.SampledFrom([]float64{0, 1e-9, 1e-7}).Draw(rt, "beta"),
				}
				// The prediction: a fresh accountant fed the model.
				dup := false
				for _, m := range model {
					dup = dup || m.Certificate == r.Certificate
				}
				a, err := certify.NewAccountant(b)
				if err != nil {
					rt.Fatal(err)
				}
				for _, m := range model {
					ch, _ := certify.ChargeFor(m.normalize().Label, m.Alpha, m.Sigma, m.Beta)
					if _, err := a.Spend(ch); err != nil {
						rt.Fatal(err)
					}
				}
				ch, err := certify.ChargeFor(r.normalize().Label, r.Alpha, r.Sigma, r.Beta)
				if err != nil {
					rt.Fatal(err)
				}
				exceed, _, err := a.WouldExceed(ch)
				if err != nil {
					rt.Fatal(err)
				}
				before, err := os.ReadFile(path)
				if err != nil {
					rt.Fatal(err)
				}
				_, err = l.Append(r)
				switch {
				case dup:
					if !errors.Is(err, ErrDuplicate) {
						rt.Fatalf("duplicate %q: %v", r.Certificate, err)
					}
				case exceed:
					if !errors.Is(err, ErrBudget) {
						rt.Fatalf("over budget: %v", err)
					}
				case err != nil:
					rt.Fatalf("refused: %v", err)
				default:
					model = append(model, r.normalize())
				}
				if err != nil {
					after, rerr := os.ReadFile(path)
					if rerr != nil || !bytes.Equal(before, after) {
						rt.Fatalf("a refused append changed the file (%v)", rerr)
					}
				}
			},
			"reopen": func(rt *rapid.T) {
				if l, err = Open(path, key); err != nil {
					rt.Fatal(err)
				}
			},
			"": func(rt *rapid.T) {
				want := freshTotals(t, b, model)
				if l.Totals() != want {
					rt.Fatalf("totals %+v, a fresh accountant %+v", l.Totals(), want)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					rt.Fatal(err)
				}
				if bytes.Equal(data, loaded) && len(model) == loadedFor {
					// Load is a function of the bytes: these were loaded
					// and checked against this model after an earlier
					// action (a refused append or a reopening changes
					// neither).
					return
				}
				got, err := Load(path, key.Public())
				if err != nil {
					rt.Fatal(err)
				}
				es := got.Entries()
				if len(es) != len(model) {
					rt.Fatalf("%d entries, model %d", len(es), len(model))
				}
				for i, e := range es {
					if e.Seq != i+1 || e.Release != model[i] {
						rt.Fatalf("entry %d = %+v, model %+v", i+1, e, model[i])
					}
				}
				if got.Totals() != want {
					rt.Fatalf("totals %+v loaded, a fresh accountant %+v", got.Totals(), want)
				}
				loaded, loadedFor = data, len(model)
				if want.Epsilon > b.Epsilon || want.Beta >= b.Delta {
					rt.Fatalf("over budget: %+v of %+v", want, b)
				}
			},
		})
	})
	require.Positive(t, run)
}
