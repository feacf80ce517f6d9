package serve

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// statusJSON is the answer of GET /v1/status.
type statusJSON struct {
	// Published is when the state answered from was published (after the
	// last committed write).
	Published string     `json:"published"`
	Store     storeJSON  `json:"store"`
	Queue     queueStats `json:"queue"`
	// Resolution is the resolution policy the service applies to pending
	// approximate deletions, and what it did since start.
	Resolution resolutionStats `json:"resolution"`
	Budget     *budgetJSON     `json:"budget"`
}

type storeJSON struct {
	Kind        string `json:"kind"`
	D           int    `json:"d"`
	Head        int64  `json:"head"`
	Events      int    `json:"events"`
	Erased      int    `json:"erased"`
	T           int    `json:"t"`
	Checkpoints int    `json:"checkpoints"`
	Forgotten   int    `json:"forgotten"`
	Requests    int    `json:"store_requests"`
	Releases    int    `json:"releases"`
	// NeedsNoise: the state carries forgotten records' influence (an
	// approximate deletion pending); only noised releases are published.
	NeedsNoise bool `json:"needs_noise"`
	Pending    int  `json:"pending_approximate"`
}

type budgetJSON struct {
	Epsilon      float64 `json:"epsilon"`
	Delta        float64 `json:"delta"`
	EpsilonSpent float64 `json:"epsilon_spent"`
	Releases     int     `json:"releases_charged"`
}

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request, _ *call) error {
	v := s.view.Load()
	st := v.status
	out := statusJSON{
		Published: v.at.Format(time.RFC3339Nano),
		Store: storeJSON{Kind: string(v.kind), D: v.dim, Head: v.head, Events: st.Events, Erased: st.Erased, T: v.t,
			Checkpoints: st.Checkpoints, Forgotten: st.Forgotten, Requests: st.Requests, Releases: len(v.releases),
			NeedsNoise: st.NeedsNoise, Pending: len(st.Pending)},
		Queue:      s.queue.stats(),
		Resolution: s.resolver.stats(),
	}
	if s.ledger != nil {
		b, t := s.ledger.Budget(), s.ledger.Totals()
		out.Budget = &budgetJSON{Epsilon: b.Epsilon, Delta: b.Delta, EpsilonSpent: t.Epsilon, Releases: t.Releases}
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request, _ *call) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	return nil
}
