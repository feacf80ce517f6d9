package olbfgs

// Fused vector kernels of the two-loop recursion. Each makes one sweep over
// its vectors where the textbook form makes two (an axpy and then a dot
// product over the updated vector), which halves the traffic on r (see
// docs/performance.md). Dot products accumulate in four interleaved partial
// sums, s_j over the elements k ≡ j (mod 4) in increasing k, combined as
// (s0+s1)+(s2+s3) — a fixed order, so results are deterministic. On amd64
// with AVX2 the body of axpyDot and axpyScaleDot runs in assembly
// (kernels_amd64.s), which performs the same separately rounded operations
// lane by lane and so gives the same bits (for any result that is not a
// NaN: NaN payloads depend on operand order, which the Go compiler does not
// fix); the Go loops below finish the tail. The explicit float64
// conversions round each product before it is added, which forbids the
// compiler from fusing them into a multiply-add (The Go Programming
// Language Specification, "Floating-point operators"), so the Go and
// assembly paths agree on every GOAMD64 level. The loops advance
// sub-slices whose lengths the loop condition checks, so the compiler drops
// every bounds check in them.

// copyDot sets dst = q and returns xᵀq.
func copyDot(dst, q, x []float64) float64 {
	var s0, s1, s2, s3 float64
	for len(dst) >= 4 && len(q) >= 4 && len(x) >= 4 {
		q0, q1, q2, q3 := q[0], q[1], q[2], q[3]
		dst[0], dst[1], dst[2], dst[3] = q0, q1, q2, q3
		s0 += float64(x[0] * q0)
		s1 += float64(x[1] * q1)
		s2 += float64(x[2] * q2)
		s3 += float64(x[3] * q3)
		dst, q, x = dst[4:], q[4:], x[4:]
	}
	for i := range dst {
		dst[i] = q[i]
		s0 += float64(x[i] * q[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyDot sets r = r + c·u and returns xᵀr (of the updated r). Its assembly
// body is axpyScaleDot's with γ = 1, for which γ·v is exactly v.
func axpyDot(r []float64, c float64, u, x []float64) float64 {
	var s0, s1, s2, s3 float64
	if useAVX2 && len(r) >= 8 {
		var n int
		n, s0, s1, s2, s3 = axpyScaleDotBody(r, c, u, 1, x)
		r, u, x = r[n:], u[n:], x[n:]
	}
	for len(r) >= 4 && len(u) >= 4 && len(x) >= 4 {
		r0 := r[0] + float64(c*u[0])
		r1 := r[1] + float64(c*u[1])
		r2 := r[2] + float64(c*u[2])
		r3 := r[3] + float64(c*u[3])
		r[0], r[1], r[2], r[3] = r0, r1, r2, r3
		s0 += float64(x[0] * r0)
		s1 += float64(x[1] * r1)
		s2 += float64(x[2] * r2)
		s3 += float64(x[3] * r3)
		r, u, x = r[4:], u[4:], x[4:]
	}
	for i := range r {
		r[i] += float64(c * u[i])
		s0 += float64(x[i] * r[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyScaleDot sets r = γ·(r + c·u) and returns xᵀr (of the updated r).
func axpyScaleDot(r []float64, c float64, u []float64, gamma float64, x []float64) float64 {
	var s0, s1, s2, s3 float64
	if useAVX2 && len(r) >= 8 {
		var n int
		n, s0, s1, s2, s3 = axpyScaleDotBody(r, c, u, gamma, x)
		r, u, x = r[n:], u[n:], x[n:]
	}
	for len(r) >= 4 && len(u) >= 4 && len(x) >= 4 {
		r0 := gamma * (r[0] + float64(c*u[0]))
		r1 := gamma * (r[1] + float64(c*u[1]))
		r2 := gamma * (r[2] + float64(c*u[2]))
		r3 := gamma * (r[3] + float64(c*u[3]))
		r[0], r[1], r[2], r[3] = r0, r1, r2, r3
		s0 += float64(x[0] * r0)
		s1 += float64(x[1] * r1)
		s2 += float64(x[2] * r2)
		s3 += float64(x[3] * r3)
		r, u, x = r[4:], u[4:], x[4:]
	}
	for i := range r {
		r[i] = gamma * (r[i] + float64(c*u[i]))
		s0 += float64(x[i] * r[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy sets r = r + c·u.
func axpy(r []float64, c float64, u []float64) {
	u = u[:len(r)]
	for i, ui := range u {
		r[i] += float64(c * ui)
	}
}

// scaleTo sets dst = γ·q.
func scaleTo(dst []float64, gamma float64, q []float64) {
	q = q[:len(dst)]
	for i, v := range q {
		dst[i] = gamma * v
	}
}
