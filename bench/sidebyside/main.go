// Command sidebyside is stabpriv's half of the side-by-side comparison with
// scikit-learn that bench/compare.sh runs (bench/sklearn_side.py is the
// other half). Each task times one operation on the files the Python side
// wrote, a few repetitions, and prints one JSON line per timing:
//
//	fit   whole one-pass Train calls (logistic, elastic net, b = 1), with the
//	      objective pass and without (Config.SkipObjective); Train's fixed
//	      cost (a one-pass fit less the marginal pass of fits of 1 and 4
//	      passes); peak memory over the data (the data and everything Train
//	      allocates)
//	pass  the marginal time of a pass at b = 1, 32 and 256
//	csv   the CSV reader as datasets.ReadTableFile (what stabpriv train
//	      uses: a float matrix and the text of the cells that are not
//	      numbers, parsed against the schema later by private.Fit) and as
//	      datasets.ReadCSVFile (a numeric Dataset)
//	svd   preprocess.FitTruncatedSVD (k components, 10 oversamples, 5 power
//	      iterations: scikit-learn's TruncatedSVD defaults), labelled with
//	      the method it takes at this shape (exact from X^T X, or
//	      randomized)
//	adult a private fit on Adult (train, stability analysis, gamma release at
//	      eps = 1, certificate; release.TrainRows and Release), the plain
//	      fit with the same settings (trainer.Train), and the exact
//	      minimizer of the ridge-regularized logistic loss at lambda 1e-4
//	      (objpert.MinimizeExact: Newton steps with a factored Hessian); it
//	      writes the rows for the Python side's logistic regression
//	paperrows, paperfit  the Adult rows of the paper's protocol and private
//	      fits on them, against diffprivlib (paper.go)
//	env   the Go side's versions and settings, one JSON line
//
// Besides task, shape, impl and seconds, every timing names its algorithm
// ("algo", a short key) and the algorithms of the Python side it is to be
// compared with ("vs"), so that bench/summarize.py pairs each measure with
// its peer and says whether both sides run the same algorithm.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

type flags struct {
	task, data, csv, adult string
	n, d, k, reps          int
	// paperrows and paperfit (paper.go)
	rows, dataDir string
	splits, split int
	seed          uint64
	eps, lambda   float64
	lambdaObj     float64
}

