package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/beside"
	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

// besideRun is a run of the beside task: its name in beside.csv, the
// flags it adds to the budget's, and whether it spends delta.
type besideRun struct {
	name  string
	args  []string
	delta bool
}

// The runs of the beside task. At each budget of the grid with delta
// gridDelta, on every data set: the rule (no --mechanism), DP-SGD, AMP
// and output perturbation with the analytic Gaussian, each at its
// automatic knobs. besidePure adds, on the data sets of beside.EpsSets,
// objective perturbation, gamma and the rule at the pure budget.
var (
	besideDelta = []besideRun{
		{name: loo.Rule, delta: true},
		{name: string(perturb.DPSGD), args: []string{"--mechanism", string(perturb.DPSGD)}, delta: true},
		{name: string(perturb.AMP), args: []string{"--mechanism", string(perturb.AMP)}, delta: true},
		{name: string(perturb.AnalyticGaussian), args: []string{"--mechanism", string(perturb.AnalyticGaussian)}, delta: true},
	}
	besidePure = []besideRun{
		{name: string(perturb.Objective), args: []string{"--mechanism", string(perturb.Objective)}},
		{name: string(perturb.Gamma), args: []string{"--mechanism", string(perturb.Gamma)}},
		{name: loo.Rule},
	}
)

// besideJobs returns the fits of the beside task on a data set: the
// non-private reference, then each budget's runs, seeds 1..seeds each.
func besideJobs(ds dataSet, seeds int) []job {
	var jobs []job
	add := func(eps, delta float64, r besideRun, args func(seed int) []string) {
		for seed := 1; seed <= seeds; seed++ {
			jobs = append(jobs, job{ds: ds, eps: eps, seed: seed, s: setting{mech: r.name, delta: delta}, args: args(seed)})
		}
	}
	add(0, 0, besideRun{name: beside.None}, func(seed int) []string {
		return append(slices.Clone(nonPrivateArgs), "--seed", strconv.Itoa(seed))
	})
	for _, eps := range gridEpsilons(ds.name) {
		runs := besideDelta
		if slices.Contains(beside.EpsSets, ds.name) {
			runs = append(slices.Clone(runs), besidePure...)
		}
		for _, r := range runs {
			delta := 0.0
			if r.delta {
				delta = gridDelta
			}
			add(eps, delta, r, func(seed int) []string { return append(budgetArgs(eps, delta, seed), r.args...) })
		}
	}
	return jobs
}

// runBeside writes beside.csv: the fits of besideJobs on every data set,
// one at a time whatever -workers says (the CPU seconds are the
// process's), each with its test accuracy, the test rows' majority share,
// the released mechanism and lambda, the release's eps, the CPU seconds
// of the fit and whether its model file certifies.
func runBeside(ctx context.Context, dss []dataSet, out string, seeds int) error {
	f, err := os.Create(filepath.Join(out, "beside.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "n", "dim", "classes", "epsilon", "delta", "run", "seed", "accuracy", "majority", "mechanism", "lambda", "release_epsilon", "cpu_seconds", "certified", "error"})
	for _, ds := range dss {
		n, dim, err := shape(ds)
		if err != nil {
			return err
		}
		jobs := besideJobs(ds, seeds)
		logf("%s: %d fits of DP-SGD beside output and objective perturbation, timed one at a time (n = %d, dim = %d)", ds.name, len(jobs), n, dim)
		start := time.Now()
		for _, j := range jobs {
			row := []string{ds.name, strconv.Itoa(n), strconv.Itoa(dim), strconv.Itoa(max(len(ds.classes), 2)), fmt.Sprint(j.eps), fmt.Sprint(j.s.delta), j.s.mech, strconv.Itoa(j.seed)}
			o, cpu, err := timedFit(ctx, ds, j.args)
			if err != nil {
				logf("%s: %v", ds.name, err)
				w.Write(append(row, "", "", "", "", "", "", "", err.Error()))
				continue
			}
			mech := o.mechanism
			if mech == "" {
				mech = beside.None
			}
			w.Write(append(row, fmt.Sprint(o.released), fmt.Sprint(o.majority), mech, fmt.Sprint(o.lambda), releaseEpsilon(o.rel),
				strconv.FormatFloat(cpu, 'g', 4, 64), certify(o.rel), ""))
		}
		w.Flush()
		logf("%s: done in %s", ds.name, time.Since(start).Round(time.Second))
	}
	return w.Error()
}

// timedFit runs the fit of args on the data set twice: once as train runs
// it, without diagnostics, timed (cpuSeconds around it, after a garbage
// collection), and once with diagnostics for the test accuracy (fitArgs:
// the diagnostics train the model again without noise, which the timed
// fit does not pay). Both must give the same model; an error says so
// otherwise.
func timedFit(ctx context.Context, ds dataSet, args []string) (outcome, float64, error) {
	run, t, err := parseRun(ds, args)
	if err != nil {
		return outcome{}, 0, err
	}
	runtime.GC()
	before := cpuSeconds()
	rel, err := private.Fit(ctx, t, run.Schema, run.Budget, run.Options)
	cpu := cpuSeconds() - before
	if err != nil {
		return outcome{}, 0, fmt.Errorf("%v: %w", append(ds.args(), args...), err)
	}
	o, err := fitArgs(ctx, ds, args)
	if err != nil {
		return outcome{}, 0, err
	}
	timed, _ := json.Marshal(rel.Model)
	scored, _ := json.Marshal(o.rel.Model)
	if string(timed) != string(scored) {
		return outcome{}, 0, fmt.Errorf("%v: the timed fit's model differs from the scored fit's (with diagnostics): no accuracy for its CPU", append(ds.args(), args...))
	}
	return o, cpu, nil
}

// cpuSeconds returns the user and system CPU seconds the process has
// used (getrusage), 0 where the call fails.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
