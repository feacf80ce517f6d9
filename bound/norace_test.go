//go:build !race

package bound

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
