// Command bench measures the partitioned pipeline (make beam-bench; not part
// of the test run):
//
//   - scale: it writes -shards CSV shards of -rows rows x -features features
//     (synthetic, seeded) to a temporary directory, runs the pipeline on the
//     embedded runner (-runner, default prism) with -partitions partitions
//     and a gamma release at eps = 1, and prints the wall time, the rows per
//     second and the peak resident memory of the process (VmHWM);
//   - adult: on Adult (-adult DIR, skipped when missing) it compares the test
//     accuracy of the centralized fit (private.Fit) with the partitioned fit
//     (partition.Fit, the pipeline's algorithm in process; the
//     pipeline gives the same weights to 1e-12) at P = 1, 4, 8, 16: trained
//     weights (-lambda, bounded inverse-t steps), and gamma releases at
//     eps = 1 with the automatic knobs (seeded noise, the mean over
//     -noise-seeds draws).
//
// With -universal BOOT the scale run is the universal runner against a prism
// job server started in the bench's process, the workers separate processes
// (a PROCESS environment: Beam's boot loader BOOT, make beam-workers builds
// it, runs this binary as the worker, staged with --worker_binary). Each
// worker process records its peak resident memory (VmHWM) and the heap
// profile at its largest live heap in -dir (worker-PID.txt,
// worker-PID.heap), so the worker is measured apart from the runner.
//
// With -cpuprofile FILE the scale run's pipeline (not the shard writing,
// not the in-process fit) is CPU-profiled to FILE: on the embedded runner
// prism and the workers run in the bench's process, so the profile shows
// the runner, the SDK harness and the pipeline's steps together
// (go tool pprof -top -cum).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	//lint:ignore SA1019 the bench can run the direct runner beside prism (-runner direct)
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	stabbeam "github.com/stabpriv/stabpriv/beam"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/trainer"
)

var (
	rows       = flag.Int("rows", 2_000_000, "rows of the scale run")
	features   = flag.Int("features", 20, "features of the scale run")
	shards     = flag.Int("shards", 16, "shards of the scale run")
	partitions = flag.Int("partitions", 8, "partitions of the scale run")
	runner     = flag.String("runner", "prism", "Beam runner of the scale run")
	adult      = flag.String("adult", "../../shared/datasets/adult", "directory of adult.data and adult.test")
	noiseSeeds = flag.Int("noise-seeds", 10, "noise draws per release in the Adult comparison")
	lambda     = flag.Float64("lambda", 1e-5, "lambda of the trained (non-private) comparison")
	skipScale  = flag.Bool("skip-scale", false, "skip the scale run")
	cpuProf    = flag.String("cpuprofile", "", "write the CPU profile of the scale run (the pipeline only: with the embedded runner, prism's and the workers' work in this process) to FILE (go tool pprof -top -cum)")
	heapProf   = flag.String("heapprofile", "", "write the heap profile of the scale run's process at its largest live heap or resident memory to FILE (a name ending in .heap; go tool pprof: with the embedded runner, prism's allocations and the workers'), its peaks to the .txt beside it")
	keep       = flag.String("dir", "", "write the scale run's shards to this directory and keep them (for runs on other runners); a temporary directory when empty")
	universal  = flag.String("universal", "", "run the scale run on the universal runner against a prism job server in this process, the workers run by this Beam boot loader (out/beam/boot) as separate processes that record their memory in -dir")
	inProcess  = flag.Bool("inprocess", true, "time the in-process fit after the scale run")
	workerEnv  = flag.String("worker-env", "", "with -universal: NAME=VALUE settings for the worker processes' environment, comma-separated (e.g. GOMEMLIMIT=400MiB)")
)

// workerMemEnv names the directory where a worker process of the
// universal scale run records its memory (set by the boot wrapper).
const workerMemEnv = "STABPRIV_BENCH_WORKER_MEM"

func main() {
	flag.Parse()
	if dir := os.Getenv(workerMemEnv); dir != "" {
		// A worker of the universal scale run: it records its memory
		// until the runner ends it.
		watchHeap(filepath.Join(dir, fmt.Sprintf("worker-%d", os.Getpid())), false)
	}
	beam.Init() // prism (the default runner) runs the pipeline's workers from this binary; a worker process of -universal runs here and exits
	if !*skipScale {
		if err := scale(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: scale:", err)
			os.Exit(1)
		}
	}
	if err := adultAccuracy(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: adult:", err)
		os.Exit(1)
	}
}

