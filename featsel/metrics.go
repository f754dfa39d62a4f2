package featsel

import "fmt"

// Metrics compares a private selection S with a reference selection R (the
// non-private one), as sets of feature indices:
//
//	Precision = |S∩R| / |S|,  Recall = |S∩R| / |R|,
//	F1 = 2|S∩R| / (|S| + |R|),  Jaccard = |S∩R| / |S∪R|.
//
// Conventions for empty sets: if both are empty the selections agree and
// every metric is 1; if exactly one is empty every metric is 0 (including
// the 0/0 precision of an empty S and recall of an empty R).
type Metrics struct {
	Precision, Recall, F1, Jaccard float64
}

// Compare returns the Metrics of selected against reference. Indices must be
// non-negative and distinct within each slice; the order does not matter.
// Errors wrap ErrInvalid.
func Compare(selected, reference []int) (Metrics, error) {
	s, err := indexSet(selected, "selected")
	if err != nil {
		return Metrics{}, err
	}
	r, err := indexSet(reference, "reference")
	if err != nil {
		return Metrics{}, err
	}
	switch {
	case len(s) == 0 && len(r) == 0:
		return Metrics{Precision: 1, Recall: 1, F1: 1, Jaccard: 1}, nil
	case len(s) == 0 || len(r) == 0:
		return Metrics{}, nil
	}
	tp := 0
	for j := range s {
		if r[j] {
			tp++
		}
	}
	ns, nr := float64(len(s)), float64(len(r))
	tpf := float64(tp)
	return Metrics{
		Precision: tpf / ns,
		Recall:    tpf / nr,
		F1:        2 * tpf / (ns + nr),
		Jaccard:   tpf / (ns + nr - tpf),
	}, nil
}

func indexSet(idx []int, name string) (map[int]bool, error) {
	m := make(map[int]bool, len(idx))
	for _, j := range idx {
		if j < 0 {
			return nil, fmt.Errorf("%w: %s index %d is negative", ErrInvalid, name, j)
		}
		if m[j] {
			return nil, fmt.Errorf("%w: %s index %d repeated", ErrInvalid, name, j)
		}
		m[j] = true
	}
	return m, nil
}
