// Command defaults measures what `stabpriv train` gives with nothing but a
// data set and a budget (issues 18 and 27), beside the majority class,
// non-private logistic regression and the best fixed setting chosen on the
// test rows, the fit of the automatic lambda rules across data sets, and
// the rule's fitted constant judged leave-one-data-set-out. `make paper`
// runs it; it is not part of `make test`.
//
// Usage:
//
//	go run ./bench/defaults -data-dir ../shared/datasets -out out/paper/defaults [-task all|grid|defaults|loo|dpsgd|beside|diffprivlib|project|table] [-seeds 10] [-sets a,b] [-epsilons 1] [-mechanisms m,n]
//
// It prepares the data sets as CSV files under -out (prepare.go; the
// public tables of Debian's python3-sklearn and R packages, public.go,
// raw: text and missing cells as their source has them; a table whose
// source is not installed is skipped with a message), then:
//
//	grid      every mechanism at a grid of fixed lambdas (and clipping norms
//	          for output perturbation), seeds 1..S, seeded noise: grid.csv
//	defaults  train with only the budget flags (and the flags a data set
//	          needs to be read: --standardize none for the prepared CSVs,
//	          --ignore for an ID column), each selection option, seeds
//	          1..S, each release certified (modelfile.Verify), refusals
//	          recorded; and --mechanism none, the non-private reference:
//	          defaults.csv
//	loo       objective perturbation and gamma at their automatic knobs
//	          on the binary data sets, the two families between which
//	          selection.OutputFirst chooses: loo.csv, then loo.md, the
//	          leave-one-data-set-out judgement of OutputFirstFactor
//	dpsgd     the rule, DP-SGD and AMP at their automatic knobs at each
//	          budget of the grid with delta 1e-5: dpsgd.csv, then
//	          dpsgd.md, the leave-one-data-set-out judgement of
//	          selection.DPSGDFirstRows
//	beside    DP-SGD beside output and objective perturbation: the rule,
//	          DP-SGD, AMP and the analytic Gaussian at their automatic
//	          knobs at each budget of the grid with delta 1e-5, and on
//	          Adult also objective perturbation, gamma and the rule at
//	          the pure budget, with the non-private reference; each fit's
//	          test accuracy and CPU seconds (one fit at a time, whatever
//	          -workers says): beside.csv, then beside.md and
//	          beside_adult.md (beside.go)
//	stumpgrid (only by name) the rule's binary stump refitted at the grids
//	          of loo.StumpGrids on the same rows: stumpgrid.csv, then
//	          stumpgrid.md, the leave-one-data-set-out judgement of
//	          stump.DefaultGrid (stumpgrid.go)
//	stumpclass (only by name) the rule's stump refitted from the
//	          one-feature class and from today's (with the pairs or
//	          intervals where their guarantee holds) on the same rows:
//	          stumpclass.csv, then stumpclass.md, with the
//	          leave-one-data-set-out judgement (stumpclass.go)
//	diffprivlib  (only with $DIFFPRIVLIB, the directory of a diffprivlib
//	          source checkout) IBM diffprivlib's default,
//	          LogisticRegression(epsilon=E), on the same rows and splits,
//	          by bench/diffprivlib_side.py under /usr/bin/python3:
//	          diffprivlib.csv
//	project   the default fit with --project k over a grid of k on wide
//	          and narrow data sets (the fit of preprocess.AutoProjectC):
//	          project.csv, project.md
//	table     (after the others, or alone on their files) table.md,
//	          targets.md, loo.md, dpsgd.md, beside.md, beside_adult.md and
//	          project.md, the tables of docs/RESULTS.md's section on the
//	          defaults
//
// Every fit is the train command's (cmd/runflags, private.Fit) in
// process, with --diagnostics for the test accuracy and seeded noise so that
// the tables are reproducible; the accuracy of a seeded release has the law
// of a secure one.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/beside"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05")+" "+format+"\n", args...)
}

