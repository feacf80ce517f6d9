package serve

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestServiceEndToEnd: ingest by rows and by stream events, predict, file a
// deletion by ids and keys with a nonce of the requester's, wait for its
// receipt, verify it and its commitment, and release: the state after the
// deletion is bit for bit the replay of the deletion-edited stream, and
// predictions are the learner's own.
func TestServiceEndToEnd(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour}})
	x, y := rows(1, 60, 3)
	var events []stream.Event
	for i := range x {
		events = append(events, stream.InsertEvent(int64(i+1), x[i], y[i]))
	}
	// Rows 1..40 by rows with keys, 41..60 by stream events.
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = "user" + string(rune('A'+i%26)) + string(rune('a'+i/26)) + "@example.com"
	}
	res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[:40], "labels": y[:40], "ids": seq(1, 40), "keys": keys})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var ev []map[string]any
	for i := 40; i < 60; i++ {
		ev = append(ev, map[string]any{"op": "insert", "id": i + 1, "x": x[i], "y": y[i]})
	}
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"events": ev})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var er eventsResponse
	res.json(t, &er)
	require.Equal(t, eventsResponse{Events: 20, Head: 60, Checkpoints: 1, IDs: seq(41, 60)}, er)

	loss, err := f.hdr.Loss()
	require.NoError(t, err)
	want, err := olbfgs.Replay(f.cfg, loss, events)
	require.NoError(t, err)
	requirePredictions(t, f, want)

	// A deletion by two ids and two keys (ids 2 and 5 by key).
	nonce := make([]byte, certify.NonceSize)
	_, err = rand.Read(nonce)
	require.NoError(t, err)
	body := map[string]any{"ids": []int64{7, 50}, "keys": []string{keys[1], keys[4]}, "nonce": hex.EncodeToString(nonce), "wait": true}
	res = f.do("POST", "/v1/forget", f.tokens["forget"], body)
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	var st forgetState
	res.json(t, &st)
	require.Equal(t, "/v1/forget/"+st.Request, res.header.Get("Location"))
	require.Empty(t, st.Nonce, "the requester's nonce is not echoed")
	require.Equal(t, 4, st.Records)
	st = f.waitServed(st.Request)
	require.Equal(t, "served", st.State)
	rc, err := certify.VerifyReceipt(st.Receipt, f.key.Public())
	require.NoError(t, err)
	require.Equal(t, "exact", rc.Path)
	require.Equal(t, certify.ForgetCommitment(nonce, []int64{7, 50}, []string{keys[1], keys[4]}), rc.Commitment)
	require.Equal(t, int64(60), rc.Head)
	require.False(t, rc.NeedsNoise)

	// The state is `train` on the edited stream, bit for bit.
	want, err = olbfgs.Replay(f.cfg, loss, stream.Counterfactual(events, stream.NewIDSet(2, 5, 7, 50)))
	require.NoError(t, err)
	got, err := f.st.State()
	require.NoError(t, err)
	require.True(t, got.Equal(want), "the state after the deletion is the replay of the edited stream")
	requirePredictions(t, f, want)

	// A release of the exact state, kept and listed.
	res = f.do("POST", "/v1/releases", f.tokens["release"], map[string]any{"epsilon": 1, "delta": 1e-5})
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	var rel releaseJSON
	res.json(t, &rel)
	cert, err := certify.ParseCertificate([]byte(rel.Certificate))
	require.NoError(t, err)
	_, err = certify.Verify(cert, []byte(rel.File), f.key.Public())
	require.NoError(t, err)
	require.True(t, rel.Exact)
	res = f.do("GET", "/v1/releases", f.tokens["read"], nil)
	require.Equal(t, http.StatusOK, res.status)
	require.Contains(t, string(res.body), `"id":1`)

	// Status says it all, from the published state.
	res = f.do("GET", "/v1/status", f.tokens["read"], nil)
	require.Equal(t, http.StatusOK, res.status)
	var s statusJSON
	res.json(t, &s)
	require.Equal(t, 56, s.Store.Events)
	require.Equal(t, 4, s.Store.Forgotten)
	require.Equal(t, 1, s.Store.Releases)
	require.Zero(t, s.Queue.Queued)
}

// TestServerDrawsNonce: without a nonce the service draws one and returns it
// once; the receipt's commitment is under it.
func TestServerDrawsNonce(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	x, y := rows(2, 10, 3)
	out := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x, "labels": y})
	require.Equal(t, http.StatusOK, out.status)
	var er eventsResponse
	out.json(t, &er)
	require.Equal(t, seq(1, 10), er.IDs, "ids numbered by the service")
	res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{3}, "wait": true})
	require.Equal(t, http.StatusAccepted, res.status)
	var st forgetState
	res.json(t, &st)
	nonce, err := hex.DecodeString(st.Nonce)
	require.NoError(t, err)
	st = f.waitServed(st.Request)
	rc, err := certify.VerifyReceipt(st.Receipt, f.key.Public())
	require.NoError(t, err)
	require.Equal(t, certify.ForgetCommitment(nonce, []int64{3}, nil), rc.Commitment)
	// Assigned ids continue above every id held, forgotten ones included.
	out = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[:2], "labels": y[:2]})
	out.json(t, &er)
	require.Equal(t, []int64{11, 12}, er.IDs)
}

