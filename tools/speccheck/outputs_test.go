package speccheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/experiment"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/stream"
)

// outputs holds real documents of every published format, produced by the
// toolkit's own writers in this test (small sizes, fixed seeds).
type outputs struct {
	streams      map[string][]byte // stream files by kind, JSON Lines
	snapshots    map[string][]byte // olbfgs-state/v1
	snapshotsV2  map[string][]byte // olbfgs-state/v2
	records      map[string][]byte // unlearn-run/v1
	certificates map[string][]byte // unlearn-certificate/v2
	releases     map[string][]byte // unlearn-release/v1, by the name of their certificate
	ledgers      map[string][]byte // unlearn-ledger/v1, JSON Lines
	keys         map[string][]byte // unlearn-public-key/v1 and unlearn-secret-key/v1, by kind
	accountants  map[string][]byte // unlearn-accountant/v2
	manifests    map[string][]byte // unlearn-results/v1
	evaluations  map[string][]byte // unlearn-evaluation/v1
	predictions  map[string][]byte // unlearn predict --json, JSON Lines
	receipts     map[string][]byte // unlearn-receipt/v1 envelopes, by path
	// receiptPayloads are the receipts the envelopes carry, by path.
	receiptPayloads map[string][]byte
	// key signed some certificates and the ledgers; publicKey verifies
	// them.
	key       *sign.Secret
	publicKey sign.Public
}

var (
	outputsOnce sync.Once
	outputsVal  *outputs
	outputsErr  error
)

// realOutputs builds the documents once per test binary.
func realOutputs(t testing.TB) *outputs {
	t.Helper()
	outputsOnce.Do(func() { outputsVal, outputsErr = makeOutputs() })
	require.NoError(t, outputsErr)
	return outputsVal
}

func makeOutputs() (*outputs, error) {
	o := &outputs{
		streams: map[string][]byte{}, snapshots: map[string][]byte{}, snapshotsV2: map[string][]byte{}, records: map[string][]byte{},
		certificates: map[string][]byte{}, releases: map[string][]byte{}, ledgers: map[string][]byte{},
		keys: map[string][]byte{}, accountants: map[string][]byte{}, manifests: map[string][]byte{},
		evaluations: map[string][]byte{}, predictions: map[string][]byte{},
	}
	// Streams from both generators, plus a stream with delete events.
	q, err := stream.GenerateQuadratic(stream.QuadraticOptions{D: 3, T: 40, Seed: 7})
	if err != nil {
		return nil, err
	}
	l, err := stream.GenerateLogistic(stream.LogisticOptions{D: 3, T: 40, Seed: 8})
	if err != nil {
		return nil, err
	}
	withDeletes := &stream.History{Header: q.Header, Loss: q.Loss,
		Events: append(append([]stream.Event{}, q.Events[:30]...), stream.DeleteEvent(4), stream.DeleteEvent(29))}
	withDeletes.Events = append(withDeletes.Events, q.Events[30:]...)
	multi, err := multinomialHistory()
	if err != nil {
		return nil, err
	}
	for name, h := range map[string]*stream.History{"quadratic": q, "logistic": l, "quadratic-deletes": withDeletes, "multinomial": multi} {
		var b bytes.Buffer
		if err := stream.Write(&b, h); err != nil {
			return nil, err
		}
		// Read back: the document is one the reader accepts.
		if _, err := stream.Read(bytes.NewReader(b.Bytes())); err != nil {
			return nil, err
		}
		o.streams[name] = b.Bytes()
	}

	// Snapshots: trained learners (deleted ids, a full memory), both kinds.
	for name, h := range map[string]*stream.History{"logistic": l, "quadratic-deletes": withDeletes} {
		cfg := olbfgs.DefaultConfig(h.Header.D)
		cfg.Memory = 4
		lr, err := olbfgs.Replay(cfg, h.Loss, h.Events)
		if err != nil {
			return nil, err
		}
		snap, err := olbfgs.MarshalSnapshot(lr, h.Header)
		if err != nil {
			return nil, err
		}
		o.snapshots[name] = snap
	}
	// Snapshots of learners with options (format v2): the practitioner's
	// profile on the logistic stream, and a multinomial learner with and
	// without options.
	for name, c := range map[string]struct {
		h        *stream.History
		practice bool
	}{"practitioner": {l, true}, "multinomial": {multi, false}, "multinomial-practitioner": {multi, true}} {
		cfg := olbfgs.DefaultConfig(c.h.Header.D).ForLoss(c.h.Loss)
		cfg.Memory = 4
		if c.practice {
			cfg = cfg.Practitioner()
		}
		lr, err := olbfgs.Replay(cfg, c.h.Loss, c.h.Events)
		if err != nil {
			return nil, err
		}
		if o.snapshotsV2[name], err = olbfgs.MarshalSnapshot(lr, c.h.Header); err != nil {
			return nil, err
		}
	}

	// Run records: a generated stream with series, a stream file.
	cfg := experiment.Config{
		Stream: experiment.StreamSpec{Kind: stream.KindLogistic, D: 3, T: 60, Seed: 2},
		TDel:   30, Horizon: 30, Tau: 3, Mode: experiment.ModeRandom, Count: 2, Probes: 4,
	}
	rec, err := experiment.Run(context.Background(), experiment.ExperimentBenchmark, cfg, experiment.Options{KeepSeries: true})
	if err != nil {
		return nil, err
	}
	rec.Provenance = &experiment.Provenance{Command: []string{"unlearn", "run"}, Version: "test"}
	if o.records["generated"], err = recordJSON(rec); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "speccheck")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "q.jsonl")
	if err := stream.WriteFile(file, withDeletes); err != nil {
		return nil, err
	}
	h, src, err := experiment.StreamFile(file)
	if err != nil {
		return nil, err
	}
	fcfg := experiment.Config{TDel: 32, Horizon: 10, Tau: 2, Deleted: []int64{3, 17}, Probes: 2}
	rec, err = experiment.RunHistory(context.Background(), h, src, fcfg, experiment.ExperimentDecay,
		experiment.Options{ZeroTiming: true})
	if err != nil {
		return nil, err
	}
	if o.records["file"], err = recordJSON(rec); err != nil {
		return nil, err
	}

	// A results folder's manifest (a two-configuration grid).
	g := experiment.QuickGrid()
	g.Configs = g.Configs[:2]
	for i := range g.Configs {
		g.Configs[i].Stream.T, g.Configs[i].TDel, g.Configs[i].Horizon = 40, 20, 20
	}
	res, err := experiment.RunGrid(context.Background(), g, experiment.Options{Workers: 1})
	if err != nil {
		return nil, err
	}
	res.Manifest.Provenance = &experiment.Provenance{Command: []string{"unlearn", "bench"}, Version: "test"}
	out := filepath.Join(dir, "results")
	if err := experiment.WriteResults(out, res, experiment.TableOptions{}); err != nil {
		return nil, err
	}
	if o.manifests["grid"], err = os.ReadFile(filepath.Join(out, "manifest.json")); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(out, "records", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) != len(g.Configs) {
		return nil, fmt.Errorf("results folder: %d records, want %d", len(files), len(g.Configs))
	}
	for _, f := range files {
		if o.records["folder "+filepath.Base(f)], err = os.ReadFile(f); err != nil {
			return nil, err
		}
	}

	// Certified releases, their certificates (some signed) and a ledger.
	certs, err := makeCertified(o, dir)
	if err != nil {
		return nil, err
	}

	// A model in use: releases with a data contract, evaluations,
	// predictions.
	if err := makeModelOutputs(o, dir); err != nil {
		return nil, err
	}

	// Accountants: empty, and after charging every certified release.
	acc, err := certify.NewAccountant(certify.Budget{Epsilon: 8, Delta: 1e-4})
	if err != nil {
		return nil, err
	}
	if o.accountants["empty"], err = json.Marshal(acc); err != nil {
		return nil, err
	}
	for _, c := range certs {
		if _, err := acc.Spend(certify.ChargeOf(c)); err != nil {
			return nil, err
		}
	}
	if o.accountants["spent"], err = json.Marshal(acc); err != nil {
		return nil, err
	}
	if err := addReceipts(o); err != nil {
		return nil, err
	}
	return o, nil
}

