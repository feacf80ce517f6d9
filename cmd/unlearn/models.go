package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"unlearn/certify"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/store"
	"unlearn/stream"
)

// namedModel is a model a command applies to data: a store's current state
// or exact counterfactual, a snapshot, a release.
type namedModel struct {
	name string
	l    *olbfgs.Learner
	// hdr is the model's loss header (kind, d, λ).
	hdr stream.Header
	// contract is the model's data contract, nil when none is recorded.
	contract *model.Contract
	// same says the state is the previous model's, bit for bit (the exact
	// counterfactual of a store served exactly).
	same bool
	// sigma is the σ of a noised release's verified certificate (0
	// otherwise, and for a release used unverified).
	sigma float64
}

// into returns how data is read into the model.
func (m namedModel) into(byPosition bool) intoModel {
	return intoModel{whose: "the model's", contract: m.contract, kind: m.hdr.Kind, byPosition: byPosition}
}

// apply returns the model for predictions and metrics.
func (m namedModel) apply() (*model.Model, error) {
	mm, err := model.New(m.l, m.contract)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.name, err)
	}
	return mm, nil
}

// releaseTrust are the flags that say how a release given for use
// (--release) is checked before anything is computed from it: its
// certificate and the certifier's public key, by the checks of 'unlearn
// verify' (signature, the release file's SHA-256, configuration, loss,
// dimension, memory), or --unverified, which uses it unchecked and says so.
type releaseTrust struct {
	certificates []string
	publicKey    string
	unverified   bool
}

func (t *releaseTrust) register(f *pflag.FlagSet) {
	f.StringArrayVar(&t.certificates, "certificate", nil, "the certificate of --release (one per --release, in order): the release is used only if it verifies as 'unlearn verify' checks it (with --public-key)")
	f.StringVar(&t.publicKey, "public-key", "", "the certifier's public key (unlearn keygen) that signed the certificate of --release")
	f.BoolVar(&t.unverified, "unverified", false, "use --release WITHOUT checking its certificate and signature (a warning on standard error says the results come from an unchecked file)")
}

// check reports flags that do not say how the given releases are checked.
func (t *releaseTrust) check(fl *pflag.FlagSet, releases []string) error {
	if len(releases) == 0 {
		for _, name := range []string{"certificate", "public-key", "unverified"} {
			if fl.Changed(name) {
				return flagError(name, "only with --release")
			}
		}
		return nil
	}
	switch {
	case t.unverified && len(t.certificates) > 0:
		return flagError("unverified", "not with --certificate (which checks the release): give one or the other")
	case t.unverified && t.publicKey != "":
		return flagError("unverified", "not with --public-key (which checks the release's certificate): give one or the other")
	case t.unverified:
		return nil
	case len(t.certificates) == 0:
		return flagError("certificate", "required with --release: a release is used only once its certificate verifies with the certifier's --public-key (as 'unlearn verify' checks it); --unverified uses it unchecked")
	case len(t.certificates) != len(releases):
		return flagError("certificate", "%d given for %d --release files: give one per release, in the same order", len(t.certificates), len(releases))
	case t.publicKey == "":
		return flagError("public-key", "required with --certificate: the certifier's public key (unlearn keygen NAME.pub); without it anyone could have written the certificate")
	}
	return nil
}

// releaseModel reads the i-th release file (unlearn release, unlearn
// certify) given by --release and, unless --unverified, verifies it against
// its certificate and the certifier's public key first: the file's bytes
// that are verified are the bytes that are used.
func releaseModel(path string, t *releaseTrust, i int, stderr io.Writer) (namedModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return namedModel{}, err
	}
	var sigma float64
	if t.unverified {
		fmt.Fprintf(stderr, "WARNING: --unverified: %s was NOT checked against a certificate or signature: the results come from an unchecked file\n", path)
	} else if sigma, err = verifyRelease(path, b, t.certificates[i], t.publicKey, stderr); err != nil {
		return namedModel{}, err
	}
	r, err := certify.ParseRelease(b)
	if err != nil {
		return namedModel{}, flagError("release", "%s: %v", path, err)
	}
	l, err := r.Learner()
	if err != nil {
		return namedModel{}, flagError("release", "%s: %v", path, err)
	}
	return namedModel{name: "release " + path, l: l, hdr: r.Loss, contract: r.Contract, sigma: sigma}, nil
}

// verifyRelease checks release, the bytes of the file path, against the
// certificate certFile signed by the key pubFile, as 'unlearn verify' does,
// and returns the σ its noise was drawn with (0 for an exact release).
func verifyRelease(path string, release []byte, certFile, pubFile string, stderr io.Writer) (float64, error) {
	pub, err := sign.LoadPublic(pubFile)
	if err != nil {
		return 0, flagError("public-key", "%v", err)
	}
	data, err := os.ReadFile(certFile)
	if err != nil {
		return 0, flagError("certificate", "%v", err)
	}
	cert, err := certify.ParseCertificate(data)
	if err != nil {
		return 0, flagError("certificate", "%s: %v", certFile, err)
	}
	rep, err := certify.Verify(cert, release, pub)
	if err != nil {
		return 0, fmt.Errorf("INVALID: release %s does not verify against certificate %s (nothing was computed from it): %w", path, certFile, err)
	}
	if !rep.Authenticated {
		return 0, fmt.Errorf("INVALID: release %s: certificate %s is not signed by key %s", path, certFile, pub.KeyID())
	}
	fmt.Fprintf(stderr, "verified %s: certificate %s, signed by key %s\n", path, certFile, pub.KeyID())
	return cert.SigmaApplied, nil
}

// snapshotModel reads a state snapshot given by --state.
func snapshotModel(path string) (namedModel, error) {
	l, h, err := readSnapshot(path)
	if err != nil {
		return namedModel{}, err
	}
	c, err := model.ContractOf(h)
	if err != nil {
		return namedModel{}, flagError("state", "%s: %v", path, err)
	}
	return namedModel{name: path, l: l, hdr: h, contract: c}, nil
}

// storeModels returns a store's current state and, if counterfactual, its
// exact counterfactual (the replay of the log without every forgotten
// sample). label, if not nil, names the current state (and may refuse
// it); "current state" otherwise.
func storeModels(dir string, counterfactual bool, label func(*store.Store) (string, error)) ([]namedModel, error) {
	s, err := openStore(dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	h := s.Header()
	c, err := model.ContractOf(h)
	if err != nil {
		return nil, fmt.Errorf("the store's header: %w", err)
	}
	name := "current state"
	if label != nil {
		if name, err = label(s); err != nil {
			return nil, err
		}
	}
	// The published state: while an approximate deletion is pending, the
	// noised w alone, never the un-noised trajectory's average.
	cur, _, err := s.PublishedState()
	if err != nil {
		return nil, err
	}
	out := []namedModel{{name: name, l: cur, hdr: h, contract: c}}
	if !counterfactual {
		return out, nil
	}
	// Each read is one snapshot of the store; the label "= current"
	// comes from comparing the two states, not from a third read
	// (a forget by another process in between would make it wrong).
	cf, err := s.Counterfactual()
	if err != nil {
		return nil, err
	}
	if !cf.Equal(cur) {
		return append(out, namedModel{name: "exact counterfactual", l: cf, hdr: h, contract: c}), nil
	}
	return append(out, namedModel{name: "exact counterfactual (= current)", l: cur, hdr: h, contract: c, same: true}), nil
}
