// Package parallel runs independent indexed jobs on a bounded number of
// goroutines.
package parallel

import (
	"sync"
	"sync/atomic"
)

// For runs f(0), …, f(n−1), each exactly once, on up to workers goroutines
// that take the next index from a shared counter; with workers ≤ 1 or
// n ≤ 1 it runs them in order on the calling goroutine. f must be safe to
// call concurrently for different indices. For returns when every call has
// returned.
func For(workers, n int, f func(int)) {
	if workers <= 1 || n <= 1 {
		for t := range n {
			f(t)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				t := int(next.Add(1)) - 1
				if t >= n {
					return
				}
				f(t)
			}
		})
	}
	wg.Wait()
}