func recordJSON(r *experiment.Record) ([]byte, error) {
	var b bytes.Buffer
	err := r.WriteJSON(&b)
	return b.Bytes(), err
}

// TestDumpOutputs writes the documents to $SPECCHECK_DUMP, for a person
// writing or updating a schema. It is skipped unless the variable is set.
func TestDumpOutputs(t *testing.T) {
	dir := os.Getenv("SPECCHECK_DUMP")
	if dir == "" {
		t.Skip("set SPECCHECK_DUMP to a folder to write the documents there")
	}
	o := realOutputs(t)
	for kind, m := range map[string]map[string][]byte{
		"stream": o.streams, "snapshot": o.snapshots, "record": o.records,
		"certificate": o.certificates, "release": o.releases, "ledger": o.ledgers,
		"key": o.keys, "accountant": o.accountants, "manifest": o.manifests,
		"evaluation": o.evaluations, "predictions": o.predictions,
		"receipt": o.receipts, "receipt-payload": o.receiptPayloads,
	} {
		for name, b := range m {
			require.NoError(t, os.WriteFile(filepath.Join(dir, kind+"-"+name+".json"), b, 0o644))
		}
	}
}

// multinomialHistory is a small three-class stream with a sparse insert
// and a delete.
func multinomialHistory() (*stream.History, error) {
	m, err := stream.NewMultinomial(3, 3, 0.01)
	if err != nil {
		return nil, err
	}
	var events []stream.Event
	for i := range 30 {
		x := []float64{float64(i%3) + 0.1*float64(i), float64(i % 5), 1 - 0.05*float64(i)}
		events = append(events, stream.InsertEvent(int64(i+1), x, float64(i%3)))
	}
	events = append(events, stream.Event{Op: stream.Insert, ID: 31, Sample: stream.SparseSample([]int32{0, 2}, []float64{2, -1}, 2)},
		stream.DeleteEvent(5))
	return stream.NewHistory(m.Header(), events)
}
