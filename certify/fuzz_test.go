package certify

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzVerify checks certificate parsing and verification on arbitrary
// certificate bytes against a genuine release; run the fuzzer with
//
//	go test -run='^$' -fuzz=FuzzVerify -fuzzminimizetime=0 ./certify
//
// Properties: neither ParseCertificate nor Verify panics; every rejection
// is a *VerifyError naming a field; a certificate that verifies survives
// MarshalIndent → ParseCertificate byte for byte.
//
// The seeds run with every `go test`. On the project machine (Go 1.26) the
// fuzz workers stall for long stretches while minimizing a new input;
// -fuzzminimizetime=0 skips the minimization and keeps them at thousands
// of inputs a second.
func FuzzVerify(f *testing.F) {
	is := issue(f, nil)
	js, err := is.cert.MarshalIndent()
	require.NoError(f, err)
	before, after := snapshot(f, is.before, is.f.header), snapshot(f, is.after, is.f.header)
	f.Add(js)
	f.Add(bytes.Replace(js, []byte(`"memory": "reset"`), []byte(`"memory": "keep"`), 1))
	f.Add(bytes.Replace(js, []byte(`"epsilon": 1`), []byte(`"epsilon": -1`), 1))
	f.Add([]byte(`{"format":"unlearn-certificate/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCertificate(data)
		if err != nil {
			requireVerifyError(t, err)
			return
		}
		if _, err := Verify(c, before, after); err != nil {
			requireVerifyError(t, err)
			return
		}
		out, err := c.MarshalIndent()
		require.NoError(t, err)
		c2, err := ParseCertificate(out)
		require.NoError(t, err, "a verified certificate must parse after MarshalIndent")
		out2, err := c2.MarshalIndent()
		require.NoError(t, err)
		require.Equal(t, string(out), string(out2), "MarshalIndent is not stable")
	})
}

func requireVerifyError(t *testing.T, err error) {
	t.Helper()
	var ve *VerifyError
	require.Truef(t, errors.As(err, &ve), "error %v is not a *VerifyError", err)
	require.NotEmpty(t, ve.Field, "a *VerifyError must name the field")
}
