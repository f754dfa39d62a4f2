package stability

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

// RouteID names a sensitivity route of docs/DESIGN.md, section 3. Every route
// is one file, route_<name>.go, that declares its RouteID constant, its
// closed-form bound, its conditions and its evaluation on a run, and one line
// of routeTable.
type RouteID int

// route is one entry of the route table.
type route struct {
	// ID is the route's RouteID; the table holds the IDs 1, 2, ... in order.
	ID RouteID
	// Name is the route's name in reports and certificates (RouteID.String).
	Name string
	// Citation names the result the route rests on (Route.Citation).
	Citation string
	// Formula states the bound (Route.Formula); Evaluate may add to it.
	Formula string
	// Assumptions are added to a report that chooses the route, before the
	// rounding allowance that every route shares.
	Assumptions []string
	// Evaluate evaluates the route on a validated run. It receives the
	// route's entry with ID, Citation and Formula set, Delta = Beta = +Inf
	// and Nominal = NaN, and returns it with c.ok (the route applies) or
	// c.fail (the reason it does not). A reason names settings only.
	Evaluate func(c *checked, e *Route) Route
}

// routeTable lists every route in the order of docs/DESIGN.md, section 3.
// Analyze evaluates them in this order and a Report lists them so.
var routeTable = []route{
	ermRoute,
	theorem7Route,
	convexSGDRoute,
	stronglyConvexSGDRoute,
}

// Routes lists every route in the order of docs/DESIGN.md, section 3.
var Routes = func() []RouteID {
	ids := make([]RouteID, len(routeTable))
	for i, d := range routeTable {
		ids[i] = d.ID
	}
	return ids
}()

// routeOf returns the table entry of id, or nil.
func routeOf(id RouteID) *route {
	for i := range routeTable {
		if routeTable[i].ID == id {
			return &routeTable[i]
		}
	}
	return nil
}

// String returns the route name used in reports and certificates.
func (r RouteID) String() string {
	if d := routeOf(r); d != nil {
		return d.Name
	}
	return fmt.Sprintf("Route(%d)", int(r))
}

// MarshalText returns the route name, so that JSON shows names, not numbers.
func (r RouteID) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a route name written by MarshalText.
func (r *RouteID) UnmarshalText(b []byte) error {
	for _, id := range Routes {
		if id.String() == string(b) {
			*r = id
			return nil
		}
	}
	return invalid("unknown route %q", b)
}

// evaluate returns the route's entry in a Report for the run c.
func (d *route) evaluate(c *checked) Route {
	e := Route{Route: d.ID, Citation: d.Citation, Formula: d.Formula, Delta: math.Inf(1), Beta: math.Inf(1), Nominal: math.NaN()}
	return d.Evaluate(c, &e)
}

// checkNonNeg returns an error wrapping ErrInvalid unless every value is
// finite and >= 0.
func checkNonNeg(names []string, vals ...float64) error {
	for i, v := range vals {
		if !check.NonNegative(v) {
			return invalid("%s = %v, want finite >= 0", names[i], v)
		}
	}
	return nil
}

// MinScale is the smallest sensitivity bound, and the smallest effective
// Lipschitz constant (the clipping norm), that Analyze accepts: 2^-800,
// far above the subnormal range (below 2^-1022), where float64 rounding is
// absolute and RoundingSlack does not cover it.
const MinScale = 0x1p-800

// RoundingSlack is the relative slack by which Analyze multiplies the
// exact-arithmetic bound of every route: a route's Delta is
// (1 + RoundingSlack) times the value of its formula (the closed-form
// functions of this file return the exact-arithmetic values). Neighbouring
// runs are computed in float64, and where a bound is attained (the smoothed
// hinge in its linear part with the differing example at the row bound, for
// the SGD routes and for the exact minimizer alike) the realized distance
// exceeded the exact-arithmetic value by up to about 1e-15 relative on the
// SGD routes in the neighbour tests (and by 1e-14 on route 1 under the
// former tolerance rule). 1e-9 covers that
// with a wide margin at the sizes those tests measure (n up to a few hundred,
// up to a few hundred steps); it is an allowance for float64 rounding, not a
// worst-case floating-point bound, which, like the rounding of the noise
// sampler, lies outside the exact-arithmetic claim.
const RoundingSlack = 1e-9
