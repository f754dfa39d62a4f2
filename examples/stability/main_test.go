package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/examples/internal/linecount"
)

// TestStability checks that the sweep on the matrix reports every eps, the
// frontier of both knobs, and a private accuracy at eps = 2 well above the
// majority class.
func TestStability(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"my data, 2 splits", "winning settings", "frontier, gamma", "eps  lambda    clip   batch     all"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	i := strings.Index(s, "\n               2  ")
	var acc float64
	if i < 0 {
		t.Fatalf("no row for eps = 2:\n%s", s)
	}
	if _, err := fmt.Sscan(s[i+len("\n               2  "):], &acc); err != nil || acc < 0.8 {
		t.Errorf("best private accuracy at eps = 2: %v (%v), want >= 0.8 (the majority class is about 0.5)", acc, err)
	}
}

// TestLines holds the example to the line count its comment states, and to
// the target of at most 20 lines.
func TestLines(t *testing.T) {
	if n, err := linecount.Count("main.go"); err != nil || n != 18 {
		t.Errorf("%d lines of user code (%v), the comment says 18 (at most 20)", n, err)
	}
}
