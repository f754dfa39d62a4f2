package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeModel trains with args and --out into a temporary file and returns
// its path.
func writeModel(t *testing.T, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.json")
	if _, _, err := call(t, append([]string{"train", "--log-level", "error", "--out", path}, args...)...); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCertify(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--mechanism", "gamma"}, []string{"mechanism      gamma", "epsilon        1\n", "route strongly-convex-sgd", "noise source   secure", "are 1-differentially private (pure DP)"}},
		{[]string{"--mechanism", "gaussian-analytic", "--epsilon", "2", "--delta", "1e-5", "--noise", "seeded"},
			[]string{"mechanism      gaussian-analytic", "epsilon        2\n", "delta          1e-05", "(2, 1e-05)-differentially private", "seeded: not for release", "fitted on the training split"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			path := writeModel(t, tt.args...)
			stdout, _, err := call(t, "certify", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append(tt.want, "Privacy certificate (stabpriv-certificate/1)", "n = 455", "Not covered:") {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

func TestCertifyErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// A private model file whose model has lost a weight.
	private, err := os.ReadFile(writeModel(t, "--mechanism", "laplace", "--noise", "seeded"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(private, &doc); err != nil {
		t.Fatal(err)
	}
	model := doc["model"].(map[string]any)
	model["w"] = model["w"].([]any)[1:]
	short, _ := json.Marshal(doc)

	tests := []struct {
		name string
		args []string
		code int
		is   error
		msg  string
	}{
		{"no file", nil, 2, nil, "want one model file, have 0"},
		{"two files", []string{"a.json", "b.json"}, 2, nil, "have 2"},
		{"unknown flag", []string{"--eps", "1", "a.json"}, 2, nil, "-eps"},
		{"missing file", []string{filepath.Join(dir, "none.json")}, 1, os.ErrNotExist, "none.json"},
		{"not private", []string{writeModel(t)}, 1, errNotPrivate, "this model is not private: it was trained with --mechanism none"},
		{"malformed JSON", []string{write("bad.json", `{"format": "stabpriv-model/1", "model": `)}, 1, nil, "malformed model file"},
		{"not an object", []string{write("list.json", `[1, 2]`)}, 1, nil, "malformed model file"},
		{"not a model file", []string{write("empty.json", `{}`)}, 1, nil, "not a stabpriv model file"},
		{"private without certificate", []string{write("nocert.json", `{"format": "stabpriv-model/1", "private": true}`)}, 1, nil, "marked private but holds no certificate"},
		{"weights not covered", []string{write("short.json", string(short))}, 1, nil, "covers 31 weights, but the model has 30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := call(t, append([]string{"certify"}, tt.args...)...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", stdout)
			}
			if code := exitCode(err); code != tt.code {
				t.Errorf("exit code %d, want %d: %v", code, tt.code, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

func TestCertifyHelp(t *testing.T) {
	stdout, _, err := call(t, "help", "certify")
	if err != nil || !strings.Contains(stdout, "Usage: stabpriv certify model.json") {
		t.Errorf("help certify: %v\n%s", err, stdout)
	}
	stdout, _, err = call(t, "help")
	if err != nil || !strings.Contains(stdout, "certify  print the privacy certificate") {
		t.Errorf("help: %v\n%s", err, stdout)
	}
}