func scale() error {
	dir := *keep
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "stabpriv-beam-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	t0 := time.Now()
	cfg := stabbeam.Config{Label: "y", Classes: []string{"neg", "pos"}, Seed: 1, Partitions: *partitions,
		Mechanism: "gamma", Epsilon: 1, Auto: true}
	rng := rand.New(rand.NewPCG(1, 1))
	w := make([]float64, *features)
	for j := range w {
		w[j] = rng.NormFloat64()
		cfg.Bounds = append(cfg.Bounds, datasets.Bound{Column: fmt.Sprintf("f%d", j), Lo: -4, Hi: 4})
	}
	for s := range *shards {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%05d.csv", s)))
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		for j := range *features {
			fmt.Fprintf(bw, "f%d,", j)
		}
		bw.WriteString("y\n")
		buf := make([]byte, 0, 32)
		for range *rows / *shards {
			var z float64
			for j := range *features {
				x := rng.NormFloat64()
				z += w[j] * x
				buf = strconv.AppendFloat(buf[:0], x, 'f', 4, 64)
				bw.Write(buf)
				bw.WriteByte(',')
			}
			if z+rng.NormFloat64() > 0 {
				bw.WriteString("pos\n")
			} else {
				bw.WriteString("neg\n")
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		f.Close()
	}
	n := *rows / *shards * *shards
	fmt.Printf("scale: wrote %d shards, %d rows x %d features in %v\n", *shards, n, *features, time.Since(t0).Round(time.Millisecond))
	out := filepath.Join(dir, "model.json")
	if *heapProf != "" {
		stop := watchHeap(strings.TrimSuffix(*heapProf, ".heap"), true)
		defer stop()
	}
	if *universal != "" {
		if *keep == "" {
			return fmt.Errorf("-universal needs -dir (the workers record their memory there)")
		}
		if err := startJobServer(dir); err != nil {
			return err
		}
		*runner = "universal"
	}
	stopCPU, err := startCPUProfile(*cpuProf)
	if err != nil {
		return err
	}
	t1 := time.Now()
	err = stabbeam.Run(context.Background(), *runner, cfg, filepath.Join(dir, "part-*.csv"), out, true)
	el := time.Since(t1)
	if perr := stopCPU(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	r, err := modelfile.ReadFile(out)
	if err != nil {
		return err
	}
	fmt.Printf("scale: runner %s, P = %d: %v, %.0f rows/s, peak resident memory %s; Delta = %.4g (%s), n = %d\n",
		*runner, *partitions, el.Round(time.Millisecond), float64(n)/el.Seconds(), peakRSS(), r.Certificate.L2Sensitivity, r.Certificate.SensitivityRoute, r.Split.TrainRows)
	if *universal != "" {
		fmt.Printf("scale: the peak above is the launcher's and the job server's; the workers' (rows: %d MB of model inputs) are in %s/worker-*.txt\n",
			n*(*features+1)*8>>20, dir)
		matches, _ := filepath.Glob(filepath.Join(dir, "worker-*.txt"))
		for _, m := range matches {
			b, _ := os.ReadFile(m)
			fmt.Printf("scale: %s: %s", filepath.Base(m), b)
			// prism ends the boot loader, not the worker it started: end
			// the worker, and remove the boot loader's copy of it.
			if pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "worker-"), ".txt")); err == nil {
				if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.HasPrefix(exe, os.TempDir()) {
					if p, err := os.FindProcess(pid); err == nil {
						p.Kill()
					}
					os.RemoveAll(filepath.Dir(exe))
				}
			}
		}
	}
	if !*inProcess {
		return nil
	}
	// The same fit in process (partition.Fit, which the pipeline equals),
	// reading included, after the pipeline (its memory is not measured
	// apart: the peak above is the process's).
	t2 := time.Now()
	tables, err := placement.ReadShards(filepath.Join(dir, "part-*.csv"), nil)
	if err != nil {
		return err
	}
	schema, budget, opts, err := cfg.Options()
	if err != nil {
		return err
	}
	if _, err := partition.Fit(context.Background(), tables, schema, budget, opts, cfg.Partitions); err != nil {
		return err
	}
	el2 := time.Since(t2)
	fmt.Printf("scale: in process (partition.Fit, reading included): %v, %.0f rows/s; the pipeline takes %.2f times as long\n",
		el2.Round(time.Millisecond), float64(n)/el2.Seconds(), el.Seconds()/el2.Seconds())
	return nil
}

