package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/cmd/runflags"
)

// TestURLRefused: an output path that begins as a URL ("scheme://", the
// scheme as RFC 3986, section 3.1, spells it) is a usage error of CheckFile
// and CheckDir, and nothing is created in the working directory (the
// system would read "s3://b/m.json" as the local path s3:/b/m.json); a
// local path with "://" after something that is not a scheme, or with a
// colon alone, is a local path.
func TestURLRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, path := range []string{"s3://bucket/m.json", "gs://b/dir/m.json", "memfs://m.json", "S3://b/m.json", "git+ssh://host/m", "a1.b-c://x", "file:///tmp/m.json", "file:/tmp/m.json", "FILE:/m.json"} {
		if got := urlScheme(path); got == "" {
			t.Errorf("urlScheme(%q) = %q, want the scheme", path, got)
		}
		var ue *runflags.UsageError
		if err := CheckFile("--out", path, AnyFile); !errors.As(err, &ue) {
			t.Errorf("CheckFile(%q): %v, want a usage error", path, err)
		}
		if err := CheckDir("--out", path, AnyFile, nil, "pdp.csv"); !errors.As(err, &ue) {
			t.Errorf("CheckDir(%q): %v, want a usage error", path, err)
		}
	}
	for _, path := range []string{"m.json", "out/m.json", "./s3://b/m.json", "1s3://b", "s_3://b", "://b", "c:/m.json", "s3:/b/m.json", "file:m.json", "file:"} {
		if got := urlScheme(path); got != "" {
			t.Errorf("urlScheme(%q) = %q, want a local path", path, got)
		}
	}
	if err := CheckFile("--out", filepath.Join("out", "m.json"), Keep); err != nil {
		t.Errorf("a local path: %v", err)
	}
	if entries, err := os.ReadDir("."); err != nil || len(entries) != 0 {
		t.Errorf("the checks wrote %v (%v)", entries, err)
	}
}

// TestDashRefused: "-", which a user means as standard output, is refused
// as an output path or directory, and "./-" is a path.
func TestDashRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	var ue *runflags.UsageError
	if err := CheckFile("--out", "-", AnyFile); !errors.As(err, &ue) || !strings.Contains(err.Error(), "./-") {
		t.Errorf("CheckFile(-): %v, want a usage error naming ./-", err)
	}
	if err := CheckDir("--out", "-", AnyFile, nil, "pdp.csv"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "./-") {
		t.Errorf("CheckDir(-): %v, want a usage error naming ./-", err)
	}
	if err := CheckFile("--out", "./-", Keep); err != nil {
		t.Errorf("CheckFile(./-): %v", err)
	}
}

// TestExistingModelFile: an existing model file as the output is refused
// by a command that may replace files with --force (Keep: the message
// names --force) and by one that never replaces a model file (NotModels:
// the message says so); AnyFile replaces it.
func TestExistingModelFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(path, []byte(`{"format": "stabpriv-model/1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rep  Replace
		want string
	}{{Keep, "is a model file; give a new path (or --force"}, {NotModels, "never replaces a model file"}, {AnyFile, ""}} {
		err := CheckFile("--out", path, tc.rep)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v, want nil", tc.rep, err)
		case tc.want != "" && (!errors.Is(err, runflags.ErrUsage) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want a usage error saying %q", tc.rep, err, tc.want)
		}
	}
}
