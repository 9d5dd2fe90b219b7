package geometry

import "math"

type Point struct {
	X, Y float64
}

func Add(a, b Point) Point {
	return Point{a.X + b.X, a.Y + b.Y}
}

func Scale(p Point, k float64) Point {
	return Point{p.X * k, p.Y * k}
}

func Distance(a, b Point) float64 {
	return math.Hypot(a.X-b.X, a.Y-b.Y)
}

// Centroid is the average of the points, or the origin for none.
func Centroid(points []Point) Point {
	var sum Point
	for _, p := range points {
		sum = Add(sum, p)
	}
	if len(points) == 0 {
		return sum
	}
	return Scale(sum, 1/float64(len(points)))
}
