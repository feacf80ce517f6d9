//go:build !race

package speccheck

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
