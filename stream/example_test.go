package stream_test

import (
	"bytes"
	"fmt"
	"strings"

	"unlearn/stream"
)

// Generate a small drifting quadratic stream, write it in the stream file
// format, and read it back.
func Example() {
	h, err := stream.GenerateQuadratic(stream.QuadraticOptions{D: 3, T: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	h.Events = append(h.Events, stream.DeleteEvent(2)) // a deletion request

	var buf bytes.Buffer
	if err := stream.Write(&buf, h); err != nil {
		panic(err)
	}
	back, err := stream.Read(&buf)
	if err != nil {
		panic(err)
	}
	var seed uint64
	if _, err := back.Header.MetaValue("seed", &seed); err != nil {
		panic(err)
	}
	fmt.Printf("%s stream, d=%d, seed %d, %d events\n", back.Header.Kind, back.Header.D, seed, len(back.Events))
	for _, e := range back.Events {
		fmt.Printf("%s %d\n", e.Op, e.ID)
	}
	// Output:
	// quadratic stream, d=3, seed 1, 5 events
	// insert 1
	// insert 2
	// insert 3
	// insert 4
	// delete 2
}

// The deletion-edited counterfactual drops the inserts and deletes of U and
// keeps the order of everything else.
func ExampleCounterfactual() {
	x := []float64{1, -1}
	events := []stream.Event{
		stream.InsertEvent(1, x, 1),
		stream.InsertEvent(2, x, -1),
		stream.DeleteEvent(1),
		stream.InsertEvent(3, x, 1),
		stream.DeleteEvent(3),
	}
	for _, e := range stream.Counterfactual(events, stream.NewIDSet(3)) {
		fmt.Println(e.Op, e.ID)
	}
	// Output:
	// insert 1
	// insert 2
	// delete 1
}

// Read reports the line and field of a bad event.
func ExampleRead_error() {
	file := `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}
{"op":"insert","id":1,"x":[0.5,-1],"y":1}
{"op":"insert","id":2,"x":[0.5,-1],"y":0}
`
	_, err := stream.Read(strings.NewReader(file))
	fmt.Println(err)
	// Output:
	// line 3, field "y": y = 0 not in {-1,+1}: invalid value
}

// Choose the deletion set U of the paper's "recent" mode from a prefix.
func ExampleChooseDeletions() {
	h, err := stream.GenerateLogistic(stream.LogisticOptions{D: 2, T: 20, Seed: 3})
	if err != nil {
		panic(err)
	}
	mode, err := stream.ParseMode("recent")
	if err != nil {
		panic(err)
	}
	u, err := stream.ChooseDeletions(h.Prefix(12), mode, stream.DefaultDeletionCount, stream.ChooseOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(mode, u)
	// Output:
	// recent [8 9 10 11 12]
}
