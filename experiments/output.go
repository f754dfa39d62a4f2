package experiments

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("experiments: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(path) // no empty or partial file is left behind
		return fmt.Errorf("experiments: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("experiments: %w", err)
	}
	return nil
}

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
// written.
func WriteSweep(dir string, rows []Result, sum Summary) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"results.csv", func(w io.Writer) error { return WriteResultsCSV(w, rows) }},
		{"summary.json", writeJSON(sum)},
		{"fig1.png", func(w io.Writer) error { return Figure1(w, rows) }},
		{"frontier.png", func(w io.Writer) error { return Frontier(w, rows) }},
	}
	if len(sum.FixedPoints) > 0 {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{"fig2.png", func(w io.Writer) error { return Figure2(w, rows) }})
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := writeFile(p, f.write); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