// startJobServer starts a prism job server in this process and sets
// Beam's flags for the universal runner against it: PROCESS workers run
// by the boot loader -universal through a wrapper written to dir, this
// binary staged as the worker binary.
func startJobServer(dir string) error {
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, err := prism.CreateJobServer(context.Background(), prism.Options{Port: port}); err != nil {
		return err
	}
	boot, err := filepath.Abs(*universal)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	exports := ""
	for _, kv := range strings.Split(*workerEnv, ",") {
		if kv = strings.TrimSpace(kv); kv != "" {
			if !strings.Contains(kv, "=") {
				return fmt.Errorf("-worker-env %q: want NAME=VALUE", kv)
			}
			exports += "export " + kv + "\n"
		}
	}
	// prism (2.77) quotes the worker id (--id='ID'); the wrapper removes
	// the quotes, as beam/universal_test.go's does.
	wrapper := filepath.Join(dir, "boot.sh")
	script := "#!/bin/sh\ncd " + dir + " || exit 1\nexport " + workerMemEnv + "=" + dir + "\n" + exports + "id=\n" +
		"for a in \"$@\"; do case \"$a\" in --id=*) id=$(printf %s \"${a#--id=}\" | tr -d \"'\");; esac; done\n" +
		"for a in \"$@\"; do case \"$a\" in --id=*) ;; *) set -- \"$@\" \"$a\";; esac; shift; done\n" +
		"exec " + boot + " --id=\"$id\" --semi_persist_dir=" + dir + " \"$@\" >>" + filepath.Join(dir, "boot.log") + " 2>&1\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"endpoint":           fmt.Sprintf("localhost:%d", port),
		"environment_type":   "PROCESS",
		"environment_config": fmt.Sprintf(`{"command": %q}`, wrapper),
		"worker_binary":      self,
	} {
		if err := flag.Set(k, v); err != nil {
			return err
		}
	}
	old, _ := filepath.Glob(filepath.Join(dir, "worker-*"))
	for _, f := range old {
		os.Remove(f)
	}
	return nil
}

