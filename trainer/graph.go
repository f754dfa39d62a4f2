package trainer

import (
	"context"
	"errors"

	"gorgonia.org/gorgonia"
)

// GraphModel is a user-supplied Gorgonia model, the plugin path of the Graph
// engine: a graph holding the trainable parameter nodes, an input node for one
// example, a label node and the scalar per-example loss. Runs on a user model
// are outside the class of models the stability package certifies; the Run
// record says so (UserModel).
type GraphModel struct {
	// Graph is the expression graph that holds every node below.
	Graph *gorgonia.ExprGraph
	// Params are the trainable parameter nodes, with initial values.
	Params []*gorgonia.Node
	// Input is the node of one example, a float64 vector of length d.
	Input *gorgonia.Node
	// Label is the node of its label, a float64 scalar.
	Label *gorgonia.Node
	// Loss is the scalar per-example loss.
	Loss *gorgonia.Node
}

func runGraph(ctx context.Context, p *problem) ([]float64, error) {
	return nil, errors.New("trainer: graph engine not implemented")
}
