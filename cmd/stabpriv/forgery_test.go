package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
)

// genuineKinds are command lines of secure releases of every kind of model
// file that certify verifies as a private release: the forgeries of
// TestCertifyForgeries start from them. "stump", "stump3" and "centres"
// read trainGenuine's tables.
var genuineKinds = map[string][]string{
	"gamma":       {"--mechanism", "gamma"},
	"analytic":    {"--mechanism", "gaussian-analytic", "--delta", "1e-5"},
	"objective":   {"--mechanism", "objective"},
	"partitioned": {"--mechanism", "gamma", "--partitions", "3"},
	"pca":         {"--pca", "2", "--delta", "1e-5"},
	"holdout":     {"--epsilon", "1", "--select", "holdout"},
	"stump":       {"--label", "class", "--classes", "c0,c1", "--mechanism", "stump", "--bounds-all", "-8,8"},
	"stump3":      {"--label", "class", "--classes", "c0,c1,c2", "--mechanism", "stump", "--bounds-all", "-8,8"},
	"centres":     {"--label", "class", "--classes", "c0,c1", "--mechanism", "objective"},
	// The rule's stumps of the larger classes, with nothing but the budget.
	"pair":     {"--label", "form", "--classes", "B,O", "--epsilon", "1"},
	"interval": {"--label", "species", "--classes", "s0,s1,s2", "--epsilon", "1"},
}

