//go:build !graph

package main

// graphEngine reports whether this build offers --engine graph: a
// stabpriv-beam built without -tags graph links no Gorgonia
// (engine_graph.go), and refuses --engine graph at launch.
const graphEngine = false
