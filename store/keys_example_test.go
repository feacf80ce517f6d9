package store_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

// emails is a store.KeySource: events whose rows are keyed by e-mail
// address, as a CSV file's string id column is (dataset.Reader).
type emails struct {
	events []stream.Event
	keys   []string
	i      int
}

func (e *emails) Next() (stream.Event, error) {
	if e.i == len(e.events) {
		return stream.Event{}, io.EOF
	}
	e.i++
	return e.events[e.i-1], nil
}

func (e *emails) Key() string { return e.keys[e.i-1] }

// A deletion request names a user by the key the data carried; the store
// resolves it, forgets the row and erases the key with it.
func ExampleStore_ForgetKeys() {
	o := stream.DefaultLogisticOptions()
	o.D, o.T = 3, 4
	h, err := stream.GenerateLogistic(o)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := store.Create(dir, store.Config{Header: h.Header, Learner: olbfgs.DefaultConfig(3), CheckpointEvery: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	src := &emails{events: h.Events, keys: []string{"alice@example.com", "bob@example.com", "carol@example.com", "dave@example.com"}}
	if _, err := s.IngestEvents(src, store.IngestOptions{}); err != nil {
		log.Fatal(err)
	}
	ids, _ := s.LookupKeys([]string{"bob@example.com"})
	fmt.Println("bob@example.com is id", ids[0])

	rep, err := s.ForgetKeys([]string{"bob@example.com"}, nil, store.ForgetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s forget of ids %v, %d key erased\n", rep.Path, rep.IDs, rep.KeysErased)
	_, err = s.LookupKeys([]string{"bob@example.com"})
	fmt.Println("afterwards:", errors.Is(err, store.ErrUnknownKey), err)
	// Output:
	// bob@example.com is id 2
	// exact forget of ids [2], 1 key erased
	// afterwards: true key not in the store: "bob@example.com" (never ingested, or already forgotten: a forget erases the key)
}
