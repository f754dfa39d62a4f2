package paper

import (
	"slices"

	"github.com/stabpriv/stabpriv/datasets"
)

// registry lists the paper's data sets in the order shown to users. Adding
// a data set is one file (its loader and its DataSet value) and one line
// here, and its sources in package download.
var registry = []*DataSet{
	&adult,
	&lastFM,
	&geneAll,
}

// DataSet is an entry of the registry: what the experiments and the command
// line need to find and load one of the paper's data sets, and the protocol
// settings that belong to it (package download fetches it).
type DataSet struct {
	// Name is the name users give (protocol.Config.Dataset, the
	// --dataset flag): "adult", "lastfm", "gene_all".
	Name string
	// Title describes the data set in one line.
	Title string
	// Dir is the data set's folder under a data directory (the shared
	// folder's layout): "adult", "lastfm_asia", "gene_all".
	Dir string
	// Marker is a file whose presence identifies the data set's folder.
	Marker string
	// Load reads the data set from its folder with the paper's options.
	Load func(dir string) (*datasets.Dataset, error)
	// Lambdas is the default regularization grid of the sweeps, increasing.
	// The sensitivity 2L/(mu n) grows as n shrinks, so smaller data sets
	// need larger lambdas.
	Lambdas []float64
	// Reduced reports that Load already reduces the features (LastFM's
	// truncated SVD, fitted on all nodes as in the paper), so the protocol
	// does not reduce them again on each training split.
	Reduced bool
	// Notes describe what Load does that the outputs of an experiment must
	// state (listed among the protocol notes).
	Notes []string
}

// clone returns a copy of d that shares no slice with the registry.
func (d *DataSet) clone() DataSet {
	c := *d
	c.Lambdas = slices.Clone(d.Lambdas)
	c.Notes = slices.Clone(d.Notes)
	return c
}

// All returns the registered data sets, in registry order (copies: changing
// them changes nothing here).
func All() []DataSet {
	out := make([]DataSet, len(registry))
	for i, d := range registry {
		out[i] = d.clone()
	}
	return out
}

// Names returns the names of the registered data sets, in registry order.
func Names() []string {
	out := make([]string, len(registry))
	for i, d := range registry {
		out[i] = d.Name
	}
	return out
}

// Lookup returns the data set called name.
func Lookup(name string) (DataSet, bool) {
	for _, d := range registry {
		if d.Name == name {
			return d.clone(), true
		}
	}
	return DataSet{}, false
}
