package modelfile

import "testing"

// SetMaxFileBytes lowers the byte cap of model files (MaxFileBytes) for
// the test t.
func SetMaxFileBytes(t testing.TB, n int64) {
	old := maxFileBytes
	maxFileBytes = n
	t.Cleanup(func() { maxFileBytes = old })
}
