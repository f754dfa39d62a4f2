package stabbeam

import (
	"fmt"
	"math"

	// The Gorgonia engine registers itself with the trainer (--engine graph).
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	_ "github.com/stabpriv/stabpriv/graph"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// Config holds the settings of a partitioned fit in a form that travels to
// the workers (the DoFns carry it, serialized as JSON): every field is a
// plain value. Options converts it to the settings of package private.
type Config struct {
	// Label is the label column; Classes the declared classes (binary: the
	// second is +1), nil for regression; LabelBound B in |y| <= B.
	Label      string   `json:"label"`
	Classes    []string `json:"classes,omitempty"`
	LabelBound float64  `json:"label_bound,omitempty"`
	// Bounds are the public feature bounds; Preprocess is "" (bounds when
	// declared), "bounds" or "none". A data-fitted standardization is not
	// available.
	Bounds     []datasets.Bound `json:"bounds,omitempty"`
	Preprocess string           `json:"preprocess,omitempty"`

	// Loss names the loss ("" means logistic for 2 classes, softmax for more).
	Loss string `json:"loss,omitempty"`
	// Auto chooses lambda, the clipping norm, l1 ratio 0 and the schedule
	// from (n, d, K, mechanism, budget) alone (release.AutoKnobs); it needs a
	// mechanism. Otherwise Lambda, L1Ratio, Clip, Schedule and Eta apply.
	Auto     bool    `json:"auto,omitempty"`
	Lambda   float64 `json:"lambda,omitempty"`
	L1Ratio  float64 `json:"l1_ratio,omitempty"`
	Clip     float64 `json:"clip,omitempty"`
	Schedule string  `json:"schedule,omitempty"` // constant, inverse-t, bounded-inverse-t
	Eta      float64 `json:"eta,omitempty"`
	Passes   int     `json:"passes,omitempty"`
	Batch    int     `json:"batch,omitempty"`
	Dropout  float64 `json:"dropout,omitempty"`
	Radius   float64 `json:"radius,omitempty"`
	Average  bool    `json:"average,omitempty"`
	Engine   string  `json:"engine,omitempty"` // native (default) or graph

	// Seed seeds the partitions, the held-out rows and the trainers;
	// TestFrac is the share of rows held out.
	Seed     uint64  `json:"seed"`
	TestFrac float64 `json:"test_frac,omitempty"`

	// Mechanism ("" or "none": a non-private model), the budget, and the
	// noise source: "secure" (default) or "seeded" from NoiseSeed.
	Mechanism string  `json:"mechanism,omitempty"`
	Epsilon   float64 `json:"epsilon,omitempty"`
	Delta     float64 `json:"delta,omitempty"`
	Noise     string  `json:"noise,omitempty"`
	NoiseSeed uint64  `json:"noise_seed,omitempty"`

	// Partitions is the number of partitions P >= 1.
	Partitions int `json:"partitions"`
}

// Options returns the schema, the budget and the options of package private
// for c. Errors name the setting.
func (c Config) Options() (datasets.Schema, dp.Budget, private.Options, error) {
	schema := datasets.Schema{Label: c.Label, Classes: c.Classes, LabelBound: c.LabelBound, Bounds: c.Bounds}
	var budget dp.Budget
	var opts private.Options
	if c.Mechanism != "" && c.Mechanism != "none" {
		m, err := perturb.ParseMechanism(c.Mechanism)
		if err != nil {
			return schema, budget, opts, fmt.Errorf("stabbeam: mechanism %q, want none, laplace, gamma, gaussian or gaussian-analytic", c.Mechanism)
		}
		opts.Mechanism, budget = m, dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}
		switch c.Noise {
		case "", "secure":
		case "seeded":
			opts.Noise = perturb.Seeded(c.NoiseSeed)
		default:
			return schema, budget, opts, fmt.Errorf("stabbeam: noise %q, want secure or seeded", c.Noise)
		}
	}
	switch c.Preprocess {
	case "":
	case "bounds":
		opts.Preprocess = preprocess.Bounds
	case "none":
		opts.Preprocess = preprocess.None
	default:
		return schema, budget, opts, fmt.Errorf("stabbeam: preprocessing %q, want bounds or none (a data-fitted standardization is refused: standardize the shards in a separate step, outside the guarantee)", c.Preprocess)
	}
	cfg := &opts.Trainer
	if c.Loss != "" {
		l, err := losses.ByName(c.Loss)
		if err != nil {
			return schema, budget, opts, fmt.Errorf("stabbeam: %w", err)
		}
		cfg.Loss = l
	}
	for name, v := range map[string]float64{"lambda": c.Lambda, "l1 ratio": c.L1Ratio, "clip": c.Clip, "step": c.Eta, "dropout": c.Dropout, "radius": c.Radius} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return schema, budget, opts, fmt.Errorf("stabbeam: %s = %v, want finite >= 0", name, v)
		}
	}
	cfg.Reg = regularizers.ElasticNet{Lambda: c.Lambda, L1Ratio: c.L1Ratio}
	cfg.Clip, cfg.Eta, cfg.Passes, cfg.Batch = c.Clip, c.Eta, c.Passes, c.Batch
	cfg.Dropout, cfg.Radius, cfg.Average, cfg.LabelBound = c.Dropout, c.Radius, c.Average, c.LabelBound
	switch c.Schedule {
	case "", "constant":
		cfg.Schedule = trainer.Constant
	case "inverse-t":
		cfg.Schedule = trainer.InverseT
	case "bounded-inverse-t":
		cfg.Schedule = trainer.BoundedInverseT
	default:
		return schema, budget, opts, fmt.Errorf("stabbeam: schedule %q, want constant, inverse-t or bounded-inverse-t", c.Schedule)
	}
	switch c.Engine {
	case "", "native":
		cfg.Engine = trainer.Native
	case "graph":
		cfg.Engine = trainer.Graph
	default:
		return schema, budget, opts, fmt.Errorf("stabbeam: engine %q, want native or graph", c.Engine)
	}
	opts.Auto, opts.Seed, opts.TestFrac = c.Auto, c.Seed, c.TestFrac
	return schema, budget, opts, nil
}

// Plan checks c for tables with the given header and returns the plan of
// package private that every worker runs.
func (c Config) Plan(header []string) (*partition.Plan, error) {
	schema, budget, opts, err := c.Options()
	if err != nil {
		return nil, err
	}
	return partition.NewPlan(header, schema, budget, opts, c.Partitions)
}
