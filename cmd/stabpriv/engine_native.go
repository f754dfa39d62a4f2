//go:build !graph

package main

// graphEngine reports whether this build offers --engine graph: a stabpriv
// built without -tags graph links no Gorgonia (engine_graph.go).
const graphEngine = false
