package serve

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQuotas, as an attacker with tokens would try them: a forgotten id
// filed again is not queued (no batch, no VACUUM, no receipt bought); ids
// and keys per request, key length, rows per ingest and prediction are
// capped (413); the queue and a token's share of it are capped (429 with
// Retry-After); nothing refused is written.
func TestQuotas(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour, MaxRows: 5, MaxQueued: 4, MaxQueuedPerToken: 2}})
	x, y := rows(1, 5, 3)
	f.ingest(x, y, seq(1, 5))
	f.forgetNow(1)

	res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{1}, "wait": true})
	require.Equal(t, http.StatusUnprocessableEntity, res.status, "a forgotten id is not queued again: %s", res.body)
	require.Equal(t, 1, f.srv.queue.stats().Served, "no second batch ran")

	tooMany := func(res response, field string) {
		t.Helper()
		require.Equal(t, http.StatusRequestEntityTooLarge, res.status, "%s", res.body)
		p := res.problem(t)
		require.Equal(t, ProblemTypePrefix+"too-many-rows", p.Type)
		require.Equal(t, field, p.Field)
	}
	tooMany(f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{2, 3, 4}, "keys": []string{"a", "b", "c"}}), "ids")
	x6, y6 := rows(2, 6, 3)
	tooMany(f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x6, "labels": y6}), "rows")
	tooMany(f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": x6}), "rows")

	long := strings.Repeat("k", MaxKeyBytes+1)
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x6[:1], "labels": y6[:1], "keys": []string{long}})
	require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s", res.body)
	require.Equal(t, "keys[0]", res.problem(t).Field)
	res = f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"keys": []string{long}})
	require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s", res.body)
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x6[:1], "labels": y6[:1], "keys": []string{long[:MaxKeyBytes]}})
	require.Equal(t, http.StatusOK, res.status, "a key of %d bytes: %s", MaxKeyBytes, res.body)

	// A token's share of the queue, then the queue.
	for _, id := range []int64{2, 3} {
		res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{id}})
		require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	}
	res = f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{4}})
	require.Equal(t, http.StatusTooManyRequests, res.status, "%s", res.body)
	require.Equal(t, ProblemTypePrefix+"rate-limited", res.problem(t).Type)
	require.NotEmpty(t, res.header.Get("Retry-After"))
	for _, id := range []int64{4, 5} {
		res := f.do("POST", "/v1/forget", f.tokens["all"], map[string]any{"ids": []int64{id}})
		require.Equal(t, http.StatusAccepted, res.status, "another token: %s", res.body)
	}
	res = f.do("POST", "/v1/forget", f.tokens["all"], map[string]any{"ids": []int64{6}})
	require.Equal(t, http.StatusTooManyRequests, res.status, "%s", res.body)
	require.Equal(t, ProblemTypePrefix+"queue-full", res.problem(t).Type)
	require.NotEmpty(t, res.header.Get("Retry-After"))
	require.Equal(t, 4, f.srv.queue.stats().Queued, "nothing refused was queued")
}

// TestPredictConcurrencyBounded: with every prediction slot taken, a
// prediction is answered 429 with Retry-After rather than queued without
// bound.
func TestPredictConcurrencyBounded(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{PredictSlots: 1}})
	x, y := rows(1, 5, 3)
	f.ingest(x, y, seq(1, 5))
	f.srv.predictSlots <- struct{}{} // a prediction that never ends
	res := f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": x})
	require.Equal(t, http.StatusTooManyRequests, res.status, "%s", res.body)
	require.Equal(t, "1", res.header.Get("Retry-After"))
	<-f.srv.predictSlots
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": x})
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		}()
	}
	wg.Wait()
}

