package ledger

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
)

// Two writers on one ledger file (two Ledger values, as two processes
// would have) appending at once never lose a charge: every append that
// returned without error is in the file, and the others were refused
// (ErrChanged), not silently dropped (adversarial review, ADV-10).
func TestConcurrentWritersLoseNoCharge(t *testing.T) {
	key := newKey(t)
	path := filepath.Join(t.TempDir(), "budget.ledger")
	l, err := Create(path, certify.Budget{Epsilon: 1000, Delta: 1e-5}, key)
	require.NoError(t, err)
	_ = l
	const writers, each = 2, 30
	var mu sync.Mutex
	accepted := 0
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				h, err := Open(path, key)
				if err != nil {
					continue
				}
				if _, err := h.Append(rel(1000*w + i)); err == nil {
					mu.Lock()
					accepted++
					mu.Unlock()
				} else {
					require.ErrorIs(t, err, ErrChanged)
				}
			}
		}()
	}
	wg.Wait()
	final, err := Load(path, key.Public())
	require.NoError(t, err)
	require.Len(t, final.Entries(), accepted, "an accepted charge is missing from the ledger")
	require.Positive(t, accepted)
}
