package graph

import (
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/trainer"
)

// classesOf returns the classes argument of benchdata.Synth for cfg.
func classesOf(cfg trainer.Config) int {
	if cfg.Loss != nil && cfg.Loss.Task() == losses.Multiclass {
		return cfg.Classes
	}
	return 0
}

func dot(a, b []float64) float64 {
	var s float64
	for j, v := range a {
		s += v * b[j]
	}
	return s
}
