package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/store"
	"unlearn/stream"
)

// fixture is a service over a fresh logistic store, with a token per scope
// and one with every scope.
// tb is what the fixture needs of a test: *testing.T, *testing.F and
// *rapid.T have it.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

type fixture struct {
	t      tb // the running test (a fuzz target sets its own)
	owner  tb // the test that made the fixture (cleanup)
	dir    string
	st     *store.Store
	srv    *Server
	ts     *httptest.Server
	key    *sign.Secret
	tokens map[string]string // scope (or "all") → token
	cfg    olbfgs.Config
	hdr    stream.Header
}

type fixtureOptions struct {
	d, tau, k int
	opt       Options
	// certifiable gives the learner a radius and sample bound (the
	// approximate path needs them); policy is the store's resolution
	// policy; budget, if not nil, creates the store's ledger with it.
	certifiable bool
	policy      store.ResolvePolicy
	budget      *certify.Budget
	// hdr, if set, is the store's header (d is then its d); learner edits
	// the learner's configuration.
	hdr     *stream.Header
	learner func(*olbfgs.Config)
}

// newFixture makes a fixture in a temporary folder, closed when the test
// ends.
func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	f := newFixtureIn(t, t.TempDir(), fo)
	t.Cleanup(f.close)
	return f
}

// newFixtureIn makes a fixture in dir; the caller closes it.
func newFixtureIn(t tb, dir string, fo fixtureOptions) *fixture {
	t.Helper()
	if fo.d == 0 {
		fo.d = 3
	}
	if fo.tau == 0 {
		fo.tau = 3
	}
	if fo.k == 0 {
		fo.k = 20
	}
	f := &fixture{t: t, owner: t, dir: dir, tokens: map[string]string{}}
	f.hdr = stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: fo.d, Lambda: 0.05}
	if fo.hdr != nil {
		f.hdr = *fo.hdr
	}
	f.cfg = olbfgs.DefaultConfig(f.hdr.D)
	f.cfg.Memory = fo.tau
	if fo.certifiable {
		f.cfg.Radius, f.cfg.SampleBound = 100, 1e4
	}
	if f.hdr.Kind == stream.KindMultinomial {
		f.cfg.Outputs = f.hdr.K
	}
	if fo.learner != nil {
		fo.learner(&f.cfg)
	}
	var err error
	f.st, err = store.Create(f.dir, store.Config{Header: f.hdr, Learner: f.cfg, CheckpointEvery: fo.k, Resolve: fo.policy})
	require.NoError(t, err)
	f.key, err = sign.Generate()
	require.NoError(t, err)
	if fo.budget != nil {
		_, err := ledger.Create(filepath.Join(f.dir, LedgerFile), *fo.budget, f.key)
		require.NoError(t, err)
	}
	for _, sc := range append(Scopes(), "all") {
		scopes := []string{string(sc)}
		if sc == "all" {
			scopes, _ = ParseScopes("all")
		}
		tok, _, err := f.st.CreateToken("test-"+string(sc), scopes)
		require.NoError(t, err)
		f.tokens[string(sc)] = tok
	}
	o := fo.opt
	o.Key = f.key
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.TokenRefresh == 0 {
		o.TokenRefresh = 50 * time.Millisecond
	}
	o.Toolkit = "unlearn test"
	f.srv, err = New(f.st, o)
	require.NoError(t, err)
	f.ts = httptest.NewServer(f.srv.Handler())
	return f
}

func (f *fixture) close() {
	f.ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(f.owner, f.srv.Close(ctx))
	require.NoError(f.owner, f.st.Close())
}

// response is an HTTP answer, its body read.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t tb, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body %s", r.body)
}

// problem decodes a problem answer, checking its media type and shape.
func (r response) problem(t tb) Problem {
	t.Helper()
	require.Equal(t, ProblemContentType, r.header.Get("Content-Type"), "status %d body %s", r.status, r.body)
	var p Problem
	r.json(t, &p)
	require.Equal(t, r.status, p.Status)
	require.Contains(t, p.Type, ProblemTypePrefix)
	require.NotEmpty(t, p.Title)
	return p
}

// do sends a request with a token (or none) and a body: a string is sent as
// it is, anything else as JSON.
func (f *fixture) do(method, path, token string, body any) response {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(f.t, err)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, f.ts.URL+path, rd)
	require.NoError(f.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := f.ts.Client().Do(req)
	require.NoError(f.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(f.t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// rows returns n logistic rows of dimension d (features in [-1, 1], labels
// ±1) from seed.
func rows(seed uint64, n, d int) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = 2*rng.Float64() - 1
		}
		y[i] = float64(1 - 2*rng.IntN(2))
	}
	return x, y
}

// ingest posts rows with ids and requires success.
func (f *fixture) ingest(x [][]float64, y []float64, ids []int64) eventsResponse {
	f.t.Helper()
	res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x, "labels": y, "ids": ids})
	require.Equal(f.t, http.StatusOK, res.status, "%s", res.body)
	var out eventsResponse
	res.json(f.t, &out)
	return out
}
