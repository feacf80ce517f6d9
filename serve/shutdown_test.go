package serve

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShutdownEndsLongPoll: a shutdown (SIGTERM in the command: Serve's
// context done) while a client long-polls a queued deletion request ends
// the poll at once with 503 shutting-down, instead of holding the shutdown
// for the poll's wait; the request stays queued, and the service's last
// log line says that it stopped and what stayed queued.
func TestShutdownEndsLongPoll(t *testing.T) {
	logs := &syncBuffer{}
	// A waiting client has the queue served early, but at most one early
	// batch every UrgentEvery: after the first (forgetNow), the polled
	// request stays queued for the hour.
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour, LongPoll: time.Hour, UrgentEvery: time.Hour,
		Log: slog.New(slog.NewTextHandler(logs, nil))}})
	x, y := rows(1, 5, 3)
	f.ingest(x, y, nil)
	f.forgetNow(1)
	res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{2}})
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	var st forgetState
	res.json(t, &st)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, l, HTTPOptions{ShutdownGrace: time.Minute}) }()

	type answer struct {
		status int
		body   []byte
	}
	polled := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("GET", "http://"+l.Addr().String()+"/v1/forget/"+st.Request+"?wait=3600", nil)
		req.Header.Set("Authorization", "Bearer "+f.tokens["forget"])
		req.Header.Set(RequestSecretHeader, f.srv.requestSecret(st.Request))
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			polled <- answer{body: []byte(err.Error())}
			return
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		polled <- answer{r.StatusCode, b}
	}()
	time.Sleep(300 * time.Millisecond) // the poll is waiting
	start := time.Now()
	cancel()
	var a answer
	select {
	case a = <-polled:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll held the shutdown")
	}
	require.Equal(t, http.StatusServiceUnavailable, a.status, "%s", a.body)
	var p Problem
	require.NoError(t, json.Unmarshal(a.body, &p))
	require.Equal(t, ProblemTypePrefix+"shutting-down", p.Type)
	require.NoError(t, <-done)
	require.Less(t, time.Since(start), 10*time.Second)

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	last := lines[len(lines)-1]
	require.Contains(t, last, "stopped")
	require.Contains(t, last, "queued=1")
	q, ok, _ := f.srv.queue.lookup(st.Request)
	require.True(t, ok)
	require.Equal(t, "queued", string(q.State))
}
