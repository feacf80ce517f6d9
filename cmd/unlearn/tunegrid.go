package main

import (
	"fmt"
	"slices"
)

// gridEdgeWarnings says, for each parameter of tune's grid with more than
// one value, whether the best value is the grid's smallest or largest: the
// best may then lie beyond the grid, and the grid should be extended that
// way (with the flag and a value to add: a third of the smallest, three
// times the largest, the grids' own spacing).
func gridEdgeWarnings(etas, lambdas []float64, best tuneRow) []string {
	var out []string
	for _, g := range []struct {
		flag, name string
		values     []float64
		best       float64
	}{
		{"etas", "η", etas, best.Eta},
		{"lambdas", "λ", lambdas, best.Lambda},
	} {
		vs := slices.Clone(g.values)
		slices.Sort(vs)
		vs = slices.Compact(vs)
		if len(vs) < 2 {
			continue
		}
		switch g.best {
		case vs[0]:
			out = append(out, fmt.Sprintf("the best %s = %g is the smallest of --%s: the best may be smaller; extend the grid downwards (add e.g. %.2g)", g.name, g.best, g.flag, g.best/3))
		case vs[len(vs)-1]:
			out = append(out, fmt.Sprintf("the best %s = %g is the largest of --%s: the best may be larger; extend the grid upwards (add e.g. %.2g)", g.name, g.best, g.flag, g.best*3))
		}
	}
	return out
}
