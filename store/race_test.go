//go:build race

package store

// raceEnabled reports whether the race detector is on: it slows the pure-Go
// SQLite ~10×, and TestStoreMachine runs fewer full cases under it.
const raceEnabled = true
