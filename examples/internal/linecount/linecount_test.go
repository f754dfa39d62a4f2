package linecount

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	dir := t.TempDir()
	src := "package main\n\nfunc f() {\n\t" + Begin + "\n\ta := 1\n\n\t// a comment\n\t_ = a\n\t" + End + "\n\tb := 2\n}\n"
	path := filepath.Join(dir, "main.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := Count(path); err != nil || n != 2 {
		t.Errorf("Count = %d, %v; want 2", n, err)
	}
	if err := os.WriteFile(path, []byte("package main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Count(path); err == nil {
		t.Error("no markers: no error")
	}
}

// TestGuide checks that the line counts of the GUIDE's table of examples
// ("### Using the library") are those of the examples' sources.
func TestGuide(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "GUIDE.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `examples/(\\w+)` \\|.*\\| (\\d+) \\|$")
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		seen++
		want, _ := strconv.Atoi(m[2])
		if n, err := Count(filepath.Join("..", "..", m[1], "main.go")); err != nil || n != want {
			t.Errorf("examples/%s: %d lines of user code (%v), the GUIDE says %d", m[1], n, err, want)
		}
	}
	if seen < 3 {
		t.Errorf("%d examples with a line count in the GUIDE, want the matrix, featsel and stability ones", seen)
	}
}
