// Package repocheck keeps the repository's prose and CI true to its code.
// Its tests check that every benchmark the documentation cites — by name
// (BenchmarkIngest, noise.BenchmarkSecureAddNoise) or in a `go test ./pkg
// -bench PATTERN` command — exists in the package it is cited for, so that
// docs/performance.md cannot cite deleted benchmarks again; that .ci/run
// runs the README's test command; and that every test that skips under the
// race detector (testutil.SkipUnderRace) is named in .ci/run's step
// without it, so that it still runs in CI.
//
// [Benchmarks] lists the benchmarks declared in a folder of Go files;
// [Citations] finds the citations in a Markdown text.
package repocheck