func main() {
	var f flags
	flag.StringVar(&f.task, "task", "fit", "fit, pass, csv, svd, adult, paperrows, paperfit or env")
	flag.StringVar(&f.data, "data", "", "prefix of the raw little-endian float64 files <prefix>.x (n x d) and <prefix>.y (labels)")
	flag.StringVar(&f.csv, "csv", "", "CSV file (task csv; label column \"label\")")
	flag.StringVar(&f.adult, "adult", "", "directory of adult.data and adult.test (task adult); the rows are written to <data>.x and <data>.y")
	flag.IntVar(&f.n, "n", 0, "rows of the data files")
	flag.IntVar(&f.d, "d", 0, "columns of the data files")
	flag.IntVar(&f.k, "k", 32, "components (task svd)")
	flag.IntVar(&f.reps, "reps", 3, "repetitions")
	flag.StringVar(&f.rows, "rows", "", "directory of the paper-protocol Adult splits (tasks paperrows, paperfit)")
	flag.StringVar(&f.dataDir, "datadir", "../shared/datasets", "directory holding adult/ (task paperrows)")
	flag.IntVar(&f.splits, "splits", 10, "splits to write (task paperrows)")
	flag.Uint64Var(&f.seed, "seed", 1, "seed of split 0, as stabpriv sweep's --seed (task paperrows)")
	flag.IntVar(&f.split, "split", 0, "split to fit (task paperfit)")
	flag.Float64Var(&f.eps, "eps", 1, "epsilon of the private fits (task paperfit)")
	flag.Float64Var(&f.lambda, "lambda", 1e-3, "lambda of the output-perturbation fit (task paperfit)")
	flag.Float64Var(&f.lambdaObj, "lambda-objective", 1e-4, "lambda of the objective-perturbation fit (task paperfit)")
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

// emit prints one timing as a JSON line.
func emit(task, shape, impl string, seconds float64, extra map[string]any) {
	r := map[string]any{"task": task, "shape": shape, "impl": impl, "seconds": seconds}
	for k, v := range extra {
		r[k] = v
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

// pair returns the fields that name a timing's algorithm and the Python
// side's algorithms it is compared with.
func pair(algo string, vs ...string) map[string]any {
	if vs == nil {
		vs = []string{}
	}
	return map[string]any{"algo": algo, "vs": vs}
}

// with adds the fields of extra to m and returns m.
func with(m, extra map[string]any) map[string]any {
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// envTask prints the Go side's versions and settings.
func envTask() error {
	e := map[string]any{"task": "env", "go_version": runtime.Version(), "gomaxprocs": runtime.GOMAXPROCS(0),
		"numcpu": runtime.NumCPU(), "goos": runtime.GOOS, "goarch": runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOAMD64" || s.Key == "-tags" {
				e[s.Key] = s.Value
			}
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

// svdMethod names the method FitTruncatedSVD takes for a well-conditioned
// dense n x d matrix: the rule its documentation states (exact from the
// Gram matrix when d <= n, d <= 512 and d < 4 (powerIters+1)(k+oversample)).
func svdMethod(n, d, k, oversample, powerIters int) string {
	if d <= n && d <= 512 && d < 4*(powerIters+1)*(k+oversample) {
		return "gram-eigh"
	}
	return "randomized"
}

func run(f flags) error {
	shape := fmt.Sprintf("%dx%d", f.n, f.d)
	switch f.task {
	case "fit", "pass", "svd":
		X, y, err := load(f.data, f.n, f.d)
		if err != nil {
			return err
		}
		switch f.task {
		case "fit":
			return fitTask(X, y, shape, f.reps)
		case "pass":
			return passTask(X, y, shape, f.reps)
		}
		method := svdMethod(f.n, f.d, f.k, 10, 5)
		impl := "stabpriv FitTruncatedSVD (exact: X^T X, then mat.EigenSym)"
		if method != "gram-eigh" {
			impl = "stabpriv FitTruncatedSVD (randomized range finder)"
		}
		for r := 0; r < f.reps; r++ {
			start := time.Now()
			if _, err := preprocess.FitTruncatedSVD(X, f.k, 10, 5, uint64(r+1)); err != nil {
				return err
			}
			emit("svd", fmt.Sprintf("%s k=%d", shape, f.k), impl, time.Since(start).Seconds(), pair(method, "gram-eigh", "randomized"))
		}
		return nil
	case "csv":
		// Both uses of the reader, alternating within the round: the
		// one of stabpriv train, and the numeric one.
		for r := 0; r < f.reps; r++ {
			start := time.Now()
			t, err := datasets.ReadTableFile(f.csv)
			if err != nil {
				return err
			}
			emit("csv", fmt.Sprintf("%dx%d", t.Len(), len(t.Columns)), "stabpriv datasets.ReadTableFile (the reader of stabpriv train: a float matrix)",
				time.Since(start).Seconds(), pair("csv-table", "csv-numeric-frame"))
			start = time.Now()
			ds, err := datasets.ReadCSVFile(f.csv, datasets.CSVOptions{Label: "label", Positive: "1"})
			if err != nil {
				return err
			}
			n, d := ds.X.Dims()
			emit("csv", fmt.Sprintf("%dx%d", n, d+1), "stabpriv datasets.ReadCSVFile (numeric Dataset)",
				time.Since(start).Seconds(), pair("csv-numeric-frame", "csv-numeric-frame"))
		}
		return nil
	case "env":
		return envTask()
	case "adult":
		return adultTask(f)
	case "paperrows":
		return paperRowsTask(f)
	case "paperfit":
		return paperFitTask(f)
	}
	return fmt.Errorf("unknown task %q", f.task)
}

// load reads the raw float64 files written by bench/sklearn_side.py.
func load(prefix string, n, d int) (*mat.Dense, []float64, error) {
	x, err := readFloats(prefix+".x", n*d)
	if err != nil {
		return nil, nil, err
	}
	y, err := readFloats(prefix+".y", n)
	if err != nil {
		return nil, nil, err
	}
	return mat.NewDense(n, d, x), y, nil
}

func readFloats(path string, count int) ([]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 8*count {
		return nil, fmt.Errorf("%s: %d bytes, want %d", path, len(b), 8*count)
	}
	v := make([]float64, count)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

func writeFloats(path string, v []float64) error {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return os.WriteFile(path, b, 0o644)
}

// sgdConfig is the configuration bench/sklearn_side.py gives SGDClassifier:
// logistic loss, elastic net (lambda 1e-4, l1 ratio 0.15), constant step 0.5.
func sgdConfig(batch, passes int, skip bool) trainer.Config {
	return trainer.Config{
		Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 1e-4, L1Ratio: 0.15},
		Eta: 0.5, Passes: passes, Batch: batch, Seed: 1, SkipObjective: skip,
	}
}

// timeTrain returns the wall time of one Train call and the bytes it
// allocated.
func timeTrain(cfg trainer.Config, X *mat.Dense, y []float64) (float64, uint64, error) {
	tr, err := trainer.New(cfg)
	if err != nil {
		return 0, 0, err
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	if _, _, err := tr.Train(context.Background(), X, y); err != nil {
		return 0, 0, err
	}
	sec := time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	return sec, after.TotalAlloc - before.TotalAlloc, nil
}

func fitTask(X *mat.Dense, y []float64, shape string, reps int) error {
	n, d := X.Dims()
	data := float64(8 * n * d)
	for r := 0; r < reps; r++ {
		for _, skip := range []bool{false, true} {
			t1, alloc, err := timeTrain(sgdConfig(1, 1, skip), X, y)
			if err != nil {
				return err
			}
			impl := "stabpriv Train"
			if skip {
				impl = "stabpriv Train, SkipObjective"
			}
			extra := with(pair("sgd-epoch", "sgd-epoch"), map[string]any{"peak_over_data": (data + float64(alloc)) / data})
			if skip {
				t4, _, err := timeTrain(sgdConfig(1, 4, true), X, y)
				if err != nil {
					return err
				}
				pass := (t4 - t1) / 3
				extra["pass_seconds"], extra["fixed_over_pass"] = pass, (t1-pass)/pass
			}
			emit("fit", shape, impl, t1, extra)
		}
	}
	return nil
}

func passTask(X *mat.Dense, y []float64, shape string, reps int) error {
	for r := 0; r < reps; r++ {
		for _, b := range []int{1, 32, 256} {
			t1, _, err := timeTrain(sgdConfig(b, 1, true), X, y)
			if err != nil {
				return err
			}
			t4, _, err := timeTrain(sgdConfig(b, 4, true), X, y)
			if err != nil {
				return err
			}
			p := pair("sgd-epoch-marginal", "sgd-epoch-marginal")
			if b != 1 {
				p = pair(fmt.Sprintf("sgd-epoch-marginal-b%d", b))
			}
			emit("pass", shape, fmt.Sprintf("stabpriv pass b=%d", b), (t4-t1)/3, p)
		}
	}
	return nil
}

// adultConfig is the setting of the paper's Adult runs: logistic loss,
// lambda 1e-4, bounded inverse-t steps, 10 passes of b = 1.
func adultConfig() trainer.Config {
	return trainer.Config{
		Loss: losses.Logistic{}, Reg: regularizers.L2(1e-4), Kappa: 1,
		Schedule: trainer.BoundedInverseT, Passes: 10, Seed: 1,
	}
}

func adultTask(f flags) error {
	train, _, err := paper.LoadAdultSplit(f.adult, paper.AdultOptions{})
	if err != nil {
		return err
	}
	ds, _, _, err := preprocess.PrepareUnitBall(train, nil, preprocess.UnitBallOptions{})
	if err != nil {
		return err
	}
	X := mat.DenseCopyOf(ds.X)
	n, d := X.Dims()
	shape := fmt.Sprintf("%dx%d", n, d)
	if f.data != "" {
		if err := os.MkdirAll(filepath.Dir(f.data), 0o755); err != nil {
			return err
		}
		if err := writeFloats(f.data+".x", X.RawMatrix().Data); err != nil {
			return err
		}
		if err := writeFloats(f.data+".y", ds.Y); err != nil {
			return err
		}
		if err := os.WriteFile(f.data+".shape", []byte(fmt.Sprintf("%d %d\n", n, d)), 0o644); err != nil {
			return err
		}
	}
	ctx := context.Background()
	for r := 0; r < f.reps; r++ {
		for _, skip := range []bool{false, true} {
			cfg := adultConfig()
			cfg.SkipObjective = skip
			start := time.Now()
			t, err := release.TrainRows(ctx, X, ds.Y, cfg, ds.Notes)
			if err != nil {
				return err
			}
			if _, _, err := t.Release(perturb.Gamma, 1, 0, nil); err != nil {
				return err
			}
			impl := "stabpriv private fit (SGD, 10 passes, b = 1)"
			if skip {
				impl += ", SkipObjective"
			}
			emit("adult", shape, impl, time.Since(start).Seconds(), pair("sgd-10-passes", "lbfgs"))
		}
		sec, _, err := timeTrain(adultConfig(), X, ds.Y)
		if err != nil {
			return err
		}
		emit("adult", shape, "stabpriv plain fit (Train: SGD, 10 passes, b = 1)", sec, pair("sgd-10-passes", "lbfgs"))
		pr := objpert.Problem{Loss: losses.Logistic{}, N: n, D: d, K: 1, Kappa: 1, Lambda: 1e-4}
		start := time.Now()
		_, st, err := objpert.MinimizeExact(ctx, X, ds.Y, pr)
		if err != nil {
			return err
		}
		emit("adult", shape, "stabpriv objpert.MinimizeExact (Newton, Cholesky-factored Hessian, gradient norm <= 1e-9)",
			time.Since(start).Seconds(), with(pair("newton-cholesky", "newton-cholesky", "lbfgs"), map[string]any{"newton_steps": st.NewtonSteps}))
	}
	return nil
}
