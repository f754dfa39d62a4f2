package main

// The Adult rows of the paper's protocol (protocol.Protocol), shared with
// bench/diffprivlib_side.py so that both sides fit the very same rows:
//
//	paperrows  writes splits 0..splits-1 (seed + s, as stabpriv sweep does)
//	           to <rows>/split<s>.{train,test}.{x,y,shape}: raw little-endian
//	           float64 rows (n x 33, norms <= 1 with the bias counted),
//	           labels -1/+1, and "n d"
//	paperfit   times private fits on <rows>/split<split>.train: output
//	           perturbation (release.TrainRows and a gamma release, the
//	           sweep's SGD: 10 passes of b = 1, bounded inverse-t steps,
//	           elastic net l1 ratio 0.15, lambda -lambda) and objective
//	           perturbation (objpert.Calibrate, objpert.Release with secure
//	           noise and its certificate, ridge lambda -lambda-objective),
//	           both at eps -eps; also the output perturbation without the
//	           objective pass (Config.SkipObjective) and the plain Train

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// writeRows writes ds as <prefix>.x, .y and .shape.
func writeRows(prefix string, ds *datasets.Dataset) error {
	X := mat.DenseCopyOf(ds.X)
	n, d := X.Dims()
	if err := writeFloats(prefix+".x", X.RawMatrix().Data); err != nil {
		return err
	}
	if err := writeFloats(prefix+".y", ds.Y); err != nil {
		return err
	}
	return os.WriteFile(prefix+".shape", []byte(fmt.Sprintf("%d %d\n", n, d)), 0o644)
}

// readRows reads the files writeRows wrote.
func readRows(prefix string) (*mat.Dense, []float64, error) {
	b, err := os.ReadFile(prefix + ".shape")
	if err != nil {
		return nil, nil, err
	}
	var n, d int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &n, &d); err != nil {
		return nil, nil, fmt.Errorf("%s.shape: %w", prefix, err)
	}
	return load(prefix, n, d)
}

// cpuSeconds returns the user and system CPU time of the process so far
// (all threads): beside the wall time, a measure less sensitive to other
// jobs on the machine.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func paperRowsTask(f flags) error {
	if f.rows == "" {
		return fmt.Errorf("paperrows needs -rows")
	}
	p, err := protocol.New(protocol.Config{Dataset: "adult", DataDir: f.dataDir})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.rows, 0o755); err != nil {
		return err
	}
	for s := 0; s < f.splits; s++ {
		train, test, err := p.Split(f.seed + uint64(s))
		if err != nil {
			return err
		}
		base := filepath.Join(f.rows, fmt.Sprintf("split%d", s))
		if err := writeRows(base+".train", train); err != nil {
			return err
		}
		if err := writeRows(base+".test", test); err != nil {
			return err
		}
		n, d := train.X.Dims()
		fmt.Fprintf(os.Stderr, "split %d (seed %d): train %dx%d, test %d rows -> %s.*\n", s, f.seed+uint64(s), n, d, len(test.Y), base)
	}
	return nil
}

func paperFitTask(f flags) error {
	X, y, err := readRows(filepath.Join(f.rows, fmt.Sprintf("split%d.train", f.split)))
	if err != nil {
		return err
	}
	n, d := X.Dims()
	shape := fmt.Sprintf("%dx%d", n, d)
	ctx := context.Background()
	gamma := trainer.Config{
		Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: f.lambda, L1Ratio: 0.15}, Kappa: 1,
		Schedule: trainer.BoundedInverseT, Passes: 10, Batch: 1, Dropout: 1, Seed: 1 + uint64(f.split),
	}
	pr := objpert.Problem{Loss: losses.Logistic{}, N: n, D: d, K: 1, Kappa: 1, Lambda: f.lambdaObj}
	cons, err := pr.Loss.Constants(losses.Domain{Kappa: 1})
	if err != nil {
		return err
	}
	for r := 0; r < f.reps; r++ {
		start, cpu := time.Now(), cpuSeconds()
		t, err := release.TrainRows(ctx, X, y, gamma, nil)
		if err != nil {
			return err
		}
		if _, _, err := t.Release(perturb.Gamma, f.eps, 0, nil); err != nil {
			return err
		}
		sec := time.Since(start).Seconds()
		extra := with(pair("sgd-10-passes", "lbfgs-perturbed"), map[string]any{"gomaxprocs": runtime.GOMAXPROCS(0), "cpu_seconds": cpuSeconds() - cpu})
		emit("adult-diffprivlib", shape, fmt.Sprintf("stabpriv output perturbation (gamma, SGD 10 passes b=1, lambda %g)", f.lambda), sec, extra)

		skip := gamma
		skip.SkipObjective = true
		start, cpu = time.Now(), cpuSeconds()
		if t, err = release.TrainRows(ctx, X, y, skip, nil); err != nil {
			return err
		}
		if _, _, err := t.Release(perturb.Gamma, f.eps, 0, nil); err != nil {
			return err
		}
		sec = time.Since(start).Seconds()
		extra = with(pair("sgd-10-passes", "lbfgs-perturbed"), map[string]any{"gomaxprocs": runtime.GOMAXPROCS(0), "cpu_seconds": cpuSeconds() - cpu})
		emit("adult-diffprivlib", shape, "stabpriv output perturbation, SkipObjective", sec, extra)

		if sec, _, err = timeTrain(gamma, X, y); err != nil {
			return err
		}
		emit("adult-diffprivlib", shape, "stabpriv plain fit (Train, the same SGD)", sec, pair("sgd-10-passes", "lbfgs-perturbed"))

		start, cpu = time.Now(), cpuSeconds()
		cal, err := objpert.Calibrate(perturb.Objective, f.eps, 0, pr)
		if err != nil {
			return err
		}
		m, st, err := objpert.Release(ctx, X, y, pr, cal, nil)
		if err != nil {
			return err
		}
		cert := release.Certificate{Claim: *objpert.NewClaim(cal, perturb.SourceSecure, nil), Run: objpert.Run(cal, pr, cons, 0, 1)}
		cert.WeightsSHA256 = dp.WeightsSHA256(m.W)
		sec = time.Since(start).Seconds()
		extra = with(pair("newton-perturbed", "lbfgs-perturbed"), map[string]any{"gomaxprocs": runtime.GOMAXPROCS(0), "cpu_seconds": cpuSeconds() - cpu,
			"newton_steps": st.NewtonSteps, "gradient_steps": st.GradientSteps})
		emit("adult-diffprivlib", shape, fmt.Sprintf("stabpriv objective perturbation (Newton to gradient norm 1e-9, lambda %g)", f.lambdaObj), sec, extra)
	}
	return nil
}
