//go:build !linux

package safefile

// publishNew publishes tmp at path unless path exists (an error wrapping
// fs.ErrExist then), by a hard link: the portable way to rename without
// replacing.
func publishNew(tmp, path string) error { return linkNew(tmp, path) }
