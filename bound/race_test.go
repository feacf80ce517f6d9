//go:build race

package bound

// raceEnabled reports whether the race detector is on (it slows the
// property tests ~10×; TestMain lowers their default case count).
const raceEnabled = true
