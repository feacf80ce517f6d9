package serve

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTokenCreatedWhileServing: a token created while the service runs is
// accepted at once, without waiting for the periodic refresh (an hour
// here): an unknown token makes the service read the tokens again.
func TestTokenCreatedWhileServing(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{TokenRefresh: time.Hour}})
	tok, _, err := f.st.CreateToken("later", []string{"read"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, f.do("GET", "/v1/status", tok, nil).status)
	// An unknown one is still refused.
	require.Equal(t, http.StatusUnauthorized, f.do("GET", "/v1/status", "not-a-token", nil).status)
}

// TestUnknownTokenFloodReloadsRarely: a flood of unknown tokens makes the
// service read the tokens at most once every minTokenReload, and every one
// is refused.
func TestUnknownTokenFloodReloadsRarely(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{TokenRefresh: time.Hour}})
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if st := f.do("GET", "/v1/status", "bad-token", nil).status; st != http.StatusUnauthorized {
					t.Errorf("an unknown token answered %d", st)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	f.srv.tokenReloadMu.Lock()
	n := f.srv.tokenReloads
	f.srv.tokenReloadMu.Unlock()
	require.LessOrEqual(t, n, int(elapsed/minTokenReload)+1, "200 unknown tokens in %v reloaded the tokens %d times", elapsed, n)
	require.GreaterOrEqual(t, n, 1)
}
