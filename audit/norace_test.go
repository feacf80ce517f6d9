//go:build !race

package audit

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
