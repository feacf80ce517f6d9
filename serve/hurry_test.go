package serve

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWaitingServesAQueuedRequestEarly: a client that waits on a queued
// request (GET /v1/forget/{id}?wait=S) gets it served early, as a filing
// with wait does — so the advice after a restart ("wait again") holds even
// though the wish to be served now was not kept across it. Without the
// waiter the request would wait for its deadline, an hour away.
func TestWaitingServesAQueuedRequestEarly(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour}})
	x, y := rows(1, 3, 3)
	f.ingest(x, y, seq(1, 3))
	res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{2}})
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	var st forgetState
	res.json(t, &st)

	res = f.do("GET", "/v1/forget/"+st.Request, f.tokens["forget"], nil)
	var now forgetState
	res.json(t, &now)
	require.Equal(t, "queued", now.State, "no one waits: the request waits for its deadline")

	start := time.Now()
	res = f.do("GET", "/v1/forget/"+st.Request+"?wait=20", f.tokens["forget"], nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var got forgetState
	res.json(t, &got)
	require.NotEqual(t, "queued", got.State, "a waiting client has the queue served early")
	require.Less(t, time.Since(start), 15*time.Second)
}
