package certify

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzVerify: parsing and verifying arbitrary certificate and release bytes
// never panics, every rejection is a *VerifyError naming a field, and an
// accepted certificate re-marshals to an equal certificate.
func FuzzVerify(f *testing.F) {
	is := issue(f)
	cb, _ := json.Marshal(is.cert)
	f.Add(cb, is.rel)
	f.Add([]byte(`{"format":"unlearn-certificate/v2"}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, certBytes, rel []byte) {
		c, err := ParseCertificate(certBytes)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Fatalf("parse error %v is not a *VerifyError naming a field", err)
			}
			return
		}
		if _, err := Verify(c, rel, nil); err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Fatalf("verify error %v is not a *VerifyError naming a field", err)
			}
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := ParseCertificate(b)
		if err != nil {
			t.Fatalf("a verified certificate does not re-parse: %v", err)
		}
		if _, err := Verify(c2, rel, nil); err != nil {
			t.Fatalf("a verified certificate does not re-verify: %v", err)
		}
	})
}
