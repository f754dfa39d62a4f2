package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
)

// python is the interpreter of the diffprivlib side (Debian's, with its
// scikit-learn, SciPy and NumPy).
const python = "/usr/bin/python3"

// runDiffprivlib writes diffprivlib.csv: IBM diffprivlib's default,
// LogisticRegression(epsilon=E) and nothing else, on the same rows and
// splits as the defaults table (bench/diffprivlib_side.py, task defaults),
// for every data set, pure eps of the table and seed. src is the directory
// of a diffprivlib source checkout ($DIFFPRIVLIB); script is the side
// script. The rows are the data set's columns as train reads them before
// its feature map (numbers as they are, a declared categorical column
// one-hot), the ones a user would give diffprivlib.
func runDiffprivlib(ctx context.Context, dss []dataSet, out, src, script string, seeds int) error {
	dir := filepath.Join(out, "diffprivlib")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var sets []string
	for _, ds := range dss {
		if err := writeRows(ds, filepath.Join(dir, ds.name), seeds); errors.Is(err, datasets.ErrFormat) {
			// A text column that the table does not declare categorical,
			// or missing cells: diffprivlib takes numbers only, and a user
			// would have to encode or impute them by hand first; the
			// column stays empty (-) for the set.
			logf("diffprivlib's default: %s skipped: its rows are not all numbers (%v)", ds.name, err)
			continue
		} else if err != nil {
			return fmt.Errorf("%s: %w", ds.name, err)
		}
		var eps []string
		for _, b := range budgets(ds.name) {
			if b[1] == 0 {
				eps = append(eps, strconv.FormatFloat(b[0], 'g', -1, 64))
			}
		}
		sets = append(sets, ds.name+":"+strings.Join(eps, "/"))
	}
	cmd := exec.CommandContext(ctx, python, script, "defaults", "--rows", dir, "--sets", strings.Join(sets, ","),
		"--seeds", strconv.Itoa(seeds), "--out", filepath.Join(out, "diffprivlib.csv"))
	cmd.Env = append(os.Environ(), "DIFFPRIVLIB="+src)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	logf("diffprivlib's default on %d data sets: %s", len(sets), strings.Join(cmd.Args, " "))
	return cmd.Run()
}

// writeRows writes the rows of a data set for the side script under the
// prefix p: p.x (the n x d features, little-endian float64, row-major),
// p.y (the labels: -1/+1 for two classes, the class index for more; NaN
// for a row whose label is not a declared class), p.shape ("n d K") and,
// for each seed s, p.split<s>.{train,test} (the row indices of train's
// split at --seed s, little-endian int64).
func writeRows(ds dataSet, p string, seeds int) error {
	run, t, err := parseRun(ds, nil)
	if err != nil {
		return err
	}
	task := losses.Binary
	if len(run.Schema.Classes) > 2 {
		task = losses.Multiclass
	}
	enc, err := t.Encode(run.Schema, task)
	if err != nil {
		return err
	}
	x := oneHot(enc)
	d := len(x) / enc.N
	if slices.ContainsFunc(x, math.IsNaN) {
		return fmt.Errorf("%w: missing cells, which diffprivlib's LogisticRegression does not take", datasets.ErrFormat)
	}
	y := make([]float64, enc.N)
	for i := range y {
		y[i] = enc.Y[i]
		if enc.Null[i] {
			y[i] = math.NaN()
		}
	}
	if err := writeBinary(p+".x", x); err != nil {
		return err
	}
	if err := writeBinary(p+".y", y); err != nil {
		return err
	}
	k := max(len(run.Schema.Classes), 2)
	if err := os.WriteFile(p+".shape", []byte(fmt.Sprintf("%d %d %d\n", enc.N, d, k)), 0o644); err != nil {
		return err
	}
	for seed := 1; seed <= seeds; seed++ {
		train, test, err := enc.Split(run.Options.TestFrac, uint64(seed), false)
		if err != nil {
			return err
		}
		for _, s := range []struct {
			name string
			idx  []int
		}{{"train", train}, {"test", test}} {
			v := make([]int64, len(s.idx))
			for i, j := range s.idx {
				v[i] = int64(j)
			}
			if err := writeBinary(fmt.Sprintf("%s.split%d.%s", p, seed, s.name), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// oneHot returns the encoded rows with each categorical column replaced by
// one indicator per declared category (all zero for an undeclared one),
// row-major.
func oneHot(enc *datasets.Encoded) []float64 {
	var out []float64
	for i := range enc.N {
		for j, v := range enc.Row(i) {
			if len(enc.Categories) == 0 || enc.Categories[j] == nil {
				out = append(out, v)
				continue
			}
			for c := range enc.Categories[j] {
				out = append(out, b2f(int(v) == c))
			}
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// writeBinary writes v little-endian to path.
func writeBinary(path string, v any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := binary.Write(f, binary.LittleEndian, v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
