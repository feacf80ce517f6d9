package sign

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseKeys checks key file parsing on arbitrary bytes; run the fuzzer
// with
//
//	go test -run='^$' -fuzz=FuzzParseKeys -fuzzminimizetime=0 ./sign
//
// Properties: neither parser panics; every refusal is a *FileError naming
// the path; an accepted key round-trips through its marshalled form.
func FuzzParseKeys(f *testing.F) {
	s := seeded(f, 30)
	f.Add(s.MarshalSecret())
	f.Add(s.Public().MarshalPublic())
	f.Add([]byte(`{"format":"unlearn-public-key/v1"}`))
	f.Add([]byte(`{"format":"unlearn-secret-key/v1","ed25519_seed":"AA=="}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(err error) {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != "k" {
				t.Fatalf("%T: %v", err, err)
			}
		}
		if sec, err := ParseSecret("k", data); err != nil {
			check(err)
		} else if again, err := ParseSecret("k", sec.MarshalSecret()); err != nil || !bytes.Equal(again.MarshalSecret(), sec.MarshalSecret()) {
			t.Fatalf("secret does not round-trip: %v", err)
		}
		if pub, err := ParsePublic("k", data); err != nil {
			check(err)
		} else if again, err := ParsePublic("k", pub.MarshalPublic()); err != nil || !again.Equal(pub) {
			t.Fatalf("public key does not round-trip: %v", err)
		}
	})
}
