package glm

import "gonum.org/v1/gonum/floats"

// The vector operations of the objective: gonum's floats, whose bits the
// solver has always had.

func dot(a, b []float64) float64         { return floats.Dot(a, b) }
func axpy(alpha float64, x, y []float64) { floats.AddScaled(y, alpha, x) }
func scale(c float64, x []float64)       { floats.Scale(c, x) }
func add(dst, s []float64)               { floats.Add(dst, s) }
