package olbfgs

import "fmt"

// Block operations on the memory: H_Z applied to many vectors at once (the
// probe block of the state-alignment metrics, spec §3), and the stored
// curvature of each pair, so that callers with their own block kernels can
// reproduce Apply bit for bit.

// Curvature returns sᵀy of the i-th stored pair, oldest first
// (0 ≤ i < Len), exactly as Apply divides by it (ρ_i = 1/(s_iᵀy_i) in
// Nocedal & Wright, Algorithm 7.4). Together with Pair and Gamma it is
// everything the two-loop recursion reads from the memory.
func (m *Memory) Curvature(i int) float64 { return m.sy[m.order[i]] }

// ApplyBlock stores H_Z Q in dst for a block Q of cols vectors held
// row-major with row stride ld: coordinate k of vector j is q[k·ld+j]
// (0 ≤ k < d, 0 ≤ j < cols), and so is its result in dst. Entries of a row
// beyond cols are neither read nor written.
//
// Each column is computed with exactly the arithmetic of Apply (same fused
// sweeps, same four interleaved partial sums), so column j of the result is
// bit-identical to Apply of column j. dst may be q; otherwise they must not
// overlap. It panics unless 0 ≤ cols ≤ ld and len(dst), len(q) ≥
// (d−1)·ld+cols. It does not allocate and costs cols times Apply's
// 4·Len·d + d flops; it is not safe for concurrent use on one Memory.
func (m *Memory) ApplyBlock(dst, q []float64, ld, cols int) {
	d := m.d
	if cols < 0 || ld < cols || (cols > 0 && (len(dst) < (d-1)*ld+cols || len(q) < (d-1)*ld+cols)) {
		panic(fmt.Sprintf("olbfgs: Memory.ApplyBlock: len(dst)=%d, len(q)=%d, ld=%d, cols=%d, d=%d", len(dst), len(q), ld, cols, d))
	}
	for j := 0; j < cols; j++ {
		m.applyStrided(dst[j:], q[j:], ld)
	}
}

// applyStrided is Apply on the vectors r[k·ld], q[k·ld], k = 0..d−1.
func (m *Memory) applyStrided(r, q []float64, ld int) {
	d := m.d
	n := len(m.order)
	if n == 0 {
		g := m.gamma0
		for k := 0; k < d; k++ {
			r[k*ld] = g * q[k*ld]
		}
		return
	}
	top := m.order[n-1]
	acc := copyDotStrided(r, q, m.slotS(top), ld)
	for i := n - 1; i > 0; i-- {
		k := m.order[i]
		a := acc / m.sy[k]
		m.alpha[i] = a
		acc = axpyDotStrided(r, -a, m.slotY(k), m.slotS(m.order[i-1]), ld, 1)
	}
	k0 := m.order[0]
	a0 := acc / m.sy[k0]
	m.alpha[0] = a0
	acc = axpyDotStrided(r, -a0, m.slotY(k0), m.slotY(k0), ld, m.Gamma())
	for i := 0; i < n-1; i++ {
		k := m.order[i]
		b := acc / m.sy[k]
		acc = axpyDotStrided(r, m.alpha[i]-b, m.slotS(k), m.slotY(m.order[i+1]), ld, 1)
	}
	b := acc / m.sy[top]
	c, s := m.alpha[n-1]-b, m.slotS(top)
	for k, sk := range s {
		r[k*ld] += float64(c * sk)
	}
}

// copyDotStrided is copyDot on strided r and q.
func copyDotStrided(r, q, x []float64, ld int) float64 {
	n := len(x)
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		q0, q1, q2, q3 := q[i*ld], q[(i+1)*ld], q[(i+2)*ld], q[(i+3)*ld]
		r[i*ld], r[(i+1)*ld], r[(i+2)*ld], r[(i+3)*ld] = q0, q1, q2, q3
		s0 += float64(x[i] * q0)
		s1 += float64(x[i+1] * q1)
		s2 += float64(x[i+2] * q2)
		s3 += float64(x[i+3] * q3)
	}
	for ; i < n; i++ {
		r[i*ld] = q[i*ld]
		s0 += float64(x[i] * q[i*ld])
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyDotStrided is axpyDot (gamma = 1) or axpyScaleDot on a strided r,
// bit-identical to the contiguous kernels: the same operations in the same
// order, each product rounded before it is added (kernels.go).
func axpyDotStrided(r []float64, c float64, u, x []float64, ld int, gamma float64) float64 {
	n := len(u)
	x = x[:n]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		r0 := gamma * (r[i*ld] + float64(c*u[i]))
		r1 := gamma * (r[(i+1)*ld] + float64(c*u[i+1]))
		r2 := gamma * (r[(i+2)*ld] + float64(c*u[i+2]))
		r3 := gamma * (r[(i+3)*ld] + float64(c*u[i+3]))
		r[i*ld], r[(i+1)*ld], r[(i+2)*ld], r[(i+3)*ld] = r0, r1, r2, r3
		s0 += float64(x[i] * r0)
		s1 += float64(x[i+1] * r1)
		s2 += float64(x[i+2] * r2)
		s3 += float64(x[i+3] * r3)
	}
	for ; i < n; i++ {
		v := gamma * (r[i*ld] + float64(c*u[i]))
		r[i*ld] = v
		s0 += float64(x[i] * v)
	}
	return (s0 + s1) + (s2 + s3)
}
