//go:build race

package store

// raceEnabled reports whether the race detector is on: it slows the pure-Go
// SQLite ~10×, and the property tests skip their cheap check under it.
const raceEnabled = true
