package main

import (
	"strings"
	"testing"
)

// TestStumpClassTable: the table's means per data set and budget, the
// mark of a budget whose class held the families, and the
// leave-one-data-set-out choice (the better class over the other data
// sets, the one-feature class on a tie) with the held-out accuracy.
func TestStumpClassTable(t *testing.T) {
	var rows []map[string]string
	add := func(set, class, families, acc string) {
		rows = append(rows, map[string]string{"dataset": set, "epsilon": "1", "seed": "1", "class": class, "families": families, "accuracy": acc})
	}
	add("a", "one-feature", "false", "0.6")
	add("a", "current", "true", "0.9")
	add("b", "one-feature", "false", "0.8")
	add("b", "current", "true", "0.79")
	add("c", "one-feature", "false", "0.7")
	add("c", "current", "false", "0.7")
	got := stumpClassTable(rows)
	for _, want := range []string{
		"| a | 1 | 0.6000 | 0.9000 * |",
		"| c | 1 | 0.7000 | 0.7000 |",
		"| a | one-feature | 0.6000 | 0.9000 |", // the others: 0.75 against 0.745
		"| b | current | 0.7900 | 0.7900 |",     // 0.65 against 0.80
		"| c | current | 0.7000 | 0.7000 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
}
