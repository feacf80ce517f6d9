package serve

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/store"
	"unlearn/stream"
)

// approxOptions serves a batch whose exact replay exceeds 5 events by the
// noop intervention, kept noised at (ε, δ) = (1, 10⁻⁵) with the SEEDED
// sampler (reproducible; never for deployment).
func approxOptions() Options {
	return Options{ForgetWithin: time.Minute, Forget: store.ForgetOptions{MaxReplay: 5, Intervention: "noop",
		Noise: certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(23, noise.SamplerOptions{})}}}
}

// rowEncodings are the byte strings that would betray a row: each
// feature's float64 little-endian bytes and shortest decimal text.
func rowEncodings(x []float64) map[string][]byte {
	out := map[string][]byte{}
	for i, v := range x {
		le := binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
		out["x["+strconv.Itoa(i)+"] LE"] = le
		out["x["+strconv.Itoa(i)+"] text"] = strconv.AppendFloat(nil, v, 'g', -1, 64)
	}
	return out
}

// foundIn returns the encodings found in any file of dir.
func foundIn(t *testing.T, dir string, enc map[string][]byte) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		for name, pat := range enc {
			if bytes.Contains(b, pat) {
				found = append(found, e.Name()+": "+name)
			}
		}
	}
	return found
}

// checkpointsFrom lists the checkpoints at or after seq as "seq/exact/origin",
// read from the database file on a read-only connection of its own.
func checkpointsFrom(t *testing.T, dir string, seq int64) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.FileName)+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT seq, exact, origin FROM checkpoints WHERE seq >= ? ORDER BY seq`, seq)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s, e int64
		var o string
		require.NoError(t, rows.Scan(&s, &e, &o))
		out = append(out, strconv.FormatInt(s, 10)+"/"+strconv.FormatInt(e, 10)+"/"+o)
	}
	require.NoError(t, rows.Err())
	return out
}

// waitResolution polls GET /v1/forget/{id} until its resolution is want.
func (f *fixture) waitResolution(id, want string) forgetState {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := f.do("GET", "/v1/forget/"+id, f.tokens["forget"], nil)
		require.Equal(f.t, http.StatusOK, res.status, "%s", res.body)
		var st forgetState
		res.json(f.t, &st)
		if st.Resolution == want || time.Now().After(deadline) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// forgetNow files a deletion request that asks to be served at once and
// returns its state once served.
func (f *fixture) forgetNow(ids ...int64) forgetState {
	f.t.Helper()
	res := f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": ids, "wait": true})
	require.Equal(f.t, http.StatusAccepted, res.status, "%s", res.body)
	var st forgetState
	res.json(f.t, &st)
	return f.waitServed(st.Request)
}

// TestApproximateDeletionResolvedByPolicy, through the HTTP API: a
// deletion beyond the replay cap is served on the approximate path. Its
// receipt says exactly what is pending; the store keeps only the noised
// state (the kept, charged release's w, bit for bit), no checkpoint at or
// after the erased insert but the noised one, and no byte of the row. The
// service then applies the store's resolution policy on its own once 30
// more events are ingested: GET /v1/forget/{id} reports the resolution,
// the state is `train` on the edited stream bit for bit, every stored
// checkpoint and the state check by replay of the log (which lacks the
// row), and no file of the store holds any encoding of the row.
func TestApproximateDeletionResolvedByPolicy(t *testing.T) {
	f := newFixture(t, fixtureOptions{k: 10, opt: approxOptions(), certifiable: true,
		policy: store.ResolvePolicy{AfterEvents: 30}, budget: &certify.Budget{Epsilon: 10, Delta: 1e-3}})
	x, y := rows(7, 90, 3)
	f.ingest(x[:60], y[:60], seq(1, 60))
	enc := rowEncodings(x[2]) // id 3
	require.NotEmpty(t, foundIn(t, f.dir, enc), "control: the row is in the store before the deletion")

	st := f.forgetNow(3)
	require.Equal(t, "served", st.State)
	require.Equal(t, "approximate", st.Path)
	require.Equal(t, "pending", st.Resolution)
	rc, err := certify.VerifyReceipt(st.Receipt, f.key.Public())
	require.NoError(t, err)
	require.Equal(t, "approximate", rc.Path)
	require.True(t, rc.NeedsNoise)
	for _, want := range []string{"noised state published (release 1", "exact replay pending",
		"once 30 more events are ingested (log position 90)", "no un-noised state or checkpoint"} {
		require.Contains(t, rc.Pending, want)
	}

	var status statusJSON
	f.do("GET", "/v1/status", f.tokens["read"], nil).json(t, &status)
	require.True(t, status.Store.NeedsNoise)
	require.Equal(t, 1, status.Store.Pending)
	require.Equal(t, 1, status.Budget.Releases, "the noised state's release is charged to the ledger")
	require.Equal(t, "after 30 events", status.Resolution.Policy)

	res := f.do("GET", "/v1/releases/1", f.tokens["read"], nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var kept releaseJSON
	res.json(t, &kept)
	require.False(t, kept.Exact)
	rel, err := certify.ParseRelease([]byte(kept.File))
	require.NoError(t, err)
	cur, err := f.st.State()
	require.NoError(t, err)
	kw := slices.Clone(rel.W) // the release's w projected onto the learner's ball: a function of the release alone
	if n := floats.Norm(kw, 2); n > f.cfg.Radius {
		floats.Scale(f.cfg.Radius/n, kw)
	}
	require.Equal(t, kw, cur.W(), "the store keeps only the noised state it published (projected)")
	require.Zero(t, cur.Memory().Len(), "and no curvature pair of the un-noised trajectory")
	require.Equal(t, []string{"60/0/intervention"}, checkpointsFrom(t, f.dir, 3),
		"no checkpoint at or after the erased insert but the noised one")
	require.Empty(t, foundIn(t, f.dir, enc), "no byte of the row stays")

	f.ingest(x[60:89], y[60:89], seq(61, 89))
	time.Sleep(50 * time.Millisecond)
	got := f.do("GET", "/v1/forget/"+st.Request, f.tokens["forget"], nil)
	var mid forgetState
	got.json(t, &mid)
	require.Equal(t, "pending", mid.Resolution, "29 events: not due yet")
	f.ingest(x[89:], y[89:], seq(90, 90))
	done := f.waitResolution(st.Request, "resolved")
	require.Equal(t, "resolved", done.Resolution)
	require.NotZero(t, done.ResolvedBy)
	require.NotEmpty(t, done.Resolved)
	require.Equal(t, st.Receipt, done.Receipt, "the signed receipt is unchanged")
	require.Eventually(t, func() bool {
		var out predictResponse
		f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": x[:1]}).json(t, &out)
		return !out.Noised && out.PendingRequests == nil
	}, 5*time.Second, 10*time.Millisecond, "resolved: predictions are the exact model's, no longer flagged noised")

	loss, err := f.hdr.Loss()
	require.NoError(t, err)
	var events []stream.Event
	for i := range x {
		events = append(events, stream.InsertEvent(int64(i+1), x[i], y[i]))
	}
	want, err := olbfgs.Replay(f.cfg, loss, stream.Counterfactual(events, stream.NewIDSet(3)))
	require.NoError(t, err)
	cur, err = f.st.State()
	require.NoError(t, err)
	require.True(t, cur.Equal(want), "resolved: the state is train on the edited stream, bit for bit")
	_, err = f.st.Check()
	require.NoError(t, err, "every stored checkpoint and the state are the replay of the log without the row")
	for _, c := range checkpointsFrom(t, f.dir, 0) {
		require.Contains(t, c, "/1/", "every checkpoint exact after the resolution: %s", c)
	}
	require.Empty(t, foundIn(t, f.dir, enc))
	f.do("GET", "/v1/status", f.tokens["read"], nil).json(t, &status)
	require.False(t, status.Store.NeedsNoise)
	require.Zero(t, status.Store.Pending)
	require.Equal(t, 1, status.Resolution.Resolved)
	m := f.do("GET", "/metrics", f.tokens["read"], nil)
	require.Contains(t, string(m.body), "unlearn_resolutions_total 1")
}

// TestResolveOnDeadline: with a policy deadline and no ingest after the
// deletion, the service resolves at the deadline on its own (the periodic
// check is an hour away).
func TestResolveOnDeadline(t *testing.T) {
	o := approxOptions()
	o.ResolveCheck = time.Hour
	f := newFixture(t, fixtureOptions{k: 10, opt: o, certifiable: true,
		policy: store.ResolvePolicy{Within: 300 * time.Millisecond}, budget: &certify.Budget{Epsilon: 10, Delta: 1e-3}})
	x, y := rows(8, 40, 3)
	f.ingest(x, y, seq(1, 40))
	st := f.forgetNow(2)
	require.Equal(t, "approximate", st.Path)
	done := f.waitResolution(st.Request, "resolved")
	require.Equal(t, "resolved", done.Resolution, "resolved by the policy's deadline")
	cur, err := f.st.State()
	require.NoError(t, err)
	loss, err := f.hdr.Loss()
	require.NoError(t, err)
	var events []stream.Event
	for i := range x {
		events = append(events, stream.InsertEvent(int64(i+1), x[i], y[i]))
	}
	want, err := olbfgs.Replay(f.cfg, loss, stream.Counterfactual(events, stream.NewIDSet(2)))
	require.NoError(t, err)
	require.True(t, cur.Equal(want))
}

// TestApproximateBudgetRefusedServedExactly: when the ledger cannot pay for
// the approximate path's release, nothing is charged or kept and the batch
// is served exactly instead: the request is performed, never half.
func TestApproximateBudgetRefusedServedExactly(t *testing.T) {
	f := newFixture(t, fixtureOptions{k: 10, opt: approxOptions(), certifiable: true,
		budget: &certify.Budget{Epsilon: 0.5, Delta: 1e-3}})
	x, y := rows(9, 40, 3)
	f.ingest(x, y, seq(1, 40))
	st := f.forgetNow(2)
	require.Equal(t, "served", st.State)
	require.Equal(t, "exact", st.Path)
	require.Empty(t, st.Resolution)
	rc, err := certify.VerifyReceipt(st.Receipt, f.key.Public())
	require.NoError(t, err)
	require.Equal(t, "exact", rc.Path)
	require.Empty(t, rc.Pending)
	var status statusJSON
	f.do("GET", "/v1/status", f.tokens["read"], nil).json(t, &status)
	require.Zero(t, status.Budget.Releases, "nothing charged")
	require.Zero(t, status.Store.Releases, "nothing kept")
	require.False(t, status.Store.NeedsNoise)
}

// TestNewRefusesApproximateWithout: the approximate path needs the noise
// of its release, a certifiable learner and the store's ledger, and the
// service's own OnRelease; New refuses each missing piece at start.
func TestNewRefusesApproximateWithout(t *testing.T) {
	for _, c := range []struct {
		name        string
		certifiable bool
		budget      bool
		edit        func(*Options)
		want        string
	}{
		{"no ledger", true, false, nil, "budget ledger"},
		{"no radius", false, true, nil, "no radius"},
		{"no epsilon", true, true, func(o *Options) { o.Forget.Noise.Epsilon = 0 }, "Epsilon"},
		{"a caller's OnRelease", true, true, func(o *Options) { o.Forget.OnRelease = func(*store.Released) error { return nil } }, "OnRelease"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := olbfgs.DefaultConfig(3)
			if c.certifiable {
				cfg.Radius, cfg.SampleBound = 100, 1e4
			}
			st, err := store.Create(dir, store.Config{Header: stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 3, Lambda: 0.05}, Learner: cfg, CheckpointEvery: 10})
			require.NoError(t, err)
			defer st.Close()
			o := approxOptions()
			key, err := sign.Generate()
			require.NoError(t, err)
			o.Key = key
			if c.budget {
				_, err := ledger.Create(filepath.Join(dir, LedgerFile), certify.Budget{Epsilon: 10, Delta: 1e-3}, key)
				require.NoError(t, err)
			}
			if c.edit != nil {
				c.edit(&o)
			}
			_, err = New(st, o)
			require.ErrorContains(t, err, c.want)
		})
	}
}
