package main

import "github.com/stabpriv/stabpriv/trainer"

// checkEngine refuses --engine graph in a build that does not link the
// Gorgonia engine (graphEngine), naming the build tag that links it.
func checkEngine(e trainer.Engine) error {
	if e == trainer.Graph && !graphEngine {
		return usagef("--engine graph: this stabpriv is built without the Gorgonia engine; build it with -tags graph")
	}
	return nil
}
