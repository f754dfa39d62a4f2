package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
)

// splitStream is the PCG stream of Split, so that a seed shared with other
// seeded steps (training, noise) does not give correlated draws.
const splitStream = 0x5b11_75eed

// Split divides ds at random into a training and a test set, with about
// testFrac of the rows in the test set. The rows are drawn from a PCG
// generator seeded with seed, so a seed gives the same split on every
// platform; within each side the rows keep their original order.
//
// With stratified, the split is done within each class, so both sides keep
// the class proportions: round(testFrac*n) test rows in all, shared among the
// classes in proportion to their sizes (largest remainders). Stratification
// needs class labels (ds.Classes non-nil). Without it, round(testFrac*n)
// rows drawn uniformly go to the test set.
//
// Errors wrap ErrInvalid: testFrac outside (0, 1), stratification of a
// regression data set, or a split that leaves one side empty. ds is not
// modified; the results share nothing with it.
func Split(ds *Dataset, testFrac float64, seed uint64, stratified bool) (train, test *Dataset, err error) {
	if err := ds.Validate(); err != nil {
		return nil, nil, err
	}
	if !check.OpenUnit(testFrac) {
		return nil, nil, fmt.Errorf("%w: test fraction %v, want in (0, 1)", ErrInvalid, testFrac)
	}
	if stratified && ds.Classes == nil {
		return nil, nil, fmt.Errorf("%w: stratified split of a data set without classes (regression)", ErrInvalid)
	}
	n, _ := ds.X.Dims()
	rng := rand.New(rand.NewPCG(seed, splitStream))

	// Groups of row indices: one per class, or one for all rows.
	var groups [][]int
	if stratified {
		byLabel := make(map[float64][]int)
		for i, v := range ds.Y {
			byLabel[v] = append(byLabel[v], i)
		}
		keys := make([]float64, 0, len(byLabel))
		for k := range byLabel {
			keys = append(keys, k)
		}
		sort.Float64s(keys) // map order is random; the split must not be
		for _, k := range keys {
			groups = append(groups, byLabel[k])
		}
	} else {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		groups = [][]int{all}
	}
	quota := testQuotas(groups, testFrac, n)

	var trainIdx, testIdx []int
	for k, g := range groups {
		rng.Shuffle(len(g), func(a, b int) { g[a], g[b] = g[b], g[a] })
		m := quota[k]
		testIdx = append(testIdx, g[:m]...)
		trainIdx = append(trainIdx, g[m:]...)
	}
	if len(trainIdx) == 0 || len(testIdx) == 0 {
		return nil, nil, fmt.Errorf("%w: test fraction %v of %d rows leaves %d training and %d test rows", ErrInvalid, testFrac, n, len(trainIdx), len(testIdx))
	}
	sort.Ints(trainIdx)
	sort.Ints(testIdx)
	return subset(ds, trainIdx), subset(ds, testIdx), nil
}

