package certify_test

import (
	"fmt"

	"unlearn/certify"
)

// An accountant composes repeated releases exactly (Gaussian differential
// privacy) and refuses the one that would exceed the budget. Each release
// here is 0.2-GDP (α = 0.1, σ = 0.5); zCDP would have stopped after four.
func ExampleAccountant() {
	acct, err := certify.NewAccountant(certify.Budget{Epsilon: 2, Delta: 1e-5})
	if err != nil {
		panic(err)
	}
	for i := 1; ; i++ {
		ch, err := certify.ChargeFor(fmt.Sprint("release ", i), 0.1, 0.5, 0)
		if err != nil {
			panic(err)
		}
		if exceed, _, _ := acct.WouldExceed(ch); exceed {
			fmt.Printf("release %d would exceed the budget\n", i)
			break
		}
		s, _ := acct.Spend(ch)
		fmt.Printf("after %d: μ = %.3f, ε = %.3f (zCDP ε = %.3f)\n", s.Releases, s.Mu, s.Epsilon, s.ZCDPEpsilon)
	}
	// Output:
	// after 1: μ = 0.200, ε = 0.726 (zCDP ε = 0.980)
	// after 2: μ = 0.283, ε = 1.061 (zCDP ε = 1.397)
	// after 3: μ = 0.346, ε = 1.326 (zCDP ε = 1.722)
	// after 4: μ = 0.400, ε = 1.555 (zCDP ε = 1.999)
	// after 5: μ = 0.447, ε = 1.760 (zCDP ε = 2.246)
	// after 6: μ = 0.490, ε = 1.948 (zCDP ε = 2.471)
	// release 7 would exceed the budget
}
