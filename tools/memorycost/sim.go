package main

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"unlearn/bound"
	"unlearn/olbfgs"
)

// sim is projected online L-BFGS with a step schedule on the ridge-logistic
// loss: w ← P_W(w − η(t)·H_Z·∇ℓ(w)), t its own count of inserts, the pair
// (s, y) of the same sample stored if the pair guard of cfg accepts it
// (tested with the margins of olbfgs's guard), the two-loop recursion of
// Nocedal & Wright (Algorithm 7.4) with γ = sᵀy/yᵀy of the newest pair, or
// γ₀ while the memory is empty.
type sim struct {
	cfg    olbfgs.Config
	lambda float64
	sched  bound.Schedule
	w      []float64
	s, y   [][]float64
	count  int
	pushed int
}

func newSim(cfg olbfgs.Config, lambda float64, sched bound.Schedule) *sim {
	return &sim{cfg: cfg, lambda: lambda, sched: sched, w: make([]float64, cfg.Dim)}
}

// grad returns ∇ℓ(w) = −y·σ(−y·xᵀw)·x + λw.
func (m *sim) grad(w, x []float64, y float64) []float64 {
	c := -y / (1 + math.Exp(y*floats.Dot(x, w)))
	g := make([]float64, len(w))
	for i := range g {
		g[i] = c*x[i] + m.lambda*w[i]
	}
	return g
}

// apply returns H_Z·q.
func (m *sim) apply(q []float64) []float64 {
	q = append([]float64(nil), q...)
	n := len(m.s)
	al := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		al[i] = floats.Dot(m.s[i], q) / floats.Dot(m.y[i], m.s[i])
		floats.AddScaled(q, -al[i], m.y[i])
	}
	gamma := m.cfg.InitialScale
	if n > 0 {
		gamma = floats.Dot(m.s[n-1], m.y[n-1]) / floats.Dot(m.y[n-1], m.y[n-1])
	}
	floats.Scale(gamma, q)
	for i := range n {
		b := floats.Dot(m.y[i], q) / floats.Dot(m.y[i], m.s[i])
		floats.AddScaled(q, al[i]-b, m.s[i])
	}
	return q
}

// accept is the pair guard with olbfgs's margins: the exact values of the
// float vectors satisfy PairMin ≤ sᵀy/‖s‖² ≤ PairMax and tan∠(s, y) ≤ r̄.
func (m *sim) accept(s, y []float64) bool {
	ss, sy, yy := floats.Dot(s, s), floats.Dot(s, y), floats.Dot(y, y)
	if !(sy > 0) || !(ss > 0) {
		return false
	}
	d := float64(m.cfg.Dim)
	ma := 4 * (d + 2) * 0x1p-53
	a := sy / ss
	if !(a >= m.cfg.PairMin*(1+ma)) || !(a <= m.cfg.PairMax*(1-ma)) {
		return false
	}
	ratio := (ss * yy) / (sy * sy)
	return ratio-1+ratio*8*(d+2)*0x1p-53 <= m.cfg.PairAngle*m.cfg.PairAngle
}

func (m *sim) step(x []float64, y float64) {
	eta := m.sched.At(m.count)
	m.count++
	g := m.grad(m.w, x, y)
	p := m.apply(g)
	wNew := append([]float64(nil), m.w...)
	for i := range wNew {
		wNew[i] -= float64(eta * p[i])
	}
	if n := floats.Norm(wNew, 2); n > m.cfg.Radius {
		floats.Scale(m.cfg.Radius/n, wNew)
	}
	if m.cfg.Memory > 0 {
		s := append([]float64(nil), wNew...)
		floats.Sub(s, m.w)
		yv := m.grad(wNew, x, y)
		floats.Sub(yv, g)
		if m.accept(s, yv) {
			m.s, m.y = append(m.s, s), append(m.y, yv)
			if len(m.s) > m.cfg.Memory {
				m.s, m.y = m.s[1:], m.y[1:]
			}
			m.pushed++
		}
	}
	m.w = wNew
}