// TestNoMembershipOracle: the answers about records name no other record,
// tombstone or request: a forgotten id and one never ingested get one
// answer, an ingest conflict names neither the id's owner nor the key's.
func TestNoMembershipOracle(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour}})
	x, y := rows(1, 8, 3)
	res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[:6], "labels": y[:6], "ids": seq(1, 6), "keys": keysFor(6)})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	f.forgetNow(3)

	forgotten := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{3}})
	never := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{99}})
	require.Equal(t, never.status, forgotten.status)
	require.Equal(t, never.problem(t).Detail, forgotten.problem(t).Detail, "one answer for forgotten and never ingested")
	for _, r := range []response{forgotten, never} {
		require.NotRegexp(t, `request|[0-9]`, r.problem(t).Detail)
	}

	// [probe key held by id 5, id 3 forgotten]: the answer names neither id 5 nor a request.
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[6:8], "labels": y[6:8], "ids": []int64{7, 3}, "keys": []string{keysFor(6)[4], "fresh"}})
	require.Equal(t, http.StatusConflict, res.status, "%s", res.body)
	d := res.problem(t).Detail
	require.NotContains(t, d, "id 5")
	require.NotContains(t, d, "request")
	require.NotContains(t, d, keysFor(6)[4])
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[6:7], "labels": y[6:7], "ids": []int64{3}})
	require.Equal(t, http.StatusConflict, res.status, "%s", res.body)
	require.Equal(t, "ids[0]: this id cannot be ingested: it is in use or was forgotten; nothing of the batch was written", res.problem(t).Detail)
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[6:7], "labels": y[6:7], "ids": []int64{2}})
	require.Equal(t, "ids[0]: this id cannot be ingested: it is in use or was forgotten; nothing of the batch was written", res.problem(t).Detail, "held and forgotten alike")
}

// TestRequestBoundToSecret: GET /v1/forget/{id} answers only the caller
// holding the secret returned at filing; another forget-scope token, or
// the filer without the secret, gets the answer of an unknown request.
func TestRequestBoundToSecret(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour}})
	x, y := rows(1, 3, 3)
	f.ingest(x, y, seq(1, 3))
	res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{1}})
	require.Equal(t, http.StatusAccepted, res.status)
	var st forgetState
	res.json(t, &st)
	require.Len(t, st.Secret, 64)

	get := func(id, token, secret string) response {
		req, err := http.NewRequest("GET", f.ts.URL+"/v1/forget/"+id, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		if secret != "" {
			req.Header.Set(RequestSecretHeader, secret)
		}
		r, err := f.ts.Client().Do(req)
		require.NoError(t, err)
		defer r.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fscan(r.Body, &b)
		return response{status: r.StatusCode}
	}
	require.Equal(t, http.StatusOK, get(st.Request, f.tokens["forget"], st.Secret).status)
	require.Equal(t, http.StatusOK, get(st.Request, f.tokens["all"], st.Secret).status, "the secret, not the token, is the capability")
	unknown := get("0123456789abcdef0123456789abcdef", f.tokens["all"], st.Secret).status
	require.Equal(t, http.StatusNotFound, unknown)
	require.Equal(t, unknown, get(st.Request, f.tokens["all"], "").status, "no secret")
	require.Equal(t, unknown, get(st.Request, f.tokens["all"], strings.Repeat("0", 64)).status, "a wrong secret")
	other := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{2}})
	var st2 forgetState
	other.json(t, &st2)
	require.Equal(t, unknown, get(st.Request, f.tokens["forget"], st2.Secret).status, "another request's secret")
}

// TestForgottenKeyIngestedAgain holds the documented rule (docs/service.md,
// "Keys after a deletion"): the store keeps nothing linkable to a
// forgotten key, so the key may be ingested again as a new record with a
// new id, while a forgotten id is refused.
func TestForgottenKeyIngestedAgain(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	x, y := rows(1, 3, 3)
	res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[:1], "labels": y[:1], "keys": []string{"ann@example.com"}})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var first eventsResponse
	res.json(t, &first)
	res = f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"keys": []string{"ann@example.com"}, "wait": true})
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	var st forgetState
	res.json(t, &st)
	f.waitServed(st.Request)

	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[1:2], "labels": y[1:2], "keys": []string{"ann@example.com"}})
	require.Equal(t, http.StatusOK, res.status, "a forgotten key comes back as a new record: %s", res.body)
	var again eventsResponse
	res.json(t, &again)
	require.NotEqual(t, first.IDs[0], again.IDs[0])
	res = f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[2:3], "labels": y[2:3], "ids": first.IDs})
	require.Equal(t, http.StatusConflict, res.status, "a forgotten id does not: %s", res.body)
}
