// Package model applies a trained model to raw rows and checks data against
// the model's contract: predictions, held-out metrics, and the description
// of what the model's data looks like.
//
//	m, err := model.New(state, contract) // a store's state, a snapshot, a release's learner
//	...
//	n, err := model.WritePredictions(os.Stdout, m, rows, model.Output{})
//	ev, err := model.Evaluate(m, labelledRows)
//
// # The contract
//
// A [Contract] is what a model needs of its data: the format of the file it
// was trained on, a CSV's feature columns by name and order, an IDX file's
// image shape and pixel divisor, the class labels in the order of the
// model's outputs. Package dataset records it in the stream header of every
// data file it reads (metadata "source" and "features"), so a store created
// from a data file, a snapshot trained on one and a converted stream carry
// it; [ContractOf] reads it back, and a release carries it as its field
// "contract". [Contract.Check] compares the contract of data read into a
// model with the model's and returns a [MismatchError] naming the field,
// what the model expects and what the data has: swapped classes, another
// scale, CSV columns swapped, renamed, missing or extra. A model without a
// recorded contract (a synthetic stream's, a store created from flags) is
// checked on its loss only: kind, d and constants.
//
// # Predictions
//
// A binary logistic model's raw score of a row x is the margin wᵀx; it
// predicts the positive class when wᵀx ≥ 0 (the rule of the held-out
// accuracy), with probabilities σ(−wᵀx) and σ(wᵀx) of the negative and the
// positive class. A regression predicts wᵀx. The score of a row is computed
// in one function of this package, in the summation order of the loss
// (stream.Logistic.Value), so a prediction, the held-out loss and the
// accuracy rest on the same bits, and a model and its exact release
// predict the same bits. [WritePredictions] streams rows in and CSV or JSON
// Lines out in constant memory; [Model.Predict] is the per-row call of a
// service.
//
// # Metrics
//
// [Evaluate] reports the held-out loss of docs/spec.md (the model's loss,
// ridge term included), and for a classifier the accuracy, the log loss,
// the ROC AUC (binary; exact, ties counting one half), each class's recall
// and the confusion matrix; for a regression the RMSE.
package model
