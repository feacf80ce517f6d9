package serve

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// serviceModel is the model of the service beside the real thing: the
// events ingested in order, the ids forgotten by served requests, the keys
// held, and the requests queued.
type serviceModel struct {
	f         *fixture
	loss      stream.Loss
	events    []stream.Event
	keyOf     map[int64]string
	forgotten stream.IDSet
	queued    map[string][]int64 // request → its ids (keys resolved)
	nextID    int64
}

// state is `train` on the stream edited by the served requests.
func (m *serviceModel) state(t *rapid.T) *olbfgs.Learner {
	l, err := olbfgs.Replay(m.f.cfg, m.loss, stream.Counterfactual(m.events, m.forgotten))
	require.NoError(t, err)
	return l
}

func (m *serviceModel) ingest(t *rapid.T) {
	n := rapid.IntRange(1, 6).Draw(t, "rows")
	x, y := rows(rapid.Uint64().Draw(t, "seed"), n, m.f.hdr.D)
	ids := make([]int64, n)
	keys := make([]string, n)
	for i := range ids {
		ids[i] = m.nextID + int64(i)
		keys[i] = fmt.Sprintf("u%d@example.com", ids[i])
	}
	dup := len(m.events) > 0 && rapid.IntRange(0, 4).Draw(t, "dup") == 0
	if dup { // an id the store holds or forgot: 409, nothing written
		ids[rapid.IntRange(0, n-1).Draw(t, "at")] = m.events[rapid.IntRange(0, len(m.events)-1).Draw(t, "which")].ID
	}
	res := m.f.do("POST", "/v1/events", m.f.tokens["ingest"], map[string]any{"rows": x, "labels": y, "ids": ids, "keys": keys})
	if dup {
		require.Equal(t, http.StatusConflict, res.status, "%s", res.body)
		res.problem(t)
		return
	}
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	for i := range ids {
		m.events = append(m.events, stream.InsertEvent(ids[i], x[i], y[i]))
		m.keyOf[ids[i]] = keys[i]
	}
	m.nextID += int64(n)
}

func (m *serviceModel) forget(t *rapid.T) {
	if len(m.events) == 0 {
		t.Skip("nothing ingested")
	}
	all := make([]int64, len(m.events))
	for i, e := range m.events {
		all[i] = e.ID
	}
	picked := rapid.SliceOfNDistinct(rapid.SampledFrom(all), 1, 3, rapid.ID[int64]).Draw(t, "ids")
	var ids []int64
	var keys []string
	for _, id := range picked {
		// By key while the key is held (a served forget erased it).
		if !m.forgotten.Has(id) && rapid.Bool().Draw(t, "by key") {
			keys = append(keys, m.keyOf[id])
		} else {
			ids = append(ids, id)
		}
	}
	unknown := rapid.IntRange(0, 5).Draw(t, "unknown") == 0
	if unknown {
		ids = append(ids, m.nextID+1000)
	}
	for _, id := range picked {
		// A forgotten record is answered as one never ingested.
		unknown = unknown || m.forgotten.Has(id)
	}
	res := m.f.do("POST", "/v1/forget", m.f.tokens["forget"], map[string]any{"ids": ids, "keys": keys})
	if unknown {
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s", res.body)
		res.problem(t)
		return
	}
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	var st forgetState
	res.json(t, &st)
	require.Equal(t, len(picked), st.Records)
	m.queued[st.Request] = picked
}

// serve asks the service to serve the queue now and waits for every
// queued request: one batch, each request with a receipt that counts its
// records and those forgotten before.
func (m *serviceModel) serve(t *rapid.T) {
	if len(m.queued) == 0 {
		t.Skip("nothing queued")
	}
	m.f.srv.queue.mu.Lock()
	m.f.srv.queue.urgent = true
	m.f.srv.queue.mu.Unlock()
	m.f.srv.queue.poke()
	before := stream.NewIDSet(m.forgotten.Sorted()...)
	for req, ids := range m.queued {
		st := m.f.waitServed(req)
		require.Equal(t, "served", st.State)
		rc, err := certify.VerifyReceipt(st.Receipt, m.f.key.Public())
		require.NoError(t, err)
		require.Equal(t, len(ids), rc.Records)
		already := 0
		for _, id := range ids {
			if before.Has(id) {
				already++
			}
		}
		require.Equal(t, already, rc.AlreadyForgotten, "request %s", req)
		for _, id := range ids {
			m.forgotten.Add(id)
		}
		delete(m.queued, req)
	}
	_, err := m.f.st.Check()
	require.NoError(t, err)
}

// check: the service's predictions are the model's state's, bit for bit,
// and the status counts match (serve also runs the store's Check).
func (m *serviceModel) check(t *rapid.T) {
	want := m.state(t)
	probe, _ := rows(5, 2, m.f.hdr.D)
	res := m.f.do("POST", "/v1/predict", m.f.tokens["predict"], map[string]any{"rows": probe})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var pr classified
	require.NoError(t, json.Unmarshal(res.body, &pr))
	u := make([]float64, 1)
	for i, x := range probe {
		want.Scores(u, stream.Sample{V: x})
		require.Equal(t, stream.Sigmoid(u[0]), pr.Probabilities[i][1], "prediction of row %d", i)
	}
	res = m.f.do("GET", "/v1/status", m.f.tokens["read"], nil)
	var st statusJSON
	res.json(t, &st)
	require.Equal(t, len(m.events)-len(m.forgotten), st.Store.Events, "events in the log")
	require.Equal(t, len(m.forgotten), st.Store.Forgotten, "tombstones")
	require.Equal(t, len(m.queued), st.Queue.Queued, "queued requests")
}

// TestServiceStateMachine: random interleavings of ingests (some with an id
// the store holds or forgot), deletion requests by ids and keys (some
// naming an unknown id), and serving the queue, checked after every action
// against the model: predictions equal `train` on the edited stream bit for
// bit, counts agree, receipts count each request's records, and the store
// passes Check. Every action commits with fsyncs, so the default run is
// short: 8 checks unless -rapid.checks is given.
func TestServiceStateMachine(t *testing.T) {
	defer fewerChecks(8)()
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp("", "serve-rapid-")
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		f := newFixtureIn(t, dir, fixtureOptions{d: 2, tau: 2, k: rapid.IntRange(1, 8).Draw(t, "K"),
			opt: Options{ForgetWithin: time.Hour, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}})
		defer f.close()
		loss, err := f.hdr.Loss()
		require.NoError(t, err)
		m := &serviceModel{f: f, loss: loss, keyOf: map[int64]string{}, forgotten: stream.NewIDSet(), queued: map[string][]int64{}, nextID: 1}
		t.Repeat(map[string]func(*rapid.T){
			"ingest": m.ingest,
			"forget": m.forget,
			"serve":  m.serve,
			"":       m.check,
		})
	})
}

// fewerChecks sets rapid's -rapid.checks to n unless the command line gave
// it, and returns the function that restores it.
func fewerChecks(n int) func() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	fl := flag.Lookup("rapid.checks")
	if given || fl == nil {
		return func() {}
	}
	old := fl.Value.String()
	fl.Value.Set(strconv.Itoa(n))
	return func() { fl.Value.Set(old) }
}
