//go:build amd64 && !purego

package kernel

import "testing"

// TestShrinkDotSSE2 checks the SSE2 kernel also where the processor has AVX.
func TestShrinkDotSSE2(t *testing.T) {
	defer func(v bool) { hasAVX = v }(hasAVX)
	hasAVX = false
	checkShrinkDot(t)
}
