package floatbits

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEqual(t *testing.T) {
	nan := math.NaN()
	assert.True(t, Equal(nil, []float64{}))
	assert.True(t, Equal([]float64{1, nan, math.Inf(-1)}, []float64{1, nan, math.Inf(-1)}))
	assert.False(t, Equal([]float64{0}, []float64{math.Copysign(0, -1)}), "0 and −0 differ in bits")
	assert.False(t, Equal([]float64{1, 2}, []float64{1}))
	assert.False(t, Equal([]float64{1, 2}, []float64{1, math.Nextafter(2, 3)}))
}
