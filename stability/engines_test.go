package stability_test

// The neighbour tests also train with the graph engine, which package graph
// registers with the trainer when it is linked in.
import _ "github.com/stabpriv/stabpriv/graph"
