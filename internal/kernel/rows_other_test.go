//go:build !amd64 || purego

package kernel

func setRowKernels(bool) bool { return false }
