package store

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/sign"
	"unlearn/stream"
)

// queueFixture is a store holding 120 keyed logistic events (ids 1..120,
// keys userKey(id)) and a certifier key.
func queueFixture(t *testing.T) (*Store, *stream.History, *sign.Secret, string) {
	t.Helper()
	h := genHistory(t, stream.KindLogistic, 3, 120, 31)
	dir := t.TempDir()
	s := createStore(t, dir, h.Header, 3, 10)
	t.Cleanup(func() { s.Close() })
	_, err := s.IngestEvents(keyedFile(h.Events), IngestOptions{BatchSize: 40})
	require.NoError(t, err)
	key, err := sign.Generate()
	require.NoError(t, err)
	return s, h, key, dir
}

func commitment(t *testing.T, ids []int64, keys []string) ([]byte, string) {
	t.Helper()
	nonce := make([]byte, certify.NonceSize)
	_, err := rand.Read(nonce)
	require.NoError(t, err)
	return nonce, certify.ForgetCommitment(nonce, ids, keys)
}

func signer(key *sign.Secret) func(*certify.Receipt) ([]byte, error) {
	return func(r *certify.Receipt) ([]byte, error) { return certify.SignReceipt(r, key) }
}

// TestServeForgetsBatch: three queued requests (by ids, by keys, and one
// overlapping the first) are served by ONE replay (ForgetBatch) whose state
// is bit-identical to training on the deletion-edited stream; each is
// recorded as its own store request and gets a signed receipt of its own
// (records, already forgotten before the batch, its store request, the
// batch, the commitment under its nonce), and the queue keeps no id
// afterwards.
func TestServeForgetsBatch(t *testing.T) {
	s, h, key, _ := queueFixture(t)
	type req struct {
		ids   []int64
		keys  []string
		nonce []byte
		q     QueuedForget
	}
	reqs := []*req{
		{ids: []int64{5, 90}},
		{keys: []string{userKey(40), userKey(41)}},
		{ids: []int64{90, 100}, keys: []string{userKey(5)}}, // 5 and 90 also in the first request
	}
	for _, r := range reqs {
		var c string
		r.nonce, c = commitment(t, r.ids, r.keys)
		var err error
		r.q, err = s.EnqueueForget(r.ids, r.keys, c, time.Hour)
		require.NoError(t, err)
		require.Equal(t, Queued, r.q.State)
		require.WithinDuration(t, r.q.Received.Add(time.Hour), r.q.Deadline, 0)
	}
	require.Equal(t, []int{2, 2, 3}, []int{reqs[0].q.Records, reqs[1].q.Records, reqs[2].q.Records})
	queued, err := s.QueuedForgets()
	require.NoError(t, err)
	require.Len(t, queued, 3)

	rep, err := s.ServeForgets(context.Background(), []string{reqs[0].q.Request, reqs[1].q.Request, reqs[2].q.Request}, ServeOptions{Sign: signer(key), Toolkit: "test"})
	require.NoError(t, err)
	require.Equal(t, PathExact, rep.Path())
	require.Len(t, rep.Forgets, 3)
	require.Equal(t, []int64{5, 90}, rep.Forgets[0].IDs)
	require.Equal(t, []int64{40, 41}, rep.Forgets[1].IDs)
	require.Equal(t, []int64{100}, rep.Forgets[2].IDs, "5 and 90 are the first request's")
	require.Equal(t, []int64{5, 90}, rep.Forgets[2].AlreadyForgotten)
	requireSameState(t, s, oracle(t, s.LearnerConfig(), s.Loss(), h.Events, stream.NewIDSet(5, 40, 41, 90, 100)), "after the batch")
	reqRecords, err := s.Requests()
	require.NoError(t, err)
	require.Len(t, reqRecords, 3, "one store request per queued request")
	for i, r := range reqRecords {
		require.Equal(t, rep.Forgets[i].Request, r.Request)
		require.Equal(t, rep.Forgets[i].IDs, r.IDs)
		require.Equal(t, reqRecords[0].EventsReplayed, r.EventsReplayed, "one replay for the batch")
		require.Equal(t, reqRecords[0].FromSeq, r.FromSeq)
	}

	require.Len(t, rep.Served, 3)
	for i, r := range reqs {
		got := rep.Served[i]
		require.Equal(t, Served, got.State)
		rc, err := certify.VerifyReceipt(got.Receipt, key.Public())
		require.NoError(t, err)
		require.Equal(t, r.q.Request, rc.Request)
		require.Equal(t, "exact", rc.Path)
		require.Equal(t, r.q.Records, rc.Records)
		require.Equal(t, 0, rc.AlreadyForgotten, "nothing was forgotten before the batch")
		require.Equal(t, certify.ReceiptBatch{StoreRequest: rep.Forgets[i].Request, Requests: 3, Records: 5}, rc.Batch)
		require.Equal(t, rep.Forgets[i].Request, got.Batch)
		require.Equal(t, certify.ForgetCommitment(r.nonce, r.ids, r.keys), rc.Commitment)
		require.NotEqual(t, certify.ForgetCommitment(r.nonce, append(r.ids, 7), r.keys), rc.Commitment)
		require.Equal(t, int64(120), rc.Head)
		stored, err := s.ForgetRequest(r.q.Request)
		require.NoError(t, err)
		require.Equal(t, got.Receipt, stored.Receipt)
	}
	queued, err = s.QueuedForgets()
	require.NoError(t, err)
	require.Empty(t, queued)
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM forget_queue WHERE ids IS NOT NULL`).Scan(&n))
	require.Zero(t, n, "no id kept in the queue once served")
	_, err = s.Check()
	require.NoError(t, err)

	// A request for records forgotten meanwhile is served as "none".
	_, c := commitment(t, []int64{5}, nil)
	q, err := s.EnqueueForget([]int64{5}, nil, c, time.Minute)
	require.NoError(t, err)
	rep, err = s.ServeForgets(context.Background(), []string{q.Request}, ServeOptions{Sign: signer(key), Forget: ForgetOptions{SkipVacuum: true}})
	require.NoError(t, err)
	require.Equal(t, PathNone, rep.Path())
	rc, err := certify.VerifyReceipt(rep.Served[0].Receipt, key.Public())
	require.NoError(t, err)
	require.Equal(t, "none", rc.Path)
	require.Equal(t, 1, rc.AlreadyForgotten)
	require.Zero(t, rc.Batch.StoreRequest)

	// Served requests cannot be served or refused again.
	_, err = s.ServeForgets(context.Background(), []string{q.Request}, ServeOptions{Sign: signer(key)})
	require.ErrorIs(t, err, ErrNotQueued)
	require.ErrorIs(t, s.RefuseForget(q.Request, "x"), ErrNotQueued)
	require.ErrorIs(t, s.RefuseForget("nope", "x"), ErrUnknownRequest)
}

// TestEnqueueForgetRefuses: unknown ids and keys, an empty request and a bad
// commitment are refused and nothing is queued; a forgotten id is accepted.
func TestEnqueueForgetRefuses(t *testing.T) {
	s, _, key, _ := queueFixture(t)
	_, c := commitment(t, nil, nil)
	for name, tc := range map[string]struct {
		ids  []int64
		keys []string
		c    string
		want error
	}{
		"unknown id":     {ids: []int64{1, 999}, c: c, want: ErrUnknownID},
		"unknown key":    {keys: []string{"nobody@example.com"}, c: c, want: ErrUnknownKey},
		"nothing":        {c: c, want: ErrOptions},
		"bad commitment": {ids: []int64{1}, c: "abc", want: ErrOptions},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.EnqueueForget(tc.ids, tc.keys, tc.c, time.Hour)
			require.ErrorIs(t, err, tc.want)
		})
	}
	queued, err := s.QueuedForgets()
	require.NoError(t, err)
	require.Empty(t, queued)

	_, err = s.Forget([]int64{3}, ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	q, err := s.EnqueueForget([]int64{3}, nil, c, time.Hour)
	require.NoError(t, err, "an id forgotten already is accepted (the receipt says so)")
	require.NoError(t, s.RefuseForget(q.Request, "test refusal"))
	got, err := s.ForgetRequest(q.Request)
	require.NoError(t, err)
	require.Equal(t, Refused, got.State)
	require.Equal(t, "test refusal", got.Reason)
	_, err = s.ServeForgets(context.Background(), []string{q.Request}, ServeOptions{Sign: signer(key)})
	require.ErrorIs(t, err, ErrNotQueued)
	_, err = s.Check()
	require.NoError(t, err)
}

// TestServeForgetsRollsBack: a receipt signer that fails, and a cancelled
// context, roll the whole batch back: the requests stay queued with their
// ids, nothing is forgotten, and a later batch serves them.
func TestServeForgetsRollsBack(t *testing.T) {
	s, h, key, _ := queueFixture(t)
	_, c := commitment(t, []int64{7}, nil)
	q, err := s.EnqueueForget([]int64{7, 8}, nil, c, time.Hour)
	require.NoError(t, err)
	before, err := s.State()
	require.NoError(t, err)

	boom := errors.New("signer down")
	_, err = s.ServeForgets(context.Background(), []string{q.Request}, ServeOptions{Sign: func(*certify.Receipt) ([]byte, error) { return nil, boom }})
	require.ErrorIs(t, err, boom)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.ServeForgets(ctx, []string{q.Request}, ServeOptions{Sign: signer(key)})
	require.Error(t, err)

	requireSameState(t, s, before, "after the failed batches")
	got, err := s.ForgetRequest(q.Request)
	require.NoError(t, err)
	require.Equal(t, Queued, got.State)
	st, err := s.Status()
	require.NoError(t, err)
	require.Zero(t, st.Requests)
	_, err = s.Check()
	require.NoError(t, err)

	_, err = s.ServeForgets(context.Background(), []string{q.Request}, ServeOptions{Sign: signer(key)})
	require.NoError(t, err)
	requireSameState(t, s, oracle(t, s.LearnerConfig(), s.Loss(), h.Events, stream.NewIDSet(7, 8)), "served later")
}

// TestQueueErasure: the queue holds a request's ids (and never its keys)
// only while it is queued: after the batch that serves it no file of the
// store directory holds the request's list, nor the keys.
func TestQueueErasure(t *testing.T) {
	s, _, key, dir := queueFixture(t)
	keys := []string{userKey(61), userKey(77)}
	_, c := commitment(t, []int64{13, 29}, keys)
	// Id 14, forgotten before, makes the queued list differ from the
	// store's own record of the request (forget_requests.ids: the
	// tombstones' request, which lists only the ids it forgot).
	_, err := s.Forget([]int64{14}, ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	q, err := s.EnqueueForget([]int64{13, 14, 29}, keys, c, time.Hour)
	require.NoError(t, err)
	q2, err := s.EnqueueForget([]int64{30}, nil, c, time.Hour)
	require.NoError(t, err)
	pattern := map[string][]byte{"ids": []byte("[13,14,29,61,77]")}
	require.NotEmpty(t, scanDir(t, dir, pattern), "the queued ids are in the store (the search cannot fail)")
	_, err = s.ServeForgets(context.Background(), []string{q.Request, q2.Request}, ServeOptions{Sign: signer(key)})
	require.NoError(t, err)
	pattern[keys[0]], pattern[keys[1]] = []byte(keys[0]), []byte(keys[1])
	require.Empty(t, scanDir(t, dir, pattern), "ids or keys of a served request left in the store")
}

// TestTokens: a token's text is returned once and only its SHA-256 is
// stored; revocation is recorded; a Reader sees both without the Store's
// lock.
func TestTokens(t *testing.T) {
	s, _, _, dir := queueFixture(t)
	text, tok, err := s.CreateToken("ci", []string{"ingest", "read"})
	require.NoError(t, err)
	require.Regexp(t, `^unl_[A-Za-z0-9_-]{43}$`, text)
	require.Equal(t, HashToken(text), tok.Hash)
	_, _, err = s.CreateToken("x", []string{"Ingest"})
	require.ErrorIs(t, err, ErrOptions)
	_, _, err = s.CreateToken("x", nil)
	require.ErrorIs(t, err, ErrOptions)
	require.Empty(t, scanDir(t, dir, map[string][]byte{"token": []byte(text[4:])}), "the token's text is not stored")

	r, err := OpenReader(dir)
	require.NoError(t, err)
	defer r.Close()
	all, err := r.Tokens()
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, tok.ID, all[0].ID)
	require.Equal(t, []string{"ingest", "read"}, all[0].Scopes)
	require.True(t, all[0].Revoked.IsZero())

	got, err := s.RevokeToken(tok.ID)
	require.NoError(t, err)
	require.False(t, got.Revoked.IsZero())
	all, err = r.Tokens()
	require.NoError(t, err)
	require.Equal(t, got.Revoked, all[0].Revoked)
	_, err = s.RevokeToken(99)
	require.ErrorIs(t, err, ErrUnknownToken)
	_, err = OpenReader(t.TempDir())
	require.ErrorIs(t, err, ErrNotStore)
}

// TestNextID: above every id ingested or forgotten.
func TestNextID(t *testing.T) {
	s, _, _, _ := queueFixture(t)
	n, err := s.NextID()
	require.NoError(t, err)
	require.Equal(t, int64(121), n)
	_, err = s.Forget([]int64{120}, ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	n, err = s.NextID()
	require.NoError(t, err)
	require.Equal(t, int64(121), n, "a forgotten id is never given again")
}
