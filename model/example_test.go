package model_test

import (
	"errors"
	"fmt"
	"io"
	"os"

	"unlearn/dataset"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// A binary model trained on a CSV's columns "age" and "dose", whose
// classes are "well" (y = −1) and "sick" (y = +1), applied to rows.
func Example() {
	loss, _ := stream.NewLogistic(2, 0.05)
	state, _ := olbfgs.New(olbfgs.DefaultConfig(2), loss)
	state.SetW([]float64{1.5, -0.5})
	m, _ := model.New(state, &model.Contract{Format: dataset.CSV, Features: []string{"age", "dose"}, Label: "outcome",
		Classes: []string{"well", "sick"}})

	x, _ := m.Vector(map[string]float64{"dose": 1, "age": 0.5}) // a service's named values
	p, _ := m.Predict(x)
	fmt.Printf("%s: p(well) = %.4f, p(sick) = %.4f\n", p.Label, p.Probabilities[0], p.Probabilities[1])

	rows := []stream.Event{
		stream.InsertEvent(7, []float64{0.5, 1}, 0),
		stream.InsertEvent(8, []float64{-1, 0.5}, 0),
	}
	_, _ = model.WritePredictions(os.Stdout, m, &sliceRows{events: rows}, model.Output{})
	// Output:
	// sick: p(well) = 0.4378, p(sick) = 0.5622
	// id,label,p_well,p_sick
	// 7,sick,0.4378234991142019,0.5621765008857981
	// 8,well,0.8519528019683106,0.14804719803168948
}

// Data read into a model is checked against its contract: here a CSV
// whose columns come in another order.
func ExampleContract_Check() {
	trained := &model.Contract{Format: dataset.CSV, Features: []string{"age", "bmi", "bp"}}
	data := &model.Contract{Format: dataset.CSV, Features: []string{"age", "bp", "bmi"}}
	err := trained.Check(data, model.CheckOptions{})
	var me *model.MismatchError
	fmt.Println(errors.As(err, &me), me.Field)
	fmt.Println(me.Detail)
	// Output:
	// true features
	// feature 2 is "bp", the model's is "bmi": columns in another order
}

// sliceRows is a model.Rows over events.
type sliceRows struct {
	events []stream.Event
	i      int
}

func (s *sliceRows) Next() (stream.Event, error) {
	if s.i == len(s.events) {
		return stream.Event{}, io.EOF
	}
	s.i++
	return s.events[s.i-1], nil
}
