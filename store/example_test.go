package store_test

import (
	"fmt"
	"log"
	"os"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

// A store is created for a loss, fed events, and asked to forget two of
// them; the state is then the replay of the deletion-edited stream.
func Example() {
	o := stream.DefaultLogisticOptions()
	o.D, o.T = 5, 1000
	h, err := stream.GenerateLogistic(o)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := olbfgs.DefaultConfig(5)
	cfg.Radius, cfg.SampleBound = 10, 100 // certifiable: the approximate path below keeps a noised state
	s, err := store.Create(dir, store.Config{Header: h.Header, Learner: cfg, CheckpointEvery: 100})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.IngestEvents(store.Events(h.Events), store.IngestOptions{}); err != nil {
		log.Fatal(err)
	}
	rep, err := s.Forget([]int64{250, 980}, store.ForgetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: replayed %d events from the checkpoint at seq %d, rewrote %d checkpoints\n",
		rep.Path, rep.EventsReplayed, rep.FromSeq, rep.CheckpointsRewritten)

	state, _ := s.State()
	oracle, _ := olbfgs.Replay(cfg, h.Loss, stream.Counterfactual(h.Events, stream.NewIDSet(250, 980)))
	fmt.Println("bit-identical to training on the deletion-edited stream:", state.Equal(oracle))

	// Over a replay cap of 100 events, an intervention serves the request,
	// and the store keeps its output only noised: a certified release (ε =
	// 1, δ = 10⁻⁵), kept in the store, from which it continues. A service
	// signs and charges it in OnRelease.
	rep, err = s.Forget([]int64{10}, store.ForgetOptions{MaxReplay: 100, Intervention: "pair-drop",
		Noise: certify.Spec{Epsilon: 1, Delta: 1e-5}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (%s), needs noise: %v, ages %v\n", rep.Path, rep.Intervention, rep.NeedsNoise, rep.Ages)
	fmt.Printf("kept release %d: α %s, disclosed ages %v\n", rep.ReleaseID, rep.Released.Certificate.Sensitivity.Source,
		rep.Released.Certificate.Sensitivity.Deletion.Ages)
	// Output:
	// exact: replayed 798 events from the checkpoint at seq 200, rewrote 8 checkpoints
	// bit-identical to training on the deletion-edited stream: true
	// approximate (pair-drop), needs noise: true, ages [988]
	// kept release 1: α derived, disclosed ages [0]
}

// A release is kept in the store with the log position of its state; the
// forget of a sample that state included erases it, and a release made
// before that sample was ingested stays.
func ExampleStore_Keep() {
	o := stream.DefaultLogisticOptions()
	o.D, o.T = 3, 200
	h, err := stream.GenerateLogistic(o)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := store.Create(dir, store.Config{Header: h.Header, Learner: olbfgs.DefaultConfig(3), CheckpointEvery: 50})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	keep := func() {
		r, err := s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5})
		if err != nil {
			log.Fatal(err)
		}
		k, err := s.Keep(r)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("kept release %d (%s) at log position %d\n", k.ID, k.Path, k.Head)
	}
	for _, part := range [][]stream.Event{h.Events[:100], h.Events[100:]} {
		if _, err := s.IngestEvents(store.Events(part), store.IngestOptions{}); err != nil {
			log.Fatal(err)
		}
		keep()
	}
	rep, err := s.Forget([]int64{150}, store.ForgetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("forget of id 150 erased", rep.ReleasesErased, "kept release")
	rs, _ := s.Releases()
	for _, r := range rs {
		fmt.Printf("still kept: release %d at log position %d\n", r.ID, r.Head)
	}
	// Output:
	// kept release 1 (exact) at log position 100
	// kept release 2 (exact) at log position 200
	// forget of id 150 erased 1 kept release
	// still kept: release 1 at log position 100
}
