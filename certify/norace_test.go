//go:build !race

package certify

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
