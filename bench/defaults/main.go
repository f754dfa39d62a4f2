// Command defaults measures what `stabpriv train` gives with nothing but a
// data set and a budget (issue 18's table), beside the best fixed setting
// chosen on the test rows and the majority class, and the fit of the
// automatic lambda rules across data sets. `make paper` runs it; it is not
// part of `make test`.
//
// Usage:
//
//	go run ./bench/defaults -data-dir ../shared/datasets -out out/paper/defaults [-task all|grid|defaults|diffprivlib|project|table] [-seeds 10] [-sets a,b] [-mechanisms m,n]
//
// It prepares the data sets as CSV files under -out (prepare.go), then:
//
//	grid      every mechanism at a grid of fixed lambdas (and clipping norms
//	          for output perturbation), seeds 1..S, seeded noise: grid.csv
//	defaults  train with only the budget flags (and the flags a data set
//	          needs to be read: --standardize none for the prepared CSVs),
//	          each selection option, seeds 1..S: defaults.csv
//	diffprivlib  (only with $DIFFPRIVLIB, the directory of a diffprivlib
//	          source checkout) IBM diffprivlib's default,
//	          LogisticRegression(epsilon=E), on the same rows and splits,
//	          by bench/diffprivlib_side.py under /usr/bin/python3:
//	          diffprivlib.csv
//	project   the default fit with --project k over a grid of k on wide
//	          and narrow data sets (the fit of preprocess.AutoProjectC):
//	          project.csv, project.md
//	table     (after the others, or alone on their files) table.md and
//	          project.md, the tables of docs/RESULTS.md's section on the
//	          defaults
//
// Every fit is the train command's (internal/runflags, private.Fit) in
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
	"strings"
	"time"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05")+" "+format+"\n", args...)
}

func main() {
	dataDir := flag.String("data-dir", "../shared/datasets", "directory holding adult/, lastfm_asia/ and gene_all/")
	out := flag.String("out", "out/paper/defaults", "output directory")
	task := flag.String("task", "all", "all, grid, defaults, diffprivlib, project or table")
	script := flag.String("diffprivlib-script", "bench/diffprivlib_side.py", "the side script of the diffprivlib column (run when $DIFFPRIVLIB is set)")
	sets := flag.String("sets", "adult,adult_raw,breast_cancer,digits,gene_all,lastfm,synthetic", "data sets")
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
	if err := run(context.Background(), *dataDir, *out, *task, *script, strings.Split(*sets, ","), *seeds, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "defaults:", err)
		os.Exit(1)
	}
}

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
	return writeTable(out, dss, seeds)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