func main() {
	dataDir := flag.String("data-dir", "../shared/datasets", "directory holding adult/, lastfm_asia/ and gene_all/")
	out := flag.String("out", "out/paper/defaults", "output directory")
	task := flag.String("task", "all", "all, grid, defaults, loo, dpsgd, beside, stumpgrid, stumpclass, diffprivlib, project or table")
	script := flag.String("diffprivlib-script", "bench/diffprivlib_side.py", "the side script of the diffprivlib column (run when $DIFFPRIVLIB is set)")
	sets := flag.String("sets", strings.Join(defaultSets, ","), "data sets")
	epsilons := flag.String("epsilons", "", "only these `epsilons` (comma-separated) of the grid, defaults and loo tasks and of the tables; empty: all")
	seeds := flag.Int("seeds", 10, "seeds (splits) per setting")
	workers := flag.Int("workers", 2, "fits run at once")
	lr := flag.String("lambda-range", "1e-6,1", "task grid: the `lo,hi` of its lambdas (10^-6 to 1 in half decades)")
	mechs := flag.String("mechanisms", "", "task grid: only these `mechanisms` (comma-separated; empty: all), to add a mechanism's rows to an earlier grid.csv")
	flag.Parse()
	if _, err := fmt.Sscanf(*lr, "%g,%g", &lambdaRange[0], &lambdaRange[1]); err != nil || !(lambdaRange[0] > 0 && lambdaRange[0] <= lambdaRange[1]) {
		fmt.Fprintf(os.Stderr, "defaults: -lambda-range %q, want lo,hi with 0 < lo <= hi\n", *lr)
		os.Exit(2)
	}
	if *mechs != "" {
		gridMechanisms = strings.Split(*mechs, ",")
	}
	for _, e := range strings.Split(*epsilons, ",") {
		if e == "" {
			continue
		}
		v, err := strconv.ParseFloat(e, 64)
		if err != nil || !(v > 0) {
			fmt.Fprintf(os.Stderr, "defaults: -epsilons %q: %q is not a positive number\n", *epsilons, e)
			os.Exit(2)
		}
		onlyEpsilons = append(onlyEpsilons, v)
	}
	if err := run(context.Background(), *dataDir, *out, *task, *script, strings.Split(*sets, ","), *seeds, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "defaults:", err)
		os.Exit(1)
	}
}

// defaultSets are the data sets of a run without -sets: the seven of issue
// 18 and the public tables of issue 27 (public.go).
var defaultSets = []string{"adult", "adult_raw", "breast_cancer", "digits", "gene_all", "lastfm", "synthetic",
	"iris", "wine", "pima", "biopsy", "fgl", "crabs", "survey", "birthwt", "colon", "pbc", "flchain", "chile", "mplsstops"}

func run(ctx context.Context, dataDir, out, task, script string, names []string, seeds, workers int) error {
	dss, err := prepare(names, dataDir, filepath.Join(out, "data"))
	if err != nil {
		return err
	}
	if task == "all" || task == "grid" {
		if err := runGrid(ctx, dss, out, seeds, workers); err != nil {
			return err
		}
	}
	if task == "all" || task == "defaults" {
		if err := runDefaults(ctx, dss, out, seeds, workers); err != nil {
			return err
		}
	}
	if task == "all" || task == "loo" {
		if err := runLOO(ctx, dss, out, seeds, workers); err != nil {
			return err
		}
	}
	if task == "stumpgrid" {
		return runStumpGrid(ctx, dss, out, seeds, workers)
	}
	if task == "stumpclass" {
		return runStumpClass(ctx, dss, out, seeds, workers)
	}
	if task == "all" || task == "dpsgd" {
		if err := runDPSGD(ctx, dss, out, seeds, workers); err != nil {
			return err
		}
		if err := writeDPSGDTable(out); err != nil {
			return err
		}
		if task == "dpsgd" {
			return nil
		}
	}
	if task == "all" || task == "beside" {
		if err := runBeside(ctx, dss, out, seeds); err != nil {
			return err
		}
		if err := beside.WriteTables(out, gridDelta); err != nil {
			return err
		}
		if task == "beside" {
			return nil
		}
	}
	if task == "all" || task == "diffprivlib" {
		switch src := os.Getenv("DIFFPRIVLIB"); {
		case src != "":
			if err := runDiffprivlib(ctx, dss, out, src, script, seeds); err != nil {
				return fmt.Errorf("diffprivlib: %w", err)
			}
		case task == "diffprivlib":
			return fmt.Errorf("task diffprivlib: set DIFFPRIVLIB to the directory of a diffprivlib source checkout")
		default:
			logf("diffprivlib's default: skipped (DIFFPRIVLIB is not set)")
		}
	}
	if task == "all" || task == "project" {
		pdss, err := prepare(projectSets, dataDir, filepath.Join(out, "data"))
		if err != nil {
			return err
		}
		if err := runProject(ctx, pdss, out, seeds, workers); err != nil {
			return err
		}
	}
	if task == "project" || fileExists(filepath.Join(out, "project.csv")) {
		t, err := projectTable(out)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "project.md"), []byte(t), 0o644); err != nil {
			return err
		}
	}
	if task == "project" || task == "diffprivlib" {
		return nil
	}
	if err := beside.WriteTables(out, gridDelta); err != nil {
		return err
	}
	return writeTable(out, dss, seeds)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
