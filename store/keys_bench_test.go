package store

import (
	"fmt"
	"testing"
	"time"

	"unlearn/stream"
)

// keyedCycle is cycleSource with a key per event (userKey of its id), as
// ingest --data of a CSV file with string ids gives the store.
type keyedCycle struct{ cycleSource }

func (k *keyedCycle) Key() string { return userKey(int64(k.i)) }

// BenchmarkIngestKeys: the cost of keeping keys, A/B in one run: ingest
// -store.events events at d = 100 (logistic, τ = 10, K = 10⁴, transactions
// of 10⁴ events) without keys and with a 20-byte key per event, alternating,
// reporting events/s, CPU time per event and store bytes per event.
func BenchmarkIngestKeys(b *testing.B) {
	const d, tau, k = 100, 10, 10_000
	h := genHistory(b, stream.KindLogistic, d, 1000, 1)
	n := *benchEvents
	for _, keyed := range []bool{false, true} {
		b.Run(fmt.Sprintf("d=%d/events=%d/keys=%v", d, n, keyed), func(b *testing.B) {
			var elapsed, cpu time.Duration
			for b.Loop() {
				s := createStore(b, b.TempDir(), h.Header, tau, k)
				var src EventSource = &cycleSource{pool: h.Events, n: n}
				if keyed {
					src = &keyedCycle{cycleSource{pool: h.Events, n: n}}
				}
				start, c0 := time.Now(), cpuTime()
				if _, err := s.IngestEvents(src, IngestOptions{BatchSize: k}); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				cpu += cpuTime() - c0
				st, _ := s.Status()
				b.ReportMetric(float64(st.Bytes)/float64(n), "store-bytes/event")
				s.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*b.N), "cpu-ns/event")
		})
	}
}