// TestDeadlineBatch: requests not asking to wait are served together, by
// one replay (each recorded as its own store request), before their
// deadline.
func TestDeadlineBatch(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: 1500 * time.Millisecond}})
	x, y := rows(3, 50, 3)
	f.ingest(x, y, seq(1, 50))
	var reqs []string
	for _, id := range []int64{4, 9, 30} {
		res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{id}})
		require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
		var st forgetState
		res.json(t, &st)
		reqs = append(reqs, st.Request)
	}
	seen := map[int64]bool{}
	for _, id := range reqs {
		st := f.waitServed(id)
		rc, err := certify.VerifyReceipt(st.Receipt, f.key.Public())
		require.NoError(t, err)
		deadline, _ := time.Parse(certify.ReceiptTimeLayout, rc.Deadline)
		served, _ := time.Parse(certify.ReceiptTimeLayout, rc.Served)
		require.False(t, served.After(deadline), "served %s after the deadline %s", rc.Served, rc.Deadline)
		require.Equal(t, 3, rc.Batch.Requests, "the three requests in one batch")
		require.Equal(t, 3, rc.Batch.Records)
		require.NotZero(t, rc.Batch.StoreRequest)
		require.False(t, seen[rc.Batch.StoreRequest], "each request is its own store request")
		seen[rc.Batch.StoreRequest] = true
	}
	recorded, err := f.st.Requests()
	require.NoError(t, err)
	require.Len(t, recorded, 3, "one store request per queued request")
	for _, r := range recorded {
		require.Equal(t, recorded[0].FromSeq, r.FromSeq, "one replay for the batch")
		require.Equal(t, recorded[0].EventsReplayed, r.EventsReplayed, "one replay for the batch")
	}
}

// TestRestartResumesQueue: requests acknowledged before a restart are
// served after it (here with the next batch, which a client asking to wait
// starts at once).
func TestRestartResumesQueue(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour}})
	x, y := rows(4, 30, 3)
	f.ingest(x, y, seq(1, 30))
	res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{8}})
	require.Equal(t, http.StatusAccepted, res.status)
	var st forgetState
	res.json(t, &st)
	f.ts.Close()
	require.NoError(t, f.srv.Close(t.Context()))
	var err error
	f.srv, err = New(f.st, Options{Key: f.key, ForgetWithin: time.Hour, Log: f.srv.log, TokenRefresh: 50 * time.Millisecond})
	require.NoError(t, err)
	f.ts = newTestHTTP(f.srv)
	res = f.do("GET", "/v1/status", f.tokens["read"], nil)
	var s statusJSON
	res.json(t, &s)
	require.Equal(t, 1, s.Queue.Queued, "the acknowledged request is queued after the restart")
	res = f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{9}, "wait": true})
	require.Equal(t, http.StatusAccepted, res.status)
	got := f.waitServed(st.Request)
	require.Equal(t, "served", got.State)
	rc, err := certify.VerifyReceipt(got.Receipt, f.key.Public())
	require.NoError(t, err)
	require.Equal(t, 2, rc.Batch.Requests, "served with the new request, in one batch")
}

func newTestHTTP(s *Server) *httptest.Server { return httptest.NewServer(s.Handler()) }

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// waitServed long-polls a request until it is served (at most 20 s).
func (f *fixture) waitServed(id string) forgetState {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := f.do("GET", "/v1/forget/"+id+"?wait=5", f.tokens["forget"], nil)
		require.Equal(f.t, http.StatusOK, res.status, "%s", res.body)
		var st forgetState
		res.json(f.t, &st)
		if st.State != "queued" || time.Now().After(deadline) {
			return st
		}
	}
}

// requirePredictions checks the service's predictions against the
// learner's own scores (olbfgs.Learner.Scores), bit for bit: σ(u) of the
// class "1", the label "1" when u ≥ 0.
func requirePredictions(t *testing.T, f *fixture, want *olbfgs.Learner) {
	t.Helper()
	probe, _ := rows(99, 5, 3)
	res := f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": probe})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var pr classified
	require.NoError(t, json.Unmarshal(res.body, &pr))
	require.Equal(t, []string{"-1", "1"}, pr.Classes)
	res = f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows_f64": packRows(probe), "cols": 3})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var packed classified
	require.NoError(t, json.Unmarshal(res.body, &packed))
	require.Equal(t, pr, packed, "rows_f64 predicts as rows")
	u := make([]float64, 1)
	for i, x := range probe {
		want.Scores(u, stream.Sample{V: x})
		require.Equal(t, stream.Sigmoid(u[0]), pr.Probabilities[i][1], "row %d", i)
		require.Equal(t, stream.Sigmoid(-u[0]), pr.Probabilities[i][0], "row %d", i)
		label := "-1"
		if u[0] >= 0 {
			label = "1"
		}
		require.Equal(t, label, pr.Predictions[i], "row %d", i)
	}
}

// classified is the answer of POST /v1/predict for a classifier.
type classified struct {
	Classes       []string    `json:"classes"`
	Predictions   []string    `json:"predictions"`
	Probabilities [][]float64 `json:"probabilities"`
	Head          int64       `json:"head"`
}
