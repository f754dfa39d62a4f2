package loo

import (
	"strconv"
	"strings"
	"testing"
)

// TestStumpGrid: each data set held out gets the grid best on the others
// (the smaller on a tie), its held-out accuracy and the current grid's; a
// grid missing on one data set is left out of the table.
func TestStumpGrid(t *testing.T) {
	var rows []map[string]string
	add := func(set string, grid int, acc ...float64) {
		for i, a := range acc {
			rows = append(rows, map[string]string{"dataset": set, "epsilon": "1", "seed": strconv.Itoa(i + 1), "grid": strconv.Itoa(grid), "accuracy": strconv.FormatFloat(a, 'g', -1, 64)})
		}
	}
	// a and b prefer 1023, c prefers 63; 255 only on a and b.
	add("a", 63, 0.5, 0.5)
	add("a", 1023, 0.8, 0.9)
	add("a", 255, 0.99)
	add("b", 63, 0.6)
	add("b", 1023, 0.7)
	add("b", 255, 0.99)
	add("c", 63, 0.9)
	add("c", 1023, 0.85)
	got := StumpGrid(rows, 1023)
	for _, want := range []string{
		"| data | 63 | 1023 | grid fitted without it | held out | at 1023 |",
		"| a | 0.500 | 0.850 | 1023 | 0.850 | 0.850 |", // b and c: 1023 (0.775 against 0.75)
		"| b | 0.600 | 0.700 | 1023 | 0.700 | 0.700 |", // a and c: 1023
		"| c | 0.900 | 0.850 | 1023 | 0.850 | 0.850 |", // a and b: 1023
		"Fitted on every data set: 1023.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	rows = rows[:0]
	add("a", 63, 0.25)
	add("a", 1023, 0.5)
	add("c", 63, 0.75)
	add("c", 1023, 0.5)
	got = StumpGrid(rows, 1023)
	for _, want := range []string{
		"| a | 0.250 | 0.500 | 63 | 0.250 | 0.500 |",
		"| c | 0.750 | 0.500 | 1023 | 0.500 | 0.500 |",
		"Fitted on every data set: 63.", // 0.5 against 0.5: the smaller on a tie
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if got := StumpGrid(nil, 1023); !strings.Contains(got, "No data set") {
		t.Errorf("no rows: %s", got)
	}
}
