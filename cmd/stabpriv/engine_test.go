package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireGraphEngine skips a test of --engine graph in a build without the
// Gorgonia engine; make test runs those tests again with -tags graph.
func requireGraphEngine(t *testing.T) {
	t.Helper()
	if !graphEngine {
		t.Skip("--engine graph needs a stabpriv built with -tags graph (make test runs this test with it)")
	}
}

// TestEngineGraphBuild checks --engine graph in both builds: without
// -tags graph it is a usage error (exit status 2) that names the tag,
// before any row is read or file written; with the tag it trains.
func TestEngineGraphBuild(t *testing.T) {
	out := filepath.Join(t.TempDir(), "model.json")
	stdout, stderr, err := call(t, "train", "--mechanism", "none", "--engine", "graph", "--passes", "1", "--out", out)
	if graphEngine {
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if !strings.Contains(stdout, "model written to") {
			t.Errorf("output lacks the model file:\n%s", stdout)
		}
		return
	}
	if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), "-tags graph") {
		t.Fatalf("exit status %d, err %v: want 2 and the build tag named", code, err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused run left %s (stat: %v)", out, err)
	}
}
