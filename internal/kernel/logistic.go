package kernel

// LogisticParts computes, for the rows i < done of margins z and labels y
// = -1 or +1, the parts of the logistic loss that objpert's solver reads,
// as losses.Logistic's Parts1 defines them (with its bits for those
// labels): with m = (-y)*z and e = math.Exp(-|m|) (math.Exp's bits), q =
// 1 + e, plus = m if m >= 0 and 0 otherwise, d1 = (-y)*(1/q) if m >= 0
// and (-y)*(e/q) otherwise, s = e/q if z < 0 and 1/q otherwise, and d2 =
// s*(1 - s). It returns done, a multiple of 4 (0 where the kernel is not
// available: without AVX, AVX2 and FMA, or with the purego tag). Rows i <
// done with |z[i]| >= 708 or NaN are computed only in part (math.Exp's
// range reduction leaves the normal numbers there) and must be computed
// again by the caller, as must the rows from done on; with other labels
// the rows to compute again are those with |m| >= 708. The outputs need
// len(z) elements, y as many, on every build (it panics otherwise).
func LogisticParts(z, y, plus, e, d1, d2 []float64) (done int) {
	m := len(z)
	y, plus, e, d1, d2 = prefix(y, m), prefix(plus, m), prefix(e, m), prefix(d1, m), prefix(d2, m)
	n := m &^ 3
	if !hasLogisticKernel || n == 0 {
		return 0
	}
	logisticParts4(&z[0], &y[0], &plus[0], &e[0], &d1[0], &d2[0], n/4)
	return n
}

// LogisticFastRange is the bound on |z| below which LogisticParts's rows
// are complete.
const LogisticFastRange = 708

// logisticKernel is the processor's choice of the assembly kernel.
var logisticKernel = hasLogisticKernel

// SetLogisticKernel selects LogisticParts's assembly kernel (on, where the
// processor has it) or none and returns the previous choice: a hook for the
// tests of package objpert.
func SetLogisticKernel(on bool) bool {
	old := hasLogisticKernel
	hasLogisticKernel = on && logisticKernel
	return old
}
