package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResultsDPSGDSections: the tables bench/defaults writes for DP-SGD
// (beside.md, beside_adult.md, dpsgd.md) land in their sections of
// RESULTS, and a section whose table is absent says so (what -keep
// replaces).
func TestResultsDPSGDSections(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "defaults"), 0o755); err != nil {
		t.Fatal(err)
	}
	for file, text := range map[string]string{"beside.md": "BESIDE-TABLE", "beside_adult.md": "ADULT-EPS-TABLE"} {
		if err := os.WriteFile(filepath.Join(root, "defaults", file), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := results([]string{"-paper", root, "-o", out}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]string{}
	for _, s := range sections(string(data)) {
		body[s.heading] = s.body
	}
	for heading, want := range map[string]string{
		"### DP-SGD beside output and objective perturbation (issue 31)": "BESIDE-TABLE",
		"### Accuracy against eps on Adult":                              "ADULT-EPS-TABLE",
		"### The rule's DP-SGD threshold, leave one data set out":        "*Not run: " + filepath.Join(root, "defaults", "dpsgd.md"),
	} {
		if !strings.Contains(body[heading], want) {
			t.Errorf("section %q lacks %q:\n%s", heading, want, body[heading])
		}
	}
}
