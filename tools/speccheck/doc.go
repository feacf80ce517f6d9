// Package speccheck checks the project's specification, docs/spec.md, from
// the outside: that every section reference in the repository ("spec §n",
// "spec §n.m", "docs/spec.md §n") lands on a heading of it, and, in its
// tests, that the JSON Schemas of docs/schemas accept the documents the
// toolkit really writes and reject hand-broken ones.
//
// Headings of docs/spec.md carry their number explicitly, "## §1. Events
// and streams" or "### §1.2 Synthetic generators"; [Headings] lists them
// and [References] finds the references in a text, so that a test can
// check that each one resolves.
//
// The tests build their documents with the library APIs — a generated
// stream, trained learners' snapshots, a small experiment and a results
// folder, certified releases of a certifiable learner (certify.Wrap and
// certify.Certify: derived, diameter, exact and assumed α, reset and
// rebuilt memories) with their certificates, some signed (sign.Generate,
// certify.Sign) and each accepted by certify.Verify, a ledger that charges
// them (package ledger), the key files, an accountant — and validate them with
// github.com/santhosh-tekuri/jsonschema/v6 (draft 2020-12). Each format
// also has hand-broken documents the schema must reject, and the test
// records whether the toolkit's own reader rejects them too.
package speccheck
