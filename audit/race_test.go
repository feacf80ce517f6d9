//go:build race

package audit

// raceEnabled reports whether the race detector is on (it slows the DP
// library's sampler and the audits ~10×).
const raceEnabled = true
