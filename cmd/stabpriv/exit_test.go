package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stabpriv/stabpriv/internal/interrupt"
)

// guideExitTable reads the table under "### Exit statuses" in
// docs/GUIDE.md: for each status, the commands its last column says a test
// runs to it.
func guideExitTable(t *testing.T) map[int][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "GUIDE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := map[int][]string{}
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "### Exit statuses":
			in = true
		case in && strings.HasPrefix(line, "#"):
			in = false
		case in && strings.HasPrefix(line, "| "):
			cells := strings.Split(line, "|")
			status, err := strconv.Atoi(strings.TrimSpace(cells[1]))
			if err != nil {
				continue // the header
			}
			for _, c := range strings.Split(cells[len(cells)-2], ",") {
				table[status] = append(table[status], strings.TrimSpace(c))
			}
		}
	}
	if len(table) == 0 {
		t.Fatal("no exit-status table in docs/GUIDE.md")
	}
	return table
}

// TestExitStatusTable runs, for every row of the GUIDE's exit-status table
// and every stabpriv command its last column names, command lines that
// must exit with that status, and checks that the table names every
// command a case runs. The signals' rows are run in process, the context
// cancelled as the signal handler cancels it (TestInterrupt sends the
// signals to a process). stabpriv-beam's rows are its own module's tests.
func TestExitStatusTable(t *testing.T) {
	setProgressAfter(t, quietRun)
	dir := t.TempDir()
	csv := writeCSV(t, clusters(2, 100))
	model, notPrivate := filepath.Join(dir, "m.json"), filepath.Join(dir, "np.json")
	gamma := filepath.Join(dir, "gamma.json") // a release whose minimizer pdp analyses
	for _, args := range [][]string{
		{"train", "--data", csv, "--label", "class", "--classes", "c0,c1", "--bounds-all", "-9,9", "--out", model},
		{"train", "--data", csv, "--label", "class", "--classes", "c0,c1", "--bounds-all", "-9,9", "--mechanism", "gamma", "--out", gamma},
		{"train", "--mechanism", "none", "--data", csv, "--label", "class", "--out", notPrivate},
	} {
		if _, _, err := call(t, args...); err != nil {
			t.Fatal(err)
		}
	}
	bad := writeFile(t, "bad.json", "{}\n")
	noLabel := writeFile(t, "nolabel.csv", "x1,x2\n1,2\n")
	none := filepath.Join(dir, "none")
	out := func(name string) string { return filepath.Join(dir, name) }
	paper := func(cmd, data, label, outDir string, extra ...string) []string {
		return append([]string{cmd, "--dataset", "csv", "--data", data, "--label", label, "--splits", "1", "--lambdas", "1e-2",
			"--epsilons", "1", "--passes", "1", "--log-level", "warn", "--out", outDir}, extra...)
	}
	cases := []struct {
		status int
		args   []string
		signal os.Signal // stop the run by this signal
	}{
		{0, []string{"train", "--mechanism", "none", "--data", csv, "--label", "class", "--out", out("t0.json")}, nil},
		{0, []string{"certify", model}, nil},
		{0, []string{"predict", "--model", model, "--data", csv, "--out", out("p0.csv")}, nil},
		{0, paper("sweep", csv, "class", out("sweep0")), nil},
		{0, paper("featsel", csv, "class", out("featsel0")), nil},
		{0, []string{"pdp", "--data", csv, "--label", "class", "--out", out("pdp0")}, nil},
		{0, []string{"account", "--sample-rate", "0.01", "--noise-multiplier", "1", "--steps", "100", "--delta", "1e-5"}, nil},

		{1, []string{"train", "--mechanism", "none", "--batch", "100000"}, nil},

		{2, []string{"train", "--out", ""}, nil},
		{2, []string{"train", "--out", "-"}, nil},
		{2, []string{"train", "--out", model}, nil},
		{2, []string{"train", "--log-level", "loud"}, nil},
		{2, []string{"certify", "--log-level", "loud", model}, nil},
		{2, []string{"predict", "--model", model, "--data", csv, "--out", ""}, nil},
		{2, []string{"predict", "--model", model, "--data", csv, "--log-level", "loud"}, nil},
		{2, paper("sweep", csv, "class", ""), nil},
		{2, paper("sweep", csv, "class", out("sweep2"), "--log-level", "loud"), nil},
		{2, paper("featsel", csv, "class", "-"), nil},
		{2, paper("featsel", csv, "class", out("featsel2"), "--log-level", "loud"), nil},
		{2, []string{"pdp", "--out", "-"}, nil},
		{2, []string{"pdp", "--log-level", "loud", "--out", out("pdp2")}, nil},
		// A --label that names no column of the file is a usage error in every command.
		{2, []string{"train", "--mechanism", "none", "--data", csv, "--label", "nosuch", "--out", out("t2l.json")}, nil},
		{2, paper("sweep", csv, "nosuch", out("sweep2l")), nil},
		{2, paper("featsel", csv, "nosuch", out("featsel2l")), nil},
		{2, []string{"pdp", "--data", csv, "--label", "nosuch", "--out", out("pdp2l")}, nil},
		{2, []string{"account", "--sample-rate", "2", "--noise-multiplier", "1", "--steps", "100", "--delta", "1e-5"}, nil},

		{3, []string{"certify", notPrivate}, nil},

		{4, []string{"train", "--mechanism", "none", "--data", none + ".csv", "--label", "y"}, nil},
		{4, []string{"predict", "--model", model, "--data", none + ".csv"}, nil},
		{4, paper("sweep", none+".csv", "y", out("sweep4")), nil},
		{4, paper("featsel", none+".csv", "y", out("featsel4")), nil},
		{4, []string{"pdp", "--data", none + ".csv", "--label", "y", "--out", out("pdp4")}, nil},
		// A table that is not the model's (its label column missing) is the wrong input data, as in predict.
		{4, []string{"pdp", "--model", gamma, "--data", noLabel, "--out", out("pdp4l")}, nil},

		{5, []string{"certify", none + ".json"}, nil},
		{5, []string{"certify", bad}, nil},
		{5, []string{"predict", "--model", none + ".json", "--data", csv}, nil},
		{5, []string{"pdp", "--model", none + ".json", "--out", out("pdp5")}, nil},

		{129, []string{"train", "--mechanism", "none", "--out", out("t129.json")}, syscall.SIGHUP},
		{130, []string{"train", "--mechanism", "none", "--out", out("t130.json")}, os.Interrupt},
		{143, []string{"train", "--mechanism", "none", "--out", out("t143.json")}, syscall.SIGTERM},
	}
	table := guideExitTable(t)
	tested := map[int][]string{}
	for _, c := range cases {
		tested[c.status] = append(tested[c.status], c.args[0])
		ctx := context.Background()
		if c.signal != nil {
			cctx, cancel := context.WithCancelCause(ctx)
			cancel(&interrupt.Error{Signal: c.signal})
			ctx = cctx
		}
		var stdout, stderr strings.Builder
		err := runContext(ctx, c.args, &stdout, &stderr)
		if got := exitCode(err); got != c.status {
			t.Errorf("%q: exit %d, want %d: %v", c.args, got, c.status, err)
		}
	}
	for status, cmds := range table {
		var want []string
		for _, c := range cmds {
			if c != "stabpriv-beam" {
				want = append(want, c)
			}
		}
		got := slices.Compact(slices.Sorted(slices.Values(tested[status])))
		if slices.Sort(want); !slices.Equal(got, want) {
			t.Errorf("status %d: the GUIDE's table says it is tested with %v, the cases run %v", status, want, got)
		}
	}
	for status := range tested {
		if _, ok := table[status]; !ok {
			t.Errorf("status %d is tested but not in the GUIDE's table", status)
		}
	}
}
