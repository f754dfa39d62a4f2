package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// FuzzCommandLine parses arbitrary command lines of train and pdp (one
// argument per line) in an empty directory: every line is accepted or
// refused with an error, never a panic, and a refusal of the flags is a
// usage error (exit status 2). Arguments naming paths outside the
// directory are skipped, so that no file outside it is read.
func FuzzCommandLine(f *testing.F) {
	for _, seed := range []string{
		"--mechanism\ngamma\n--epsilon\n1",
		"--mechanism\nobjective\n--passes\n3",
		"--mechanism\ngaussian-analytic\n--delta\n1e-5\n--epsilon\n0.5",
		"--lambda\nauto\n--clip\n0.1",
		"--schedule\ninverse-t\n--step\n0.1",
		"--data\nx.csv\n--label\ny\n--classes\na,b",
		"--partitions\n4\n--mechanism\nlaplace",
		"--noise\nseeded",
		"--sigma\n1\n--epsilon\n2",
		"--standardize\nweird",
		"--test-frac\n1",
		"-h",
	} {
		f.Add("train", seed)
		f.Add("pdp", seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, command, line string) {
		if strings.ContainsAny(line, "/\\\x00") || strings.Contains(line, "..") {
			return
		}
		t.Chdir(dir)
		args := strings.Split(line, "\n")
		var err error
		switch command {
		case "train":
			_, err = parseTrain(args, io.Discard)
		case "pdp":
			_, err = parsePDP(args, io.Discard)
		default:
			return
		}
		if err == nil || errors.Is(err, flag.ErrHelp) {
			return
		}
		var ue *usageError
		if !errors.As(err, &ue) && !strings.Contains(err.Error(), "no such file") && !strings.Contains(err.Error(), "matches no file") {
			t.Fatalf("%s %q: %v is not a usage error", command, args, err)
		}
	})
}
