package sign_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"unlearn/sign"
)

// A certifier generates its keys once, keeps NAME.key and publishes
// NAME.pub; a verifier checks a signature with the public key alone.
func Example() {
	dir, err := os.MkdirTemp("", "sign-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	s, err := sign.Generate()
	if err != nil {
		fmt.Println(err)
		return
	}
	keyPath, pubPath, err := s.WriteFiles(filepath.Join(dir, "certifier"), false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(keyPath), filepath.Base(pubPath))

	// The certifier signs canonical bytes.
	msg := []byte(`{"release":1,"sigma":3.7324,"sig":""}`)
	sig := s.Sign(msg)

	// A verifier loads the public key and checks.
	pub, err := sign.LoadPublic(pubPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("valid:", pub.Verify(msg, sig) == nil)
	edited := []byte(`{"release":1,"sigma":0.0001,"sig":""}`)
	fmt.Println("edited refused:", errors.Is(pub.Verify(edited, sig), sign.ErrSignature))

	// A keyed commitment: only the certifier can compute or open it.
	c := s.Commit("state-before-noise", []byte("snapshot bytes"))
	fmt.Println(len(c), s.CheckCommit("state-before-noise", []byte("snapshot bytes"), c))

	// Writing again without force is refused.
	_, _, err = s.WriteFiles(filepath.Join(dir, "certifier"), false)
	fmt.Println(errors.Is(err, sign.ErrExists))
	// Output:
	// certifier.key certifier.pub
	// valid: true
	// edited refused: true
	// 64 true
	// true
}
