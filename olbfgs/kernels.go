package olbfgs

// Fused vector kernels of the two-loop recursion. Each makes one sweep over
// its vectors where the textbook form makes two (an axpy and then a dot
// product over the updated vector), which halves the traffic on r and keeps
// the two-loop within 2× of streaming its pairs once at large d (see
// docs/performance.md). Dot products accumulate in four interleaved partial
// sums, combined as (s0+s1)+(s2+s3) — a fixed order, so results are
// deterministic.

// copyDot sets dst = q and returns xᵀq.
func copyDot(dst, q, x []float64) float64 {
	n := len(dst)
	q, x = q[:n], x[:n]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		q0, q1, q2, q3 := q[i], q[i+1], q[i+2], q[i+3]
		dst[i], dst[i+1], dst[i+2], dst[i+3] = q0, q1, q2, q3
		s0 += x[i] * q0
		s1 += x[i+1] * q1
		s2 += x[i+2] * q2
		s3 += x[i+3] * q3
	}
	for ; i < n; i++ {
		dst[i] = q[i]
		s0 += x[i] * q[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyDot sets r = r + c·u and returns xᵀr (of the updated r).
func axpyDot(r []float64, c float64, u, x []float64) float64 {
	n := len(r)
	u, x = u[:n], x[:n]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		r0 := r[i] + c*u[i]
		r1 := r[i+1] + c*u[i+1]
		r2 := r[i+2] + c*u[i+2]
		r3 := r[i+3] + c*u[i+3]
		r[i], r[i+1], r[i+2], r[i+3] = r0, r1, r2, r3
		s0 += x[i] * r0
		s1 += x[i+1] * r1
		s2 += x[i+2] * r2
		s3 += x[i+3] * r3
	}
	for ; i < n; i++ {
		r[i] += c * u[i]
		s0 += x[i] * r[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyScaleDot sets r = γ·(r + c·u) and returns xᵀr (of the updated r).
func axpyScaleDot(r []float64, c float64, u []float64, gamma float64, x []float64) float64 {
	n := len(r)
	u, x = u[:n], x[:n]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		r0 := gamma * (r[i] + c*u[i])
		r1 := gamma * (r[i+1] + c*u[i+1])
		r2 := gamma * (r[i+2] + c*u[i+2])
		r3 := gamma * (r[i+3] + c*u[i+3])
		r[i], r[i+1], r[i+2], r[i+3] = r0, r1, r2, r3
		s0 += x[i] * r0
		s1 += x[i+1] * r1
		s2 += x[i+2] * r2
		s3 += x[i+3] * r3
	}
	for ; i < n; i++ {
		r[i] = gamma * (r[i] + c*u[i])
		s0 += x[i] * r[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy sets r = r + c·u.
func axpy(r []float64, c float64, u []float64) {
	u = u[:len(r)]
	for i, ui := range u {
		r[i] += c * ui
	}
}

// scaleTo sets dst = γ·q.
func scaleTo(dst []float64, gamma float64, q []float64) {
	q = q[:len(dst)]
	for i, v := range q {
		dst[i] = gamma * v
	}
}
