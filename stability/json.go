package stability

import (
	"encoding/json"
	"math"
)

// JSON has no infinities and no NaN. A Route or Report writes a non-finite
// Delta, Beta or Nominal as null, which reads back as +Inf (no bound) for
// Delta and Beta and as NaN (not computable) for Nominal.

type routeJSON struct {
	Route    RouteID  `json:"route"`
	Applies  bool     `json:"applies"`
	Delta    *float64 `json:"delta"`
	Beta     *float64 `json:"beta"`
	Nominal  *float64 `json:"nominal"`
	Formula  string   `json:"formula"`
	Citation string   `json:"citation"`
	Reason   string   `json:"reason,omitempty"`
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

func orElse(p *float64, v float64) float64 {
	if p == nil {
		return v
	}
	return *p
}

// MarshalJSON writes the route with null for a non-finite value.
func (r Route) MarshalJSON() ([]byte, error) {
	return json.Marshal(routeJSON{
		Route: r.Route, Applies: r.Applies,
		Delta: finite(r.Delta), Beta: finite(r.Beta), Nominal: finite(r.Nominal),
		Formula: r.Formula, Citation: r.Citation, Reason: r.Reason,
	})
}

// UnmarshalJSON reads what MarshalJSON writes. Err is rebuilt from Reason
// for a route that does not apply.
func (r *Route) UnmarshalJSON(b []byte) error {
	var v routeJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Route{
		Route: v.Route, Applies: v.Applies,
		Delta: orElse(v.Delta, math.Inf(1)), Beta: orElse(v.Beta, math.Inf(1)), Nominal: orElse(v.Nominal, math.NaN()),
		Formula: v.Formula, Citation: v.Citation, Reason: v.Reason,
	}
	if !r.Applies {
		r.Err = &NotApplicableError{Route: r.Route, Reason: r.Reason}
	}
	return nil
}

type reportJSON struct {
	Routes      []Route   `json:"routes"`
	Chosen      RouteID   `json:"chosen,omitempty"`
	Delta       *float64  `json:"delta"`
	Beta        *float64  `json:"beta"`
	Effective   Effective `json:"effective"`
	Neighbours  string    `json:"neighbours"`
	Assumptions []string  `json:"assumptions"`
}

// MarshalJSON writes the report with null for a non-finite Delta or Beta.
func (r Report) MarshalJSON() ([]byte, error) {
	return json.Marshal(reportJSON{
		Routes: r.Routes, Chosen: r.Chosen, Delta: finite(r.Delta), Beta: finite(r.Beta),
		Effective: r.Effective, Neighbours: r.Neighbours, Assumptions: r.Assumptions,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Report) UnmarshalJSON(b []byte) error {
	var v reportJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Report{
		Routes: v.Routes, Chosen: v.Chosen, Delta: orElse(v.Delta, math.Inf(1)), Beta: orElse(v.Beta, math.Inf(1)),
		Effective: v.Effective, Neighbours: v.Neighbours, Assumptions: v.Assumptions,
	}
	return nil
}
