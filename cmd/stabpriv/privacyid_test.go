package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/stability"
)

// idCSV returns a CSV with columns x1, user, x2, class: 25 users with 1 to
// 6 rows each in a seeded order; the rows of user u7 are replaced by
// u7rows when it is not nil.
func idCSV(u7rows []string) string {
	rng := rand.New(rand.NewPCG(8, 1))
	var rows []string
	for u := range 25 {
		for range 1 + rng.IntN(6) {
			c := rng.IntN(2)
			row := fmt.Sprintf("%g,u%d,%g,c%d\n", 3*float64(2*c-1)+rng.NormFloat64(), u, rng.NormFloat64(), c)
			if u == 7 && u7rows != nil {
				continue
			}
			at := rng.IntN(len(rows) + 1)
			rows = append(rows[:at], append([]string{row}, rows[at:]...)...)
		}
	}
	for i, r := range u7rows {
		at := (7 * i) % (len(rows) + 1)
		rows = append(rows[:at], append([]string{r}, rows[at:]...)...)
	}
	return "x1,user,x2,class\n" + strings.Join(rows, "")
}

// TestCLIPrivacyID trains with --privacy-id on two CSV files that differ
// in every row of one user (more rows than c, features beyond the bounds,
// labels both ways, other positions), with the same seeds and published
// noise seed: the released weights differ by at most the certified Delta,
// the rest of the model files is the same, and a secure release certifies.
// Bad input is refused before training, with nothing written.
func TestCLIPrivacyID(t *testing.T) {
	dir := t.TempDir()
	bounds := writeFile(t, "bounds.csv", "x1,-6,6\nx2,-6,6\n")
	var u7 []string
	for i := range 9 {
		u7 = append(u7, fmt.Sprintf("%g,u7,%g,c%d\n", 1e6*float64(1-2*(i%2)), -1e6*float64(1-2*(i%2)), i%2))
	}
	base, other := filepath.Join(dir, "base.csv"), filepath.Join(dir, "other.csv")
	for path, text := range map[string]string{base: idCSV(nil), other: idCSV(u7)} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flags := func(data, out string, extra ...string) []string {
		return append([]string{"train", "--data", data, "--label", "class", "--classes", "c0,c1", "--bounds", bounds,
			"--privacy-id", "user", "--max-rows-per-id", "3", "--mechanism", "gamma", "--lambda", "0.05", "--seed", "4", "--out", out}, extra...)
	}
	fit := func(data, out string, extra ...string) *modelfile.Released {
		t.Helper()
		stdout, stderr, err := call(t, flags(data, out, extra...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if !strings.Contains(stdout, "calibrated to the partitioned bound for all the rows of one privacy ID (c = 3)") {
			t.Errorf("the output does not say which bound the release is calibrated to:\n%s", stdout)
		}
		r, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, parts := range []string{"1", "3"} {
		seeded := []string{"--partitions", parts, "--noise", "seeded", "--noise-seed", "5"}
		r0 := fit(base, filepath.Join(dir, "r0-"+parts+".json"), seeded...)
		r1 := fit(other, filepath.Join(dir, "r1-"+parts+".json"), seeded...)
		c0 := r0.Certificate
		if r0.Partitions == nil || r0.Partitions.IDs != 25 || r0.Partitions.MaxRowsPerID != 3 || c0.Neighbouring != strings.Replace(modelfile.IDNeighbours, "every feature cell a finite number", modelfile.MissingCells, 1) || r0.Split.Rows != 75 || c0.N != r0.Split.TrainRows || c0.N%3 != 0 {
			t.Fatalf("P = %s: partitions %+v, n %d, neighbours %q", parts, r0.Partitions, c0.N, c0.Neighbouring)
		}
		if d := floats.Distance(r0.Model.W, r1.Model.W, 2); d > c0.L2Sensitivity || d == 0 {
			t.Errorf("P = %s: files differing in one user's rows: ||w - w'|| = %v, Delta = %v", parts, d, c0.L2Sensitivity)
		}
		r1.Certificate.WeightsSHA256, r1.Model.W = c0.WeightsSHA256, r0.Model.W
		var b0, b1 strings.Builder
		if err := r0.Write(&b0); err != nil {
			t.Fatal(err)
		}
		if err := r1.Write(&b1); err != nil {
			t.Fatal(err)
		}
		if b0.String() != b1.String() {
			t.Errorf("P = %s: the model files differ beyond the weights", parts)
		}
	}
	secure := filepath.Join(dir, "secure.json")
	fit(base, secure)
	if stdout, _, err := call(t, "certify", secure); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify of a release per privacy ID: %v\n%s", err, stdout)
	}

	empty := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(empty, []byte(strings.Replace(idCSV(nil), ",u3,", ",,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Three IDs of two rows each, all training: 6 rows at c = 2, but 3
	// training IDs, so at most 3 partitions.
	three := filepath.Join(dir, "three.csv")
	if err := os.WriteFile(three, []byte("x1,user,x2,class\n-3,u0,1,c0\n3,u0,0,c1\n-2,u1,0,c0\n2,u1,1,c1\n-3,u2,1,c0\n3,u2,-1,c1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bad.json")
	if _, stderr, err := call(t, flags(three, out, "--max-rows-per-id", "2", "--test-frac", "0", "--partitions", "3")...); err != nil {
		t.Errorf("3 partitions for 3 training IDs: %v\n%s", err, stderr)
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"missing column", flags(base, out, "--privacy-id", "uid"), 2},
		{"empty ID", flags(empty, out), 4},
		{"c = 0", flags(base, out, "--max-rows-per-id", "0"), 2},
		{"c < 0", flags(base, out, "--max-rows-per-id", "-1"), 2},
		{"c without an ID", []string{"train", "--data", base, "--label", "class", "--classes", "c0,c1", "--bounds", bounds, "--max-rows-per-id", "2", "--mechanism", "gamma", "--out", out}, 2},
		{"no bounds", []string{"train", "--data", base, "--label", "class", "--classes", "c0,c1", "--privacy-id", "user", "--max-rows-per-id", "2", "--mechanism", "gamma", "--out", out}, 2},
		{"more partitions than training IDs", flags(three, out, "--max-rows-per-id", "2", "--test-frac", "0", "--partitions", "6"), 2},
		{"more partitions than training IDs, fewer than rows", flags(three, out, "--max-rows-per-id", "2", "--test-frac", "0", "--partitions", "4"), 2},
	} {
		if _, _, err := call(t, tc.args...); exitCode(err) != tc.code || !strings.Contains(fmt.Sprint(err), "rivacy") && !strings.Contains(fmt.Sprint(err), "max-rows") {
			t.Errorf("%s: exit %d (%v), want %d and a message about the privacy ID", tc.name, exitCode(err), err, tc.code)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: a model file was written", tc.name)
		}
	}
}

// TestPrivacyIDForecast: the forecast counts users, not rows: 12 users of
// three rows each at c = 2 expect noise of about 2/3 the weights, a
// warning before training.
func TestPrivacyIDForecast(t *testing.T) {
	var b strings.Builder
	b.WriteString("user,x1,x2,class\n")
	for i := range 36 {
		fmt.Fprintf(&b, "u%d,%g,%g,c%d\n", i/3, float64(i%5)-2, float64(i%7)/7, i%2)
	}
	data := filepath.Join(t.TempDir(), "ids.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"train", "--data", data, "--label", "class", "--classes", "c0,c1", "--mechanism", "gamma", "--bounds-all", "-4,4", "--test-frac", "0.2", "--log-level", "warn"}
	_, stderr, err := call(t, append(args, "--privacy-id", "user", "--max-rows-per-id", "2")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "expected noise (gamma) is 0.667 times") || !strings.Contains(stderr, "privacy IDs (users)") {
		t.Errorf("per privacy ID: no forecast of 12 users at c = 2:\n%s", stderr)
	}
}

// TestCLIPrivacyIDRule trains per privacy ID without --mechanism (the
// public rule): the model file is the one --mechanism gamma with the
// automatic knobs writes, byte for byte with the same published noise
// seed, its lambda is sqrt(c) times the rule's for rows (the output says
// so, and the certificate's lambda is autoknobs.GroupScale(c) = sqrt(c)
// times autoknobs.Choose' at the layout's n = c * training IDs, checked
// as a number: the rule and the named mechanism share the code that
// scales lambda, and so does Verify), and a secure release certifies.
func TestCLIPrivacyIDRule(t *testing.T) {
	dir := t.TempDir()
	bounds := writeFile(t, "bounds.csv", "x1,-6,6\nx2,-6,6\n")
	data := filepath.Join(dir, "ids.csv")
	if err := os.WriteFile(data, []byte(idCSV(nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	fit := func(out string, extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"train", "--data", data, "--label", "class", "--classes", "c0,c1", "--bounds", bounds,
			"--privacy-id", "user", "--max-rows-per-id", "3", "--seed", "4", "--epsilon", "1", "--out", filepath.Join(dir, out)}, extra...)
		stdout, stderr, err := call(t, args...)
		if err != nil {
			t.Fatalf("%q: %v\n%s", args, err, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		return stdout, string(b)
	}
	for _, parts := range []string{"1", "2"} {
		seeded := []string{"--noise", "seeded", "--noise-seed", "5", "--partitions", parts}
		stdout, rule := fit("rule-"+parts+".json", seeded...)
		_, named := fit("named-"+parts+".json", append(seeded, "--mechanism", "gamma")...)
		if rule != named {
			t.Errorf("P = %s: the rule per privacy ID writes another model file than --mechanism gamma with the automatic knobs", parts)
		}
		if !strings.Contains(stdout, "sqrt(c) = 1.732 times the rule's lambda for rows") {
			t.Errorf("P = %s: the output does not state the knob rule per privacy ID:\n%s", parts, stdout)
		}
		// The rule and the named mechanism share the code that scales
		// lambda: check the number itself, sqrt(c) times the rule for
		// rows at the layout's n = c * training IDs.
		r, err := modelfile.Read(strings.NewReader(rule))
		if err != nil {
			t.Fatal(err)
		}
		cert, n := r.Certificate, r.Split.TrainRows
		if cert == nil || cert.Run == nil || r.Partitions == nil || r.Partitions.MaxRowsPerID != 3 || n%3 != 0 || cert.Run.N != n {
			t.Fatalf("P = %s: certificate %v, partitions %+v, n = %d", parts, cert != nil, r.Partitions, n)
		}
		k, err := autoknobs.Choose(n, cert.Run.D, cert.Run.K, perturb.Gamma, dp.Budget{Epsilon: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := autoknobs.GroupScale(3) * k.Lambda
		if math.Abs(cert.Lambda-want) > 1e-12*want || math.Abs(cert.Lambda-math.Sqrt(3)*k.Lambda) > 1e-12*want {
			t.Errorf("P = %s: lambda %v, want sqrt(3) x %v = %v (the rule for rows at n = %d)", parts, cert.Lambda, k.Lambda, want, n)
		}
	}
	fit("secure.json")
	if stdout, _, err := call(t, "certify", filepath.Join(dir, "secure.json")); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify of the rule's release per privacy ID: %v\n%s", err, stdout)
	}
}

// TestPartitionedRouteNote: the certificate's note on the partitioned
// route names the group step (c changed rows along c replace-one steps)
// only for a fit per privacy ID with c > 1, not for rows nor for c = 1,
// and Verify rebuilds the note of each (certify accepts the files).
func TestPartitionedRouteNote(t *testing.T) {
	dir := t.TempDir()
	bounds := writeFile(t, "bounds.csv", "x1,-6,6\nx2,-6,6\n")
	data := filepath.Join(dir, "ids.csv")
	if err := os.WriteFile(data, []byte(idCSV(nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	perID := func(c string) []string {
		return []string{"--data", data, "--label", "class", "--classes", "c0,c1", "--bounds", bounds, "--privacy-id", "user", "--max-rows-per-id", c}
	}
	for _, tc := range []struct {
		name  string
		args  []string
		group bool
	}{
		{"rows", nil, false},
		{"per ID, c = 1", perID("1"), false},
		{"per ID, c = 3", perID("3"), true},
	} {
		out := filepath.Join(dir, strings.NewReplacer(" ", "", ",", "", "=", "").Replace(tc.name)+".json")
		args := append([]string{"train", "--mechanism", "gamma", "--epsilon", "1", "--partitions", "2", "--seed", "3", "--out", out}, tc.args...)
		if _, stderr, err := call(t, args...); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, stderr)
		}
		r, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var note string
		for _, a := range r.Certificate.Assumptions {
			if strings.HasPrefix(a, "sensitivity route partitioned/") {
				note = a
			}
		}
		if !strings.Contains(note, stability.PartitionedCitation) || strings.Contains(note, stability.GroupCitation) != tc.group || strings.Contains(note, "triangle inequality") != tc.group {
			t.Errorf("%s: the route's note %q, want the group step: %v", tc.name, note, tc.group)
		}
		if stdout, _, err := call(t, "certify", out); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
			t.Errorf("%s: certify: %v\n%s", tc.name, err, stdout)
		}
		// The older note (the group step cited for every unit) verifies
		// for units of one row only: for c = 3 it would cite it twice.
		for i, a := range r.Certificate.Assumptions {
			r.Certificate.Assumptions[i] = strings.Replace(a, stability.PartitionedCitation, stability.PartitionedCitation+"; "+stability.GroupCitation, 1)
		}
		if _, _, err := modelfile.Verify(r); (err == nil) == tc.group {
			t.Errorf("%s: the note citing the group step for every unit: Verify %v, want an error: %v", tc.name, err, tc.group)
		}
	}
}
