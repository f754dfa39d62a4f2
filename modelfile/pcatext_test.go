package modelfile

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/privbounds"
	"github.com/stabpriv/stabpriv/release"
)

// TestVerifyPCAReadsNumbers: a fit with private principal directions reads
// every column as numbers (privbounds.CentreStepPCA: a text cell stops the
// run), so a file with them whose preprocessing reads text cells as
// missing or hashes a text column is refused, even when every other field
// is the one its published inputs give (rebuilt here, as a forger would),
// in today's words for the centres' step and in the earlier ones. The
// control, the same file rebuilt unedited, verifies.
func TestVerifyPCAReadsNumbers(t *testing.T) {
	older := filepath.Join("..", "cmd", "stabpriv", "testdata", "older", "pca-centres-v2.json")
	for _, c := range []struct {
		name string
		edit func(r *Released)
	}{
		{"unedited", func(*Released) {}},
		{"text read as missing", func(r *Released) { r.Preprocessing.Text = true }},
		{"city hashed", func(r *Released) {
			r.Preprocessing.Text = true
			r.Preprocessing.Categories = []datasets.Categorical{datasets.Hashed("city", len(r.Preprocessing.Categories[0].Values))}
		}},
		{"city hashed, the --pca words", func(r *Released) {
			r.Preprocessing.Text = true
			r.Preprocessing.Categories = []datasets.Categorical{datasets.Hashed("city", len(r.Preprocessing.Categories[0].Values))}
			r.Certificate.Ledger[0].Step = privbounds.CentreStepPCA
		}},
	} {
		r, err := ReadFile(older)
		if err != nil {
			t.Fatal(err)
		}
		c.edit(r)
		r.Preprocessing.Words = r.Preprocessing.Explain()
		m, err := release.LookupVerifier(r.Certificate.Mechanism)
		if err != nil {
			t.Fatal(err)
		}
		forged, err := rebuild(r, m, nil, nil)
		if err != nil {
			t.Fatalf("%s: rebuild: %v", c.name, err)
		}
		v, _, err := Verify(forged)
		switch {
		case c.name == "unedited" && (err != nil || v != NotPrivate):
			t.Errorf("the older file rebuilt: %v, %v; want it verified (not private: seeded noise)", v, err)
		case c.name != "unedited" && (!errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "reads every column as numbers")):
			t.Errorf("%s: %v, %v; want refused, naming that --pca reads every column as numbers", c.name, v, err)
		}
	}
}
