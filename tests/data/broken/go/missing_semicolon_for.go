package stats

import (
	"errors"
	"math"
	"sort"
)

var ErrEmpty = errors.New("stats: empty sample")

// Summary describes a sample of measurements.
type Summary struct {
	Min, Max, Mean, StdDev, Median float64
}

func Summarize(values []float64) (Summary, error) {
	n := len(values)
	if n == 0 {
		return Summary{}, ErrEmpty
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	sum := 0.0
	for i := 0 i < n; i++ {
		sum += sorted[i]
	}
	mean := sum / float64(n)
	variance := 0.0
	for _, v := range sorted {
		variance += (v - mean) * (v - mean)
	}
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return Summary{sorted[0], sorted[n-1], mean, math.Sqrt(variance / float64(n)), median}, nil
}
