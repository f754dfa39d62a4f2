//go:build graph

package main

// The Gorgonia engine of --engine graph registers itself with the trainer.
// It is linked only into a stabpriv built with -tags graph: Gorgonia and
// its tensor package (with their protobuf and Arrow dependencies) take a
// third of the command's cold build.
import _ "github.com/stabpriv/stabpriv/graph"

// graphEngine reports whether this build offers --engine graph.
const graphEngine = true
