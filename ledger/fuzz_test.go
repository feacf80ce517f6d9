package ledger

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse checks ledger parsing on arbitrary bytes against a genuine
// ledger's key; run the fuzzer with
//
//	go test -run='^$' -fuzz=FuzzParse -fuzzminimizetime=0 ./ledger
//
// Properties: Parse never panics; every refusal is an *Error wrapping one
// of the package's sentinels; an accepted input is byte for byte the
// ledger's canonical rendering (so every accepted file is one the key
// holder wrote).
func FuzzParse(f *testing.F) {
	key := newKey(f)
	l, err := Create(f.TempDir()+"/l", budget, key)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(l.Bytes())
	for i := 1; i <= 2; i++ {
		if _, err := l.Append(rel(i)); err != nil {
			f.Fatal(err)
		}
	}
	good := l.Bytes()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(append(bytes.Clone(good), good...))
	f.Add(bytes.Replace(good, []byte(`"seq":1`), []byte(`"seq":2`), 1))
	f.Add([]byte("\n"))
	sentinels := []error{ErrFormat, ErrNotCanonical, ErrSequence, ErrChain, ErrSignature, ErrKey, ErrTruncated,
		ErrSeal, ErrTrailing, ErrTotals, ErrCharge, ErrDuplicate, ErrBudget}
	pub := key.Public()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse("fuzz", data, pub)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T: %v", err, err)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("no sentinel: %v", err)
		}
		// Accepted: re-rendering its entries with the key reproduces it.
		data2, err := (&Ledger{key: key}).render(got.lines)
		if err != nil || !bytes.Equal(data2, data) {
			t.Fatalf("accepted a non-canonical file (%v)", err)
		}
	})
}