// SplitIndex divides the row positions 0..n-1 at random into training and
// test positions: round(testFrac*n) positions drawn uniformly go to the test
// side, the rest to training, each side in increasing order. The draw
// depends on (n, testFrac, seed) alone, never on the rows: replacing one
// row of a file replaces at most one training row, so a replace-one
// guarantee for the training rows holds for the file. It is the split of
// Split without stratification, from the same PCG stream.
//
// testFrac = 0 puts every position on the training side (test is empty).
// Errors wrap ErrInvalid: n < 1, testFrac outside [0, 1), or a split that
// leaves the training side empty or, for testFrac > 0, the test side.
func SplitIndex(n int, testFrac float64, seed uint64) (train, test []int, err error) {
	if err := checkSplit(n, testFrac); err != nil {
		return nil, nil, err
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if testFrac == 0 {
		return all, []int{}, nil
	}
	rng := rand.New(rand.NewPCG(seed, splitStream))
	rng.Shuffle(n, func(a, b int) { all[a], all[b] = all[b], all[a] })
	m := int(math.Round(testFrac * float64(n)))
	if m == 0 || m == n {
		return nil, nil, fmt.Errorf("%w: test fraction %v of %d rows leaves %d training and %d test rows", ErrInvalid, testFrac, n, n-m, m)
	}
	test, train = all[:m], all[m:]
	sort.Ints(train)
	sort.Ints(test)
	return train, test, nil
}

// testQuotas returns how many rows of each group go to the test set: the
// total is round(testFrac*n), and each group gets floor(testFrac*n_g) plus one
// for the groups with the largest remainders (ties to the earlier group), so
// the class proportions are kept as closely as integers allow.
func testQuotas(groups [][]int, testFrac float64, n int) []int {
	quota := make([]int, len(groups))
	rem := make([]float64, len(groups))
	left := int(math.Round(testFrac * float64(n)))
	for k, g := range groups {
		exact := testFrac * float64(len(g))
		quota[k] = int(math.Floor(exact))
		rem[k] = exact - float64(quota[k])
		left -= quota[k]
	}
	order := make([]int, len(groups))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for _, k := range order {
		if left <= 0 {
			break
		}
		if quota[k] < len(groups[k]) {
			quota[k]++
			left--
		}
	}
	return quota
}

// checkSplit returns SplitIndex's error about its arguments, if any.
func checkSplit(n int, testFrac float64) error {
	if n < 1 {
		return fmt.Errorf("%w: %d rows to split", ErrInvalid, n)
	}
	if !check.HalfOpenUnit(testFrac) {
		return fmt.Errorf("%w: test fraction %v, want in [0, 1)", ErrInvalid, testFrac)
	}
	return nil
}

// subset returns a deep copy of the rows idx of ds.
func subset(ds *Dataset, idx []int) *Dataset {
	_, d := ds.X.Dims()
	x := mat.NewDense(len(idx), d, nil)
	y := make([]float64, len(idx))
	for r, i := range idx {
		x.SetRow(r, ds.X.RawRowView(i))
		y[r] = ds.Y[i]
	}
	return ds.WithData(x, y)
}

// Split returns the training and test row positions of the rows: by
// position only (SplitIndex), or with stratified within each class of the
// encoded labels (Split's stratified split). A stratified split depends on
// the labels: a private fit never asks for one.
func (e *Encoded) Split(testFrac float64, seed uint64, stratified bool) (train, test []int, err error) {
	if !stratified || testFrac == 0 {
		return SplitIndex(e.N, testFrac, seed)
	}
	ds := &Dataset{X: mat.NewDense(e.N, 1, nil), Y: e.Y, Classes: []string{}}
	for i := range e.N {
		ds.X.Set(i, 0, float64(i))
	}
	tr, te, err := Split(ds, testFrac, seed, true)
	if err != nil {
		return nil, nil, err
	}
	pos := func(d *Dataset) []int {
		out := make([]int, len(d.Y))
		for r := range out {
			out[r] = int(d.X.At(r, 0))
		}
		return out
	}
	return pos(tr), pos(te), nil
}

// SplitInPlace is Split followed by Select of the training rows, then the
// held-out ones: it returns the number of training rows, which are rows
// 0..nTrain-1 of e afterwards (in the order Split gives them), the
// held-out rows after them. With testFrac = 0 every row trains: nothing
// moves and no index of the rows is made. Errors are Split's, before any
// change.
func (e *Encoded) SplitInPlace(testFrac float64, seed uint64, stratified bool) (nTrain int, err error) {
	if testFrac == 0 {
		if err := checkSplit(e.N, testFrac); err != nil {
			return 0, err
		}
		return e.N, nil
	}
	train, test, err := e.Split(testFrac, seed, stratified)
	if err != nil {
		return 0, err
	}
	e.Select(slices.Concat(train, test))
	return len(train), nil
}
