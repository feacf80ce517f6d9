//go:build !race

package noise

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
