// Package stream holds the data side of the toolkit: events (insert and
// delete, with ids), the loss kinds (quadratic, ridge logistic, ridge
// least squares and ridge multinomial logistic, plus any kind a user
// registers) with allocation-free
// gradients, validated histories, the deletion-edited
// counterfactual of a history, the JSON Lines stream format, the paper's two
// synthetic generators, and the four deletion modes.
//
// The definitions follow docs/spec.md §1, §4 and §8 and the paper's Section
// "Problem Setup" (Definitions "Actual event stream" and "Deletion-edited
// counterfactual history").
//
// # Events
//
// An event is (op, id, payload). Ids are unique per insert; a delete names
// an earlier insert and carries no payload. [Validate] and [Validator] turn
// every violation (unknown or repeated deletion, duplicate id, wrong
// dimension, NaN or Inf) into an error that names the event.
//
// # Losses
//
// A [Loss] evaluates ℓ_z(w) and stores ∇ℓ_z(w) in a caller-supplied slice
// without allocating, so the learner's step is allocation-free. The
// built-in kinds are [Quadratic], [Logistic], [Regression] (ridge least
// squares, ½(xᵀw − y)² + (λ/2)‖w‖², with μ = λ and L = λ + max‖x‖²) and
// [Multinomial] (softmax cross-entropy for K classes with ridge, evaluated
// by a shifted log-sum-exp).
//
// Dimensions: a loss's Dim is the feature dimension d (the length of a
// dense payload, the header's d); the w its Grad and Value take has the
// parameter dimension [ParamDim], K·d for the multinomial loss's K blocks
// of d weights, d for the others. The losses of linear models implement
// [Linear]: their data term depends on w through K scores only, so a
// learner can add an intercept or standardize features around them
// (package olbfgs), and score raw samples for predictions.
//
// Loss kinds live in a registry: [RegisterLoss] adds a user's kind (its
// payload field names, which header constants it carries, and how a header
// builds it), after which streams and learner snapshots of that kind are
// written and read like the built-in ones. A loss that implements
// [HeaderProvider] describes itself as a header; [HeaderOf] returns it, and
// [Header.Loss] builds the loss back.
//
// # Stream files
//
// [Read] and [Write] implement the JSON Lines format of spec §1.1, in UTF-8:
// line 1 is the header, every further line one event, in stream order.
//
//	{"format":"olbfgs-stream/v1","kind":"quadratic","d":2,"H0":[[2,0],[0,1]],"H1":[[1,0],[0,1]],"seed":1}
//	{"op":"insert","id":1,"a":[0.1,0.2],"alpha":0.25}
//	{"op":"delete","id":1}
//
//	{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}
//	{"op":"insert","id":7,"x":[0.1,-1.2],"y":-1}
//
//	{"format":"olbfgs-stream/v1","kind":"regression","d":2,"lambda":0.01}
//	{"op":"insert","id":3,"x":[0.5,2],"y":17.25}
//
//	{"format":"olbfgs-stream/v1","kind":"multinomial","d":2,"k":3,"lambda":0.001}
//	{"op":"insert","id":4,"x":[0.5,2],"y":2}
//
// Header fields: "format" (must be [FormatV1]), "kind" ("quadratic",
// "logistic", "regression", "multinomial" or a registered kind), "d"
// (integer ≥ 1), "H0" and "H1" (d×d SPD matrices; quadratic only), "k"
// (the number of classes, 2 to [MaxClasses]; multinomial only) and
// "lambda" (λ ≥ 0; logistic, regression and multinomial). Every other header field is
// metadata, kept in [Header.Meta]. Event fields: "op" ("insert" or
// "delete"), "id" (an integer literal in the int64 range) and, for an insert,
// the payload of its kind: "a" and "alpha" (quadratic) or "x" and "y"
// (logistic: y = ±1; regression: y real; multinomial: y a class index in
// [0, K)). A logistic, regression or multinomial payload may be sparse: "x" then holds the non-zero values and "x_index" their
// 0-based, strictly increasing indices (Sample.Idx). Fields may come in any order within a line.
//
// Writing then reading is lossless bit for bit (floats use the shortest
// round-trip form); every reading error is a [LineError] naming the line and
// field, with the path inside the field's value ([LineError.Path]) and the
// column where the scanner stopped. The reader accepts strict JSON only: a
// byte the grammar does not allow (a NUL, a control character, a byte-order
// mark) is an error wherever it stands, and a number that overflows float64
// is refused in metadata as in payloads, so that whatever is accepted
// decodes with encoding/json to the same values. [WriteFile] replaces a file
// atomically.
//
// # Generators
//
// [GenerateQuadratic] and [GenerateLogistic] produce the paper's drifting
// quadratic and ridge logistic streams (Appendix "Synthetic Data-Generating
// Processes"; spec §1.2, §8), deterministic for a seed and recorded in the
// header metadata.
//
// Randomness: each generator draws from one rand.Rand over
// rand.NewPCG(seed, [GeneratorStream]) (math/rand/v2), in the order listed in
// its doc comment. Standard normals are (*rand.Rand).NormFloat64, uniforms
// (*rand.Rand).Float64; vectors are drawn entry 0 first, matrices row by
// row. Every listed draw is made whatever the parameters (σa = 0 still draws
// ξ_t; drift off still draws H1, Σ1 and z'_t), so changing one parameter
// never shifts the random numbers of the others.
//
// Arithmetic: the formulas are evaluated as written, sums in increasing index
// order, so another implementation using the same random numbers gets the
// same stream to round-off; the QR and Cholesky factorizations are gonum's
// (mat.QR, mat.Cholesky).
//
// # Deletion modes
//
// [ChooseDeletions] picks the deletion set U from the inserts of a prefix by
// one of the four [Mode] values of spec §4: recent, old, random (seeded) and
// high-gradient.
//
// # Errors
//
// Data and configuration problems are returned as errors (wrapping the
// sentinels in errors.go, so callers can use errors.Is); programmer errors
// such as mismatched slice lengths panic with a "stream: " prefix.
package stream
