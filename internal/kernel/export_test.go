package kernel

import "testing"

// useGo selects the Go twins in place of every assembly kernel, as on a
// build without them, and returns a function that restores the selection:
//
//	defer useGo()()
func useGo() (restore func()) {
	saved := [...]*bool{&hasAVX, &hasSSE2, &hasRowKernels, &hasBatchKernels,
		&hasFusedKernels, &hasGramKernel, &hasLogisticKernel}
	var old [len(saved)]bool
	for i, p := range saved {
		old[i], *p = *p, false
	}
	return func() {
		for i, p := range saved {
			*p = old[i]
		}
	}
}

// asmAndGo runs check as the subtest "asm" with the kernels this build and
// processor select, if has (the selection of the kernel under test) is
// true, and as "go" with the Go twins (useGo).
func asmAndGo(t *testing.T, has bool, check func(t *testing.T)) {
	t.Helper()
	if has {
		t.Run("asm", check)
	}
	t.Run("go", func(t *testing.T) {
		defer useGo()()
		check(t)
	})
}
