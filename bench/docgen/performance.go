package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

// benchResult is every run of one benchmark: per unit, the values.
type benchResult struct {
	pkg, name string
	units     []string
	values    map[string][]float64
}

// readBench parses `go test -bench` output: the pkg lines and the
// benchmark lines (name, iterations, then value-unit pairs).
func readBench(path string) ([]*benchResult, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var out []*benchResult
	by := map[string]*benchResult{}
	pkg, cpu := "", ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(strings.TrimSpace(v), "github.com/stabpriv/stabpriv/")
			continue
		}
		if v, ok := strings.CutPrefix(line, "cpu: "); ok {
			cpu = strings.TrimSpace(v)
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue
		}
		key := pkg + " " + fields[0]
		r := by[key]
		if r == nil {
			r = &benchResult{pkg: pkg, name: strings.TrimPrefix(fields[0], "Benchmark"), values: map[string][]float64{}}
			by[key] = r
			out = append(out, r)
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			u := fields[i+1]
			if !slices.Contains(r.units, u) {
				r.units = append(r.units, u)
			}
			r.values[u] = append(r.values[u], v)
		}
	}
	return out, cpu, sc.Err()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// fmtNs prints nanoseconds in the unit that suits them.
func fmtNs(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.1f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.2f us", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	}
	return fmt.Sprintf("%.2f s", ns/1e9)
}

func fmtUnit(v float64, unit string) string {
	if strings.HasPrefix(unit, "ns/") {
		return fmtNs(v) + strings.TrimPrefix(unit, "ns")
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + unit
}

// benchTable renders every benchmark: runs, min and median per op and of
// each reported metric, bytes and allocations per op.
func benchTable(results []*benchResult) string {
	var rows [][]string
	for _, r := range results {
		ns := r.values["ns/op"]
		var metrics []string
		for _, u := range r.units {
			if u == "ns/op" || u == "B/op" || u == "allocs/op" {
				continue
			}
			vs := r.values[u]
			metrics = append(metrics, fmt.Sprintf("%s / %s", fmtUnit(slices.Min(vs), u), fmtUnit(median(vs), u)))
		}
		row := []string{r.pkg, r.name, strconv.Itoa(len(ns)), fmt.Sprintf("%s / %s", fmtNs(slices.Min(ns)), fmtNs(median(ns))),
			strings.Join(metrics, "; ")}
		if b, ok := r.values["B/op"]; ok {
			row = append(row, strconv.FormatFloat(median(b), 'f', 0, 64), strconv.FormatFloat(median(r.values["allocs/op"]), 'f', 0, 64))
		} else {
			row = append(row, "", "")
		}
		rows = append(rows, row)
	}
	return table([]string{"package", "benchmark", "runs", "time per op, min / median", "reported metrics, min / median", "B/op", "allocs/op"}, rows)
}

func performance(args []string) error {
	fs := fileFlag("performance")
	benchPath := fs.String("bench", "out/bench.txt", "go test -bench output")
	side := fs.String("sidebyside", "out/sidebyside.md", "bench/compare.sh's table (bench/summarize.py)")
	envPath := fs.String("env", "out/sidebyside.env.jsonl", "bench/compare.sh's record of versions and the machine")
	out := fs.String("o", "docs/PERFORMANCE.md", "the file to write (- for standard output)")
	command := fs.String("command", "make bench", "the command named at the top of the document")
	fs.Parse(args)
	m := newMachine(*command)
	m.Peers = peers(readEnv(*envPath))
	data := struct {
		Header, Bench, SideBySide, BenchCPU string
	}{Header: m.Header("performance.md.tmpl")}
	if results, cpu, err := readBench(*benchPath); err == nil && len(results) > 0 {
		data.Bench, data.BenchCPU = benchTable(results), cpu
	} else {
		data.Bench = fmt.Sprintf("*Not measured: %s is missing or holds no benchmark.*", *benchPath)
	}
	if b, err := os.ReadFile(*side); err == nil && len(b) > 0 {
		data.SideBySide = strings.TrimSpace(string(b))
	} else {
		data.SideBySide = fmt.Sprintf("*Not measured: %s is missing (bench/compare.sh skips without python3-sklearn and python3-pandas).*", *side)
	}
	return render("performance.md.tmpl", performanceTemplate, template.FuncMap{}, data, *out)
}
