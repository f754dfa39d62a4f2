package modelfile

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/stability"
)

// TestVerifyGroupCitationNote checks that a partitioned file written when
// every partitioned route note cited the group step (testdata: the pinned
// gamma-partitioned model of that time, a fit per row) still verifies,
// and that the allowance is for that note alone: the same file with the
// group step cited twice, or with the partitioned argument's words
// changed, does not verify.
func TestVerifyGroupCitationNote(t *testing.T) {
	r, err := ReadFile(filepath.Join("testdata", "partitioned-group-note.json"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := Verify(r); err != nil || v != NotPrivate {
		t.Fatalf("the file with the group step's note: %v, %v; want the seeded verdict", v, err)
	}
	for name, edit := range map[string]func(string) string{
		"the group step twice": func(s string) string {
			return strings.Replace(s, stability.GroupCitation, stability.GroupCitation+"; "+stability.GroupCitation, 1)
		},
		"another argument": func(s string) string {
			return strings.Replace(s, "disjoint partitions", "overlapping partitions", 1)
		},
	} {
		bad, err := ReadFile(filepath.Join("testdata", "partitioned-group-note.json"))
		if err != nil {
			t.Fatal(err)
		}
		edited := false
		for i, note := range bad.Certificate.Assumptions {
			if e := edit(note); e != note {
				bad.Certificate.Assumptions[i], edited = e, true
			}
		}
		if !edited {
			t.Fatalf("%s: no note to edit", name)
		}
		if _, _, err := Verify(bad); !errors.Is(err, ErrVerify) {
			t.Errorf("%s: %v, want ErrVerify", name, err)
		}
	}
}
