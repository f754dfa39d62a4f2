package paper

import (
	"errors"
	"os"
	"slices"
	"testing"
)

func TestRegistryEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All() {
		if d.Name == "" || d.Title == "" || d.Dir == "" || d.Marker == "" || d.Load == nil {
			t.Errorf("%q: incomplete entry %+v", d.Name, d)
		}
		if seen[d.Name] {
			t.Errorf("%q registered twice", d.Name)
		}
		seen[d.Name] = true
		if len(d.Lambdas) == 0 || !slices.IsSorted(d.Lambdas) || d.Lambdas[0] <= 0 {
			t.Errorf("%s: lambdas %v, want increasing and > 0", d.Name, d.Lambdas)
		}
		// A folder without the files is an error, not a panic.
		if _, err := d.Load(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: Load of an empty folder: err = %v, want a missing file", d.Name, err)
		}
		got, ok := Lookup(d.Name)
		if !ok || got.Name != d.Name || got.Marker != d.Marker {
			t.Errorf("Lookup(%q) = %+v, %v", d.Name, got, ok)
		}
	}
	if !slices.Equal(Names(), []string{"adult", "lastfm", "gene_all"}) {
		t.Errorf("Names() = %v", Names())
	}
	if _, ok := Lookup("csv"); ok {
		t.Error("Lookup(csv) found an entry")
	}
}

func TestRegistryCopies(t *testing.T) {
	d, _ := Lookup("adult")
	d.Lambdas[0] = -1
	d.Notes = append(d.Notes, "x")
	if again, _ := Lookup("adult"); again.Lambdas[0] != 1e-4 || len(again.Notes) != 0 {
		t.Errorf("a caller's change reached the registry: %v %v", again.Lambdas, again.Notes)
	}
}
