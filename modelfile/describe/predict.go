package describe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
)

// Unscored explains the rows of t whose label the score left out: for a
// classifier, the labels that are not among the model's classes (how many,
// an example, and a hint when it differs from a class in case or spaces
// only); for a regression, that no label is a number. It is "" when t has
// no label column or every row was scored. stabpriv predict prints it on
// standard error after the score.
func Unscored(r *modelfile.Released, t *datasets.Table, score modelfile.Metric) string {
	col := slices.Index(t.Columns, r.Schema.Label)
	if col < 0 || score.Rows == t.Len() {
		return ""
	}
	classes := r.Schema.Classes
	if classes == nil {
		if score.Rows > 0 {
			return ""
		}
		return fmt.Sprintf("no accuracy: no label in column %q is a number (e.g. %q)", r.Schema.Label, t.Cell(0, col))
	}
	n, example, hint := 0, "", ""
	for i := range t.Len() {
		y := t.Cell(i, col)
		if slices.Contains(classes, y) {
			continue
		}
		n++
		if example == "" && y != "" {
			example = y
		}
		for _, c := range classes {
			if hint == "" && y != c && strings.EqualFold(strings.TrimSpace(y), strings.TrimSpace(c)) {
				hint = fmt.Sprintf("; %q differs from the class %q in case or spaces only", y, c)
			}
		}
	}
	what := fmt.Sprintf("%d of %d rows have a label in column %q that is not one of the model's classes %s (matched exactly: case and spaces count), e.g. %q%s",
		n, t.Len(), r.Schema.Label, strings.Join(classes, ", "), example, hint)
	if score.Rows == 0 {
		return "no accuracy: " + what
	}
	return what + "; they are not scored"
}
