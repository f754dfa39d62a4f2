package experiments

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stabpriv/stabpriv/internal/safefile"
)

// writeJSON writes v as indented JSON.
func writeJSON(v any) func(io.Writer) error {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}

// WriteSweep writes the outputs of a sweep into dir (created if needed):
// results.csv (every row), summary.json (sum), fig1.png (Figure1),
// frontier.png (Frontier) and,
// when rows has fixed-scale rows, fig2.png (Figure2). It returns the paths
// written. An existing file there is replaced only with replace; without
// it, of concurrent writers into one directory exactly one writes its
// files (writeAll).
func WriteSweep(dir string, rows []Result, sum Summary, replace bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	files := []namedWriter{
		{"results.csv", func(w io.Writer) error { return WriteResultsCSV(w, rows) }},
		{"summary.json", writeJSON(sum)},
		{"fig1.png", func(w io.Writer) error { return Figure1(w, rows) }},
		{"frontier.png", func(w io.Writer) error { return Frontier(w, rows) }},
	}
	if len(sum.FixedPoints) > 0 {
		files = append(files, namedWriter{"fig2.png", func(w io.Writer) error { return Figure2(w, rows) }})
	}
	return writeAll(dir, replace, files)
}

// namedWriter is an output file of an experiment: its name and contents.
type namedWriter struct {
	name  string
	write func(io.Writer) error
}

// writeAll writes the files into dir, all or none (safefile.WriteAll), and
// returns their paths. Without replace, no existing file is replaced
// (safefile.New): a file that appeared since the command checked its
// outputs fails the write, and nothing is written.
func writeAll(dir string, replace bool, files []namedWriter) ([]string, error) {
	mode := safefile.New
	if replace {
		mode = safefile.Replace
	}
	var paths []string
	var out []safefile.File
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		out = append(out, safefile.File{Path: p, Perm: 0o644, Mode: mode, Write: f.write})
		paths = append(paths, p)
	}
	if err := safefile.WriteAll(out); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	return paths, nil
}
