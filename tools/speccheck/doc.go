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
// The tests build their documents with the library APIs (a generated
// stream, a trained learner's snapshot, a small experiment, certificates
// from the seeded sampler, an accountant) and validate them with
// github.com/santhosh-tekuri/jsonschema/v6 (draft 2020-12).
package speccheck
