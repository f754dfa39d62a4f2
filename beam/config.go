package stabbeam

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
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
	// All is one public range for every feature column Bounds does not
	// name (--bounds-all); Categories the declared categorical columns,
	// one-hot encoded (--schema). As in datasets.Schema.
	All        *datasets.Bound        `json:"all,omitempty"`
	Categories []datasets.Categorical `json:"categories,omitempty"`

	// Loss names the loss ("" means logistic for 2 classes, softmax for more).
	Loss string `json:"loss,omitempty"`
	// Auto chooses lambda, the clipping norm, l1 ratio 0 and the schedule
	// from (n, d, K, mechanism, budget) alone (autoknobs.Choose); it needs a
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

	// PrivacyID names the privacy-ID column ("": the unit of privacy is a
	// row) and MaxRowsPerID the rows kept per ID (private.Options).
	PrivacyID    string `json:"privacy_id,omitempty"`
	MaxRowsPerID int    `json:"max_rows_per_id,omitempty"`
}

// Options returns the schema, the budget and the options of package private
// for c. Errors name the setting.
func (c Config) Options() (datasets.Schema, dp.Budget, private.Options, error) {
	schema := datasets.Schema{Label: c.Label, Classes: c.Classes, LabelBound: c.LabelBound, Bounds: c.Bounds, All: c.All, Categories: c.Categories}
	var budget dp.Budget
	var opts private.Options
	if c.Mechanism != "" && c.Mechanism != "none" {
		var m dp.Mechanism
		if err := m.UnmarshalText([]byte(c.Mechanism)); err != nil {
			return schema, budget, opts, fmt.Errorf("stabbeam: %w", err)
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
	if c.Preprocess != "" {
		if err := opts.Preprocess.UnmarshalText([]byte(c.Preprocess)); err != nil {
			return schema, budget, opts, fmt.Errorf("stabbeam: %w", err)
		}
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
	if c.Schedule != "" {
		if err := cfg.Schedule.UnmarshalText([]byte(c.Schedule)); err != nil {
			return schema, budget, opts, fmt.Errorf("stabbeam: %w", err)
		}
	}
	if c.Engine != "" {
		if err := cfg.Engine.UnmarshalText([]byte(c.Engine)); err != nil {
			return schema, budget, opts, fmt.Errorf("stabbeam: %w", err)
		}
	}
	opts.Auto, opts.Seed, opts.TestFrac = c.Auto, c.Seed, c.TestFrac
	opts.PrivacyID, opts.MaxRowsPerID = c.PrivacyID, c.MaxRowsPerID
	return schema, budget, opts, nil
}

// NewConfig returns the Config of a partitioned fit with the schema, the
// budget and the options of package private (as the shared flags of
// stabpriv train give them: cmd/runflags) and P partitions. The
// options' noise source must be perturb.Secure (or nil) or perturb.Seeded;
// a logger does not travel. Options that ask for the public rule
// (Options.Select the rule, no mechanism: a budget without --mechanism)
// travel as the mechanism the rule names with the automatic knobs
// (partition.UseRule), so the pipeline releases what `stabpriv train
// --partitions` releases by the rule; a private selection is refused, as
// are a tolerance, a user model, a step function and a stratified split,
// which a partitioned fit refuses too.
func NewConfig(schema datasets.Schema, budget dp.Budget, opts private.Options, partitions int) (Config, error) {
	opts, err := partition.UseRule(schema, budget, opts)
	if err != nil {
		return Config{}, fmt.Errorf("stabbeam: %w", err)
	}
	cfg := opts.Trainer
	c := Config{
		Label: schema.Label, Classes: schema.Classes, LabelBound: schema.LabelBound, Bounds: schema.Bounds, All: schema.All, Categories: schema.Categories,
		Preprocess: string(opts.Preprocess), Auto: opts.Auto,
		Lambda: cfg.Reg.Lambda, L1Ratio: cfg.Reg.L1Ratio, Clip: cfg.Clip, Schedule: cfg.Schedule.String(), Eta: cfg.Eta,
		Passes: cfg.Passes, Batch: cfg.Batch, Dropout: cfg.Dropout, Radius: cfg.Radius, Average: cfg.Average, Engine: cfg.Engine.String(),
		Seed: opts.Seed, TestFrac: opts.TestFrac,
		Mechanism: string(opts.Mechanism), Epsilon: budget.Epsilon, Delta: budget.Delta,
		Partitions: partitions, PrivacyID: opts.PrivacyID, MaxRowsPerID: opts.MaxRowsPerID,
	}
	if cfg.Loss != nil {
		c.Loss = cfg.Loss.Name()
	}
	if cfg.Tolerance != 0 || cfg.Model != nil || cfg.StepFunc != nil || opts.Stratify {
		return c, fmt.Errorf("stabbeam: a tolerance, user model, step function or stratified split does not travel to the workers")
	}
	switch src := opts.Noise; {
	case src == nil || perturb.SourceName(src) == perturb.SourceSecure:
		c.Noise = "secure"
	case perturb.NoiseSeed(src) != nil:
		c.Noise, c.NoiseSeed = "seeded", *perturb.NoiseSeed(src)
	default:
		return c, fmt.Errorf("stabbeam: noise source %q does not travel to the workers: give perturb.Secure or perturb.Seeded", perturb.SourceName(src))
	}
	return c, nil
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
