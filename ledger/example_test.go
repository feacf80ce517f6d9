package ledger_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/sign"
)

// A certifier keeps its budget in a ledger: each certified release is
// charged once; a charge over the budget is refused and changes nothing;
// anyone with the public key verifies the whole history.
func Example() {
	dir, err := os.MkdirTemp("", "ledger-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	key, err := sign.Generate()
	if err != nil {
		fmt.Println(err)
		return
	}
	path := filepath.Join(dir, "budget.ledger")

	l, err := ledger.Create(path, certify.Budget{Epsilon: 1, Delta: 1e-5}, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A release with sensitivity α = 1 and noise σ = 50 (in practice:
	// ledger.ReleaseOf(certificate)).
	if _, err := l.Append(ledger.Release{Certificate: "3f9a…", Alpha: 1, Sigma: 50, Beta: 1e-9}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = l.Append(ledger.Release{Certificate: "77c2…", Alpha: 1, Sigma: 1})
	fmt.Println("over budget refused:", errors.Is(err, ledger.ErrBudget))
	_, err = l.Append(ledger.Release{Certificate: "3f9a…", Alpha: 1, Sigma: 50})
	fmt.Println("second charge refused:", errors.Is(err, ledger.ErrDuplicate))

	// A verifier needs only the public key.
	v, err := ledger.Load(path, key.Public())
	if err != nil {
		fmt.Println(err)
		return
	}
	tot := v.Totals()
	fmt.Printf("releases %d, ε spent below 1: %v, head at entry %d\n", tot.Releases, tot.Epsilon < 1, v.Head().Seq)

	// Editing the file is detected.
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 1
	_ = os.WriteFile(path, data, 0o644)
	_, err = ledger.Load(path, key.Public())
	var le *ledger.Error
	fmt.Println("edited file refused:", errors.As(err, &le))
	// Output:
	// over budget refused: true
	// second charge refused: true
	// releases 1, ε spent below 1: true, head at entry 1
	// edited file refused: true
}
