package olbfgs

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling thread has used
// (CLOCK_THREAD_CPUTIME_ID, nanoseconds), and true; the caller must hold
// its goroutine on the thread (runtime.LockOSThread). On a shared machine
// it leaves out the time the thread waited for a core, which wall-clock
// timing includes.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
