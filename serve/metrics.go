package serve

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"unlearn/store"
)

// metrics are the service's Prometheus metrics, in a registry of its own
// (not the process-wide default one), served by GET /metrics in the
// Prometheus text format. The names start with unlearn_; docs/service.md
// lists them.
type metrics struct {
	reg *prometheus.Registry

	events, batches            prometheus.Counter
	received                   prometheus.Counter
	servedByPath               *prometheus.CounterVec
	queued                     prometheus.Gauge
	forgetBatches              prometheus.Counter
	batchFailures              prometheus.Counter
	deadlineMissed             prometheus.Counter
	resolutions                prometheus.Counter
	resolutionFailures         prometheus.Counter
	pending                    prometheus.Gauge
	batchSeconds, replaySecond prometheus.Histogram
	releases                   *prometheus.CounterVec
	kept, head                 prometheus.Gauge
	requests                   *prometheus.CounterVec
	duration                   *prometheus.HistogramVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.events = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_events_ingested_total", Help: "Insert events committed by POST /v1/events."})
	m.batches = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_ingest_batches_total", Help: "Ingest batches committed (one transaction each)."})
	m.received = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_forget_requests_received_total", Help: "Deletion requests acknowledged (durably queued)."})
	m.servedByPath = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "unlearn_forget_requests_served_total", Help: "Deletion requests served, by path (exact, approximate, none)."}, []string{"path"})
	m.queued = prometheus.NewGauge(prometheus.GaugeOpts{Name: "unlearn_forget_requests_queued", Help: "Deletion requests queued, not yet served."})
	m.forgetBatches = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_forget_batches_total", Help: "Deletion batches served (one replay each)."})
	m.batchFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_forget_batch_failures_total", Help: "Deletion batches that did not commit (their requests stay queued)."})
	m.deadlineMissed = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_forget_deadline_missed_total", Help: "Deletion requests served after their deadline."})
	m.resolutions = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_resolutions_total", Help: "Exact replays that resolved pending approximate deletions (the store's resolution policy)."})
	m.resolutionFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "unlearn_resolution_failures_total", Help: "Resolutions the policy asked for that did not commit (the requests stay pending)."})
	m.pending = prometheus.NewGauge(prometheus.GaugeOpts{Name: "unlearn_approximate_pending", Help: "Store requests served on the approximate path and not yet resolved."})
	m.batchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "unlearn_forget_batch_seconds", Help: "Wall time of a deletion batch: transaction, replay, receipts and VACUUM.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)})
	m.replaySecond = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "unlearn_forget_replay_seconds", Help: "Time a deletion batch spent replaying the log (exact path).", Buckets: prometheus.ExponentialBuckets(0.001, 2, 20)})
	m.releases = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "unlearn_releases_total", Help: "Certified releases published, by kind (exact, noised)."}, []string{"kind"})
	m.kept = prometheus.NewGauge(prometheus.GaugeOpts{Name: "unlearn_releases_kept", Help: "Releases kept in the store (not erased by a deletion)."})
	m.head = prometheus.NewGauge(prometheus.GaugeOpts{Name: "unlearn_store_head", Help: "The log position of the published state."})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "unlearn_http_requests_total", Help: "HTTP requests, by route and status code."}, []string{"route", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "unlearn_http_request_duration_seconds", Help: "HTTP request duration, by route.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}, []string{"route"})
	for _, c := range []prometheus.Collector{m.events, m.batches, m.received, m.servedByPath, m.queued, m.forgetBatches, m.batchFailures,
		m.deadlineMissed, m.resolutions, m.resolutionFailures, m.pending, m.batchSeconds, m.replaySecond, m.releases, m.kept, m.head, m.requests, m.duration} {
		f(c)
	}
	if s.ledger != nil {
		f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "unlearn_budget_epsilon_spent", Help: "Privacy budget spent: ε of the charged releases composed (the store's ledger)."},
			func() float64 { return s.ledger.Totals().Epsilon }))
		f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "unlearn_budget_epsilon", Help: "Privacy budget: the ledger's ε."},
			func() float64 { return s.ledger.Budget().Epsilon }))
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) ingested(r store.IngestResult) {
	m.events.Add(float64(r.Events))
	m.batches.Inc()
}

func (m *metrics) batch(rep store.ServeReport, d time.Duration) {
	m.forgetBatches.Inc()
	m.servedByPath.WithLabelValues(string(rep.Path())).Add(float64(len(rep.Served)))
	m.batchSeconds.Observe(d.Seconds())
	if rep.Path() == store.PathExact { // the batch's requests share one replay
		m.replaySecond.Observe(rep.Forgets[0].Replay.Seconds())
	}
}

func (m *metrics) released(exact bool) {
	kind := "noised"
	if exact {
		kind = "exact"
	}
	m.releases.WithLabelValues(kind).Inc()
}

func (m *metrics) published(v *view) {
	m.kept.Set(float64(len(v.releases)))
	m.head.Set(float64(v.head))
	m.pending.Set(float64(len(v.status.Pending)))
}

func (m *metrics) request(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}
