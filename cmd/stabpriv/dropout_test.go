package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDropoutWarning: with --clip G at most s L, --dropout s does not lower
// Delta, and train says so; with G above s L it lowers Delta, silently.
func TestDropoutWarning(t *testing.T) {
	setProgressAfter(t, quietRun)
	dir := t.TempDir()
	const warn = "dropout s = 0.5 does not lower Delta"
	_, stderr, err := call(t, "train", "--mechanism", "gamma", "--lambda", "0.5", "--clip", "0.1", "--dropout", "0.5", "--out", filepath.Join(dir, "a.json"))
	if err != nil || !strings.Contains(stderr, warn) {
		t.Errorf("--clip 0.1 --dropout 0.5: %v, stderr:\n%s", err, stderr)
	}
	_, stderr, err = call(t, "train", "--mechanism", "gamma", "--lambda", "0.5", "--clip", "0.9", "--dropout", "0.5", "--out", filepath.Join(dir, "b.json"))
	if err != nil || strings.Contains(stderr, "dropout") {
		t.Errorf("--clip 0.9 --dropout 0.5: %v, stderr:\n%s", err, stderr)
	}
}