// withColumn returns the CSV text with a first column of the given name
// and the same value on every row.
func withColumn(text, name, value string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := range lines {
		v := value
		if i == 0 {
			v = name
		}
		lines[i] = v + "," + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// trainGenuine trains every genuineKinds line with the secure source into
// dir and returns the files by kind, each checked to certify as a private
// release.
func trainGenuine(t *testing.T, dir string) map[string]string {
	t.Helper()
	small := filepath.Join(dir, "small.csv")
	big := filepath.Join(dir, "big.csv")
	// A third, constant column: the binary stump (a one-feature stump or
	// a pair of features) leaves a zero weight for the -0 forgery.
	if err := os.WriteFile(small, []byte(withColumn(clusters(2, 15), "x3", "0")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(clusters(2, 1500)), 0o644); err != nil {
		t.Fatal(err)
	}
	small3 := filepath.Join(dir, "small3.csv")
	if err := os.WriteFile(small3, []byte(clusters(3, 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	tables := map[string]string{"stump": small, "stump3": small3, "centres": big,
		"pair": filepath.Join(dir, "ratio.csv"), "interval": filepath.Join(dir, "species.csv")}
	for name, text := range map[string]string{"pair": ratioTable(200), "interval": speciesTable(150)} {
		if err := os.WriteFile(tables[name], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := make(map[string]string)
	for kind, args := range genuineKinds {
		out := filepath.Join(dir, kind+".json")
		full := append([]string{"train", "--seed", "3", "--out", out}, args...)
		if data, ok := tables[kind]; ok {
			full = append(full, "--data", data)
		}
		if _, stderr, err := call(t, full...); err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, stderr)
		}
		if stdout, _, err := call(t, "certify", out); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
			t.Fatalf("the genuine %s file: %v\n%s", kind, err, stdout)
		}
		files[kind] = out
	}
	return files
}

// rehash binds the certificate to the (edited) weights and principal
// directions again, as a forger would.
func rehash(r *modelfile.Released) {
	r.Certificate.WeightsSHA256 = dp.WeightsSHA256(r.Model.W)
	if p := r.Preprocessing.PCA; p != nil {
		r.Certificate.ComponentsSHA256 = p.SHA256()
	}
}

// firstWeight returns the model file s with the text of its first weight
// replaced by repl.
func firstWeight(t *testing.T, s, repl string) string {
	t.Helper()
	i := strings.Index(s, `"w": [`)
	if i < 0 {
		t.Fatal("no weights in the file")
	}
	start := i + len(`"w": [`)
	start += len(s[start:]) - len(strings.TrimLeft(s[start:], " \n"))
	end := start + strings.IndexAny(s[start:], ",\n]")
	return s[:start] + repl + s[end:]
}

// negZero is -0.
var negZero = math.Copysign(0, -1)

// TestCertifyForgeries runs certify on forged model files of every kind:
// each must be refused (exit 5) with the reason named. A forgery either
// edits the values (read, changed, written back in the canonical form with
// the hashes recomputed, so that certify's checks of the values are what it
// meets) or the text (the same values in other bytes, which Read refuses:
// they could carry what no check of the values sees). None of them is a
// possible output of the mechanism the file names.
func TestCertifyForgeries(t *testing.T) {
	dir := t.TempDir()
	files := trainGenuine(t, dir)
	type forgery struct {
		kind, name string
		values     func(r *modelfile.Released) // edits the values, hashes recomputed (but "without their hash")
		text       func(s string) string       // or edits the text
		want       string
	}
	every := func(kind string) (out []forgery) {
		return []forgery{
			{kind, "a charge of the ledger one ulp higher", func(r *modelfile.Released) {
				l := r.Certificate.Ledger
				l[len(l)-1].Epsilon = math.Nextafter(l[len(l)-1].Epsilon, 2)
			}, nil, "ledger"},
			{kind, "the mechanism renamed", func(r *modelfile.Released) { r.Certificate.Mechanism = "laplace" }, nil, ""},
			{kind, "eps 1e300", func(r *modelfile.Released) { r.Certificate.Epsilon = 1e300 }, nil, "above 100"},
			{kind, "delta at 1/n", func(r *modelfile.Released) { r.Certificate.Delta = 1 / float64(r.Split.TrainRows) * (1 + 1e-15) }, nil, "1/n"},
			{kind, "a weight -0", func(r *modelfile.Released) { r.Model.W[0] = negZero }, nil, "-0"},
			{kind, "the weights without their hash", func(r *modelfile.Released) { r.Model.W[1] = math.Nextafter(r.Model.W[1], 10) }, nil, "SHA-256"},
			{kind, "a weight written -0.0", nil, func(s string) string { return firstWeight(t, s, "-0.0") }, "not in the form"},
			{kind, "a weight written +0", nil, func(s string) string { return firstWeight(t, s, "+0") }, "not a stabpriv model file"},
			{kind, "a number with a trailing zero", nil, func(s string) string { return strings.Replace(s, `"epsilon": 1,`, `"epsilon": 1.0,`, 1) }, "not in the form"},
			{kind, "a number in exponent form", nil, func(s string) string { return strings.Replace(s, `"epsilon": 1,`, `"epsilon": 1e0,`, 1) }, "not in the form"},
			{kind, "a unicode escape in a string", nil, func(s string) string {
				return strings.Replace(s, `"version": "stabpriv`, `"version": "\u0073tabpriv`, 1)
			}, "not in the form"},
			{kind, "a unicode escape in the label's name", nil, func(s string) string {
				i := strings.Index(s, `"label": "`) + len(`"label": "`)
				return s[:i] + fmt.Sprintf(`\u%04x`, s[i]) + s[i+1:]
			}, "not in the form"},
			{kind, "a key twice", nil, func(s string) string {
				return strings.Replace(s, `"private": true,`, `"private": true, "private": true,`, 1)
			}, "not in the form"},
			{kind, "keys reordered", nil, func(s string) string {
				return strings.Replace(s, "\"format\": \"stabpriv-model/2\",\n  \"private\": true,", "\"private\": true,\n  \"format\": \"stabpriv-model/2\",", 1)
			}, "not a stabpriv model file"},
			{kind, "an extra field", nil, func(s string) string {
				return strings.Replace(s, `"private": true,`, `"private": true, "row_17": 14.2,`, 1)
			}, "unknown field"},
			{kind, "a tab for spaces", nil, func(s string) string { return strings.Replace(s, "\n  ", "\n\t", 1) }, "not a stabpriv model file"},
			{kind, "CRLF line ends", nil, func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }, "not a stabpriv model file"},
			{kind, "a byte order mark", nil, func(s string) string { return "\ufeff" + s }, "not a stabpriv model file"},
			{kind, "data after the document", nil, func(s string) string { return s + "{}\n" }, "not in the form"},
		}
	}
	var forgeries []forgery
	for _, kind := range []string{"gamma", "stump", "stump3", "pair", "interval", "objective", "partitioned"} {
		forgeries = append(forgeries, every(kind)...)
	}
	forgeries = append(forgeries,
		// Stumps: the class is finite, so bits are all the mechanism chose.
		forgery{"stump", "every zero weight -0 (a bit each)", func(r *modelfile.Released) {
			for i, v := range r.Model.W {
				if v == 0 {
					r.Model.W[i] = negZero
				}
			}
		}, nil, "-0"},
		forgery{"stump", "the bias off the grid by an ulp", func(r *modelfile.Released) {
			w := r.Model.W
			w[len(w)-1] = math.Nextafter(w[len(w)-1], 2)
		}, nil, "grid"},
		forgery{"stump", "two feature weights", func(r *modelfile.Released) { r.Model.W[0], r.Model.W[1] = 1, 1 }, nil, "one feature weight"},
		forgery{"stump", "a feature weight 0.5", func(r *modelfile.Released) {
			for i, v := range r.Model.W[:len(r.Model.W)-1] {
				if v != 0 {
					r.Model.W[i] = v / 2
				}
			}
		}, nil, "stump"},
		// Multiclass stumps (3 outputs of 3 inputs [z1, z2, 1]): every
		// output's bits are the mechanism's too.
		forgery{"stump3", "every zero weight -0", func(r *modelfile.Released) {
			for i, v := range r.Model.W {
				if v == 0 {
					r.Model.W[i] = negZero
				}
			}
		}, nil, "-0"},
		forgery{"stump3", "the third output's bias -1 moved to -0.5", func(r *modelfile.Released) {
			for c := range 3 {
				if w := r.Model.W[3*c : 3*c+3]; w[0] == 0 && w[1] == 0 {
					w[2] = -0.5
				}
			}
		}, nil, "stump"},
		forgery{"stump3", "the low class's row not the negation of the high one's", func(r *modelfile.Released) {
			for c := range 3 {
				if w := r.Model.W[3*c : 3*c+3]; w[0] == -1 || w[1] == -1 {
					w[2] = math.Nextafter(w[2], 2)
				}
			}
		}, nil, "stump"},
		forgery{"stump3", "a second feature weight", func(r *modelfile.Released) {
			for c := range 3 {
				if w := r.Model.W[3*c : 3*c+3]; w[0] == 1 || w[1] == 1 {
					w[0], w[1] = 1, 1
				}
			}
		}, nil, "stump"},
		forgery{"stump3", "the threshold off the grid in both rows", func(r *modelfile.Released) {
			for c := range 3 {
				if w := r.Model.W[3*c : 3*c+3]; w[0] != 0 || w[1] != 0 {
					w[2] += 0.001 * (w[0] + w[1])
				}
			}
		}, nil, "grid"},
		// The larger classes (pairs: 4 weights [width, depth, noise, 1];
		// intervals: 3 outputs of [petal, noise, 1]): weights outside
		// them, or the certificate's class words edited.
		forgery{"pair", "a pair's weights +1 and +1", func(r *modelfile.Released) { r.Model.W = []float64{1, 1, 0, 0} }, nil, "feature weights 1 and 1: a pair has +s and -s"},
		forgery{"pair", "three feature weights", func(r *modelfile.Released) { r.Model.W = []float64{1, -1, 1, 0} }, nil, "3 nonzero feature weights"},
		forgery{"pair", "a pair's bias off the grid by an ulp", func(r *modelfile.Released) {
			r.Model.W = []float64{1, 0, -1, math.Nextafter(-0.5, 0)}
		}, nil, "grid"},
		forgery{"pair", "a pair's zero weight -0", func(r *modelfile.Released) { r.Model.W = []float64{-1, negZero, 1, 0.5} }, nil, "-0"},
		forgery{"pair", "the pairs' number of features edited in the class", func(r *modelfile.Released) {
			editClass(t, r, "pairs for 2 to 32 features", "pairs for 2 to 64 features")
		}, nil, "not_covered"},
		forgery{"interval", "the interval's thresholds equal", func(r *modelfile.Released) {
			r.Model.W = []float64{0, 0, 0, -1, 0, 0.5, 1, 0, -0.5}
		}, nil, "not increasing"},
		forgery{"interval", "the middle class's output -1 on the bias", func(r *modelfile.Released) {
			r.Model.W = []float64{0, 0, -1, -1, 0, -0.5, 1, 0, -0.5}
		}, nil, "as a stump writes it"},
		forgery{"interval", "the middle class's output a feature weight", func(r *modelfile.Released) {
			r.Model.W = []float64{0, 1, 0, -1, 0, -0.5, 1, 0, -0.5}
		}, nil, "no other output has -1"},
		forgery{"interval", "the low class's output on another feature", func(r *modelfile.Released) {
			r.Model.W = []float64{0, 0, 0, 0, -1, -0.5, 1, 0, -0.5}
		}, nil, "stump"},
		forgery{"interval", "the upper threshold off the grid by an ulp", func(r *modelfile.Released) {
			r.Model.W = []float64{0, 0, 0, -1, 0, -0.5, 1, 0, math.Nextafter(-0.5, 0)}
		}, nil, "grid"},
		forgery{"interval", "an interval under the class words without the intervals", func(r *modelfile.Released) {
			r.Model.W = []float64{0, 0, 0, -1, 0, -0.5, 1, 0, -0.5}
			for i, a := range r.Certificate.Assumptions {
				if before, _, ok := strings.Cut(a, "; and (version 2: intervals)"); ok {
					r.Certificate.Assumptions[i] = before
					return
				}
			}
			t.Fatal("the interval file's certificate names no intervals")
		}, nil, "stump"},
		// Noisy releases: off the sampler's lattice, or far beyond the noise.
		forgery{"gamma", "a weight off the lattice", func(r *modelfile.Released) { r.Model.W[2] = math.Nextafter(r.Model.W[2], 10) }, nil, "lattice"},
		forgery{"objective", "the weights a million times larger", func(r *modelfile.Released) {
			for i := range r.Model.W {
				r.Model.W[i] *= 1e6
			}
		}, nil, "exceeds"},
		forgery{"analytic", "delta raised to 0.5", func(r *modelfile.Released) { r.Certificate.Delta = 0.5 }, nil, "1/n"},
		forgery{"analytic", "the ledger's delta split over the claim", func(r *modelfile.Released) {
			r.Certificate.Ledger = append(r.Certificate.Ledger, dp.Charge{Step: "row 17", Mechanism: "laplace", Delta: 1e-9})
		}, nil, "ledger"},
		forgery{"gamma", "a delta on a pure mechanism", func(r *modelfile.Released) { r.Certificate.Delta = 1e-9 }, nil, ""},
		forgery{"gamma", "the neighbouring relation rewritten", func(r *modelfile.Released) { r.Certificate.Neighbouring = "add-remove" }, nil, "neighbouring"},
		forgery{"gamma", "a note replaced", func(r *modelfile.Released) { r.Certificate.Assumptions[0] = "row 17 = 14.2" }, nil, "not_covered"},
		forgery{"gamma", "n raised", func(r *modelfile.Released) { r.Certificate.Run.N++ }, nil, "n ="},
		forgery{"gamma", "the split's seed", func(r *modelfile.Released) { r.Split.Seed++ }, nil, "seed"},
		forgery{"gamma", "the source seeded without a seed", func(r *modelfile.Released) { r.Certificate.Source = "seeded" }, nil, ""},
		forgery{"objective", "the objective part of eps edited", func(r *modelfile.Released) { r.Certificate.Ledger[0].Epsilon *= 0.9 }, nil, "ledger"},
		forgery{"partitioned", "a partition's size", func(r *modelfile.Released) { r.Partitions.Sizes[0]++; r.Partitions.Sizes[1]-- }, nil, "sizes"},
		forgery{"partitioned", "a shard's rows", func(r *modelfile.Released) { r.Partitions.Shards[0].Rows++ }, nil, "rows"},
		forgery{"pca", "a principal direction's entries moved", func(r *modelfile.Released) {
			// Its norm 1 + 1e-6, beyond the orthonormality's tolerance
			// whatever the entries (moving one entry by a relative 1e-6
			// stays within it when the entry is near 0).
			for i := range r.Preprocessing.PCA.V[0] {
				r.Preprocessing.PCA.V[0][i] *= 1 + 1e-6
			}
		}, nil, ""},
		forgery{"pca", "the directions' charge edited", func(r *modelfile.Released) { r.Certificate.Ledger[0].Delta *= 2 }, nil, ""},
		forgery{"pca", "the directions without their hash", func(r *modelfile.Released) {
			v := r.Preprocessing.PCA.V
			v[0], v[1] = v[1], v[0]
		}, nil, "components_sha256"},
		forgery{"holdout", "the selection's record edited", func(r *modelfile.Released) { r.Selection.ValRows++ }, nil, "selection"},
		forgery{"centres", "an estimated centre off the grid", func(r *modelfile.Released) {
			// One ulp: no centre and power-of-two spread of the grid gives
			// it, whatever the draw (a shift by 0.5 lands on the grid when
			// the parts are 0.5 wide).
			p := r.Preprocessing
			p.Lo[0] = math.Nextafter(p.Lo[0], math.Inf(1))
			r.Certificate.EstimatedBounds[0].Lo, r.Certificate.EstimatedBounds[0].Hi = p.Lo[0], p.Hi[0]
		}, nil, "grid"},
		forgery{"centres", "the bounds' charge one ulp higher", func(r *modelfile.Released) {
			r.Certificate.Ledger[0].Epsilon = math.Nextafter(r.Certificate.Ledger[0].Epsilon, 2)
		}, nil, ""},
	)
	if len(forgeries) < 30 {
		t.Fatalf("%d forgeries", len(forgeries))
	}
	for _, f := range forgeries {
		orig, err := os.ReadFile(files[f.kind])
		if err != nil {
			t.Fatal(err)
		}
		var forged []byte
		if f.values != nil {
			r, err := modelfile.Read(bytes.NewReader(orig))
			if err != nil {
				t.Fatal(err)
			}
			f.values(r)
			if !strings.Contains(f.name, "without their hash") {
				rehash(r)
			}
			var b bytes.Buffer
			if err := r.Write(&b); err != nil {
				t.Fatalf("%s, %s: %v", f.kind, f.name, err)
			}
			forged = b.Bytes()
		} else {
			forged = []byte(f.text(string(orig)))
		}
		if bytes.Equal(forged, orig) {
			t.Fatalf("%s, %s: the forgery changed nothing", f.kind, f.name)
		}
		path := filepath.Join(dir, "forged.json")
		if err := os.WriteFile(path, forged, 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, _, err := call(t, "certify", path)
		if code := exitCode(err); code != 5 || !strings.Contains(err.Error(), f.want) {
			t.Errorf("%s, %s: certify exit %d (%v), want 5 naming %q\n%.200s", f.kind, f.name, code, err, f.want, stdout)
		}
	}
}

// editClass replaces old by repl in the certificate's sentence on the
// stump's class (the assumption that names "the class is public").
func editClass(t *testing.T, r *modelfile.Released, old, repl string) {
	t.Helper()
	for i, a := range r.Certificate.Assumptions {
		if strings.HasPrefix(a, "the class is public") && strings.Contains(a, old) {
			r.Certificate.Assumptions[i] = strings.Replace(a, old, repl, 1)
			return
		}
	}
	t.Fatalf("no class sentence with %q", old)
}

// TestGenuineFilesVerify certifies every model file a genuine run wrote
// that the repository keeps: the pinned files, the older format's and
// modelfile's golden files. None is refused: each is a private release
// (exit 0) or, seeded or without a mechanism, a valid file without a
// claim (exit 3).
func TestGenuineFilesVerify(t *testing.T) {
	var files []string
	for _, pattern := range []string{"testdata/pinned/*.json", "testdata/older/*.json", "../../modelfile/testdata/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < len(pinnedRuns)+3 {
		t.Fatalf("only %d files: %v", len(files), files)
	}
	for _, f := range files {
		stdout, _, err := call(t, "certify", f)
		if code := exitCode(err); code != 0 && code != 3 {
			t.Errorf("%s: exit %d (%v)\n%.300s", f, code, err, stdout)
		}
	}
}