// startCPUProfile starts the CPU profile of this process written to file
// (none when file is empty) and returns the function that stops it and
// closes the file.
func startCPUProfile(file string) (stop func() error, err error) {
	if file == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// watchHeap samples the live heap every 100 ms and writes the heap
// profile to base.heap each time it reaches a new maximum, and the peak
// resident memory (VmHWM) and largest live heap to base.txt, until stop
// (print: report them on stop).
func watchHeap(base string, print bool) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var best uint64
		hwm := ""
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if print {
					fmt.Printf("scale: largest live heap after a GC %d MB, profile in %s.heap\n", best>>20, base)
				}
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			v := sample[0].Value.Uint64()
			h := peakRSS()
			if v > best || h != hwm {
				// A new peak of the live heap or of the resident memory:
				// the profile (as of the last collection) and the peaks.
				best, hwm = max(best, v), h
				if f, err := os.Create(base + ".heap"); err == nil {
					pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
				os.WriteFile(base+".txt", []byte(fmt.Sprintf("peak resident memory %s, largest live heap after a GC %d MB (%s)\n", h, best>>20, time.Now().Format(time.TimeOnly))), 0o644)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// peakRSS returns VmHWM of /proc/self/status.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "unknown"
}

// adultBounds are the public ranges of Adult's numeric attributes (the UCI
// documentation's); the one-hot columns lie in [0, 1].
var adultBounds = map[string][2]float64{
	"age": {17, 90}, "fnlwgt": {0, 1.5e6}, "education-num": {1, 16},
	"capital-gain": {0, 99999}, "capital-loss": {0, 4356}, "hours-per-week": {1, 99},
}

// tableOf writes rows [lo, hi) of a data set as a Table (features, then
// the label).
func tableOf(ds *datasets.Dataset, source string, lo, hi int) *datasets.Table {
	_, d := ds.X.Dims()
	rows := make([][]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		row := make([]string, d+1)
		for j := range d {
			v := ds.X.At(i, j)
			if b, ok := adultBounds[ds.Features[j]]; ok {
				v = (min(max(v, b[0]), b[1]) - b[0]) / (b[1] - b[0])
			}
			row[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		row[d] = ds.Classes[0]
		if ds.Y[i] > 0 {
			row[d] = ds.Classes[1]
		}
		rows = append(rows, row)
	}
	t, err := datasets.NewTable(source, append(slices.Clone(ds.Features), "label"), rows)
	if err != nil {
		panic(err) // a programmer error: a Dataset has rows and unique feature names
	}
	return t
}

func adultAccuracy() error {
	train, test, err := paper.LoadAdultSplit(*adult, paper.AdultOptions{})
	if err != nil {
		fmt.Printf("adult: skipped (%v)\n", err)
		return nil
	}
	n, _ := train.X.Dims()
	nt, _ := test.X.Dims()
	// The numeric attributes are scaled to [0, 1] by their public ranges
	// when the shards are written, and the one-hot columns kept as 0/1: the
	// preprocessing none then maps each row into the unit ball.
	schema := datasets.Schema{Label: "label", Classes: train.Classes}
	whole := tableOf(train, "adult.data", 0, n)
	var shardTabs []*datasets.Table
	for s := range 8 {
		shardTabs = append(shardTabs, tableOf(train, fmt.Sprintf("adult-%d.csv", s), s*n/8, (s+1)*n/8))
	}
	testTab := tableOf(test, "adult.test", 0, nt)
	accuracy := func(r *modelfile.Released) float64 {
		hit := 0
		d := len(testTab.Columns) - 1
		x := make([]float64, d)
		for i := range testTab.Len() {
			for j := range x {
				x[j], _ = testTab.Value(i, j)
			}
			if c, err := r.Predict(x); err == nil && c == testTab.Cell(i, d) {
				hit++
			}
		}
		return float64(hit) / float64(testTab.Len())
	}
	budget := dp.Budget{Epsilon: 1}
	knobs, err := autoknobs.Choose(n, len(train.Features)+1, 1, perturb.Gamma, budget)
	if err != nil {
		return err
	}
	trained := private.Options{Seed: 1, Preprocess: preprocess.None, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: *lambda}, Schedule: trainer.BoundedInverseT}}
	ctx := context.Background()
	fit := func(p int, opts private.Options) (*modelfile.Released, error) {
		if p == 0 {
			return private.Fit(ctx, whole, schema, budget0(opts, budget), opts)
		}
		return partition.Fit(ctx, shardTabs, schema, budget0(opts, budget), opts, p)
	}
	fmt.Printf("adult: %d training rows, %d test rows, %d features; automatic knobs of a gamma release at eps = 1: lambda = %.3g, G = %g\n", n, nt, len(train.Features), knobs.Lambda, knobs.Clip)
	fmt.Printf("%-12s %-18s %-22s\n", "fit", "trained accuracy", "released (eps = 1)")
	var base [2]float64
	for _, p := range []int{0, 1, 4, 8, 16} {
		r, err := fit(p, trained)
		if err != nil {
			return err
		}
		acc := accuracy(r)
		var sum float64
		for s := range *noiseSeeds {
			rel, err := fit(p, private.Options{Mechanism: perturb.Gamma, Auto: true, Seed: 1, Preprocess: preprocess.None, Noise: perturb.Seeded(uint64(s))})
			if err != nil {
				return err
			}
			sum += accuracy(rel)
		}
		relAcc := sum / float64(*noiseSeeds)
		name := fmt.Sprintf("P = %d", p)
		if p == 0 {
			name, base = "centralized", [2]float64{acc, relAcc}
		}
		fmt.Printf("%-12s %.4f (%+.4f)    %.4f (%+.4f)\n", name, acc, acc-base[0], relAcc, relAcc-base[1])
	}
	return nil
}

func budget0(o private.Options, b dp.Budget) dp.Budget {
	if o.Mechanism == "" {
		return dp.Budget{}
	}
	return b
}
