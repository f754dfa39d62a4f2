package main

import (
	"fmt"
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

// TestPairsLossTable: the stricter rule for the pairs keeps them where
// their extra loss share is at most g. Data set a (n 160, p 6: a share
// 0.0313 at eps 0.5) gains from them, b (n 190, p 11: 0.0377) loses, c
// (0.0094 at eps 2) gains a little; a multiclass set is left out. Held out
// a, the others' best g is [0.010, 0.037] (c kept, b dropped), whose lower
// end and middle (0.023) drop a's pairs; held out b, [0.032, 0.100], whose
// lower end keeps b's pairs out and middle (0.066) lets them in.
func TestPairsLossTable(t *testing.T) {
	var rows []map[string]string
	add := func(set, eps string, n, p, classes int, one, cur string) {
		for _, r := range [][2]string{{"one-feature", one}, {"current", cur}} {
			rows = append(rows, map[string]string{"dataset": set, "epsilon": eps, "seed": "1", "class": r[0], "families": fmt.Sprint(r[0] == "current"),
				"accuracy": r[1], "release_epsilon": eps, "n": fmt.Sprint(n), "p": fmt.Sprint(p), "classes": fmt.Sprint(classes)})
		}
	}
	add("a", "0.5", 160, 6, 2, "0.6", "0.9")
	add("b", "0.5", 190, 11, 2, "0.8", "0.7")
	add("c", "2", 190, 11, 2, "0.7", "0.72")
	add("m", "1", 120, 4, 3, "0.6", "0.9")
	if l := pairsLoss(0.5, 160, 6); l < 0.031 || l > 0.032 {
		t.Fatalf("pairsLoss(0.5, 160, 6) = %v, want 2 ln(3.5) / 0.5 / 160 = 0.0313", l)
	}
	got := pairsLossTable(rows)
	for _, want := range []string{
		"| a | [0.010, 0.037] | 0.6000 | 0.6000 | 0.9000 |",
		"| b | [0.032, 0.100] | 0.8000 | 0.7000 | 0.7000 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| m |") {
		t.Errorf("the multiclass set is in the pairs' table:\n%s", got)
	}
}
