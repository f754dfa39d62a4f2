//go:build graph

package main

// The Gorgonia engine of --engine graph registers itself with the trainer,
// in the launcher and in every worker (the same binary). It is linked only
// into a stabpriv-beam built with -tags graph, as in stabpriv.
import _ "github.com/stabpriv/stabpriv/graph"

// graphEngine reports whether this build offers --engine graph.
const graphEngine = true
