package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stabpriv/stabpriv/cmd/outfile"
	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/modelfile/describe"
)

// predictHelp is the help of the predict command, before its flags.
const predictHelp = "Usage: stabpriv predict --model model.json --data rows.csv [--header a,b,...] [--out predictions.csv]\n\n" +
	"Verifies the model file (as certify does; a file that does not verify is refused\n" +
	"unless --unverified), applies its bundled preprocessing and weights to every row and\n" +
	"writes one line per row: row (the data row's number, from 1 after the header, as in\n" +
	"every message), prediction and, for the logistic and softmax losses, the probability\n" +
	"of each class. When the file has the model's label column, the accuracy (or RMSE) is\n" +
	"printed on standard error, with the number of rows whose label is not one of the\n" +
	"model's classes. Nothing is written on error; --out replaces an existing file only\n" +
	"with --force, and never a model file or an input; --out - writes to standard output."

// runPredict is the predict command: it applies a model file to the rows
// of a CSV file.
func runPredict(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var model, data, header, out, logLevel string
	var unverified, force bool
	fs.StringVar(&model, "model", "", "model `file` written by train --out")
	fs.StringVar(&data, "data", "", "CSV `file` with a header naming the model's feature columns (other columns are ignored)")
	fs.StringVar(&header, "header", "", "the column `names` a,b,... of a --data file without a header row (its first line is then a data row), such as UCI Adult's adult.test once its first line, |1x3 Cross validator, is dropped")
	fs.StringVar(&out, "out", "", "write the predictions as CSV to this `file` (default, or -: standard output); an existing file is replaced only with --force, a model file never")
	fs.BoolVar(&unverified, "unverified", false, "use a model file that does not verify (a warning is printed)")
	fs.BoolVar(&force, "force", false, "replace an existing file at --out (never a model file, nor an input)")
	runflags.LogLevelVar(fs, &logLevel)
	set, err := parseFlags(fs, args, stderr, predictHelp)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if model == "" || data == "" {
		return usagef("predict needs --model FILE and --data FILE.csv")
	}
	var names []string
	if header != "" {
		if err := checkHeader(header); err != nil {
			return err
		}
		names = strings.Split(header, ",")
	}
	warnings, err := warningsTo(stderr, logLevel)
	if err != nil {
		return err
	}
	if err := checkNotEmpty(set, "out", out, "the predictions go to standard output then"); err != nil {
		return err
	}
	if out == "-" {
		out = "" // standard output
	}
	rep := keep
	if force {
		rep = notModels
	}
	if err := checkOutFile("--out", out, rep, model, data); err != nil {
		return err
	}
	r, err := readModel(model)
	if err != nil {
		return err
	}
	if _, _, err := modelfile.Verify(r); err != nil {
		if !unverified {
			return fmt.Errorf("%s: %w (--unverified uses it anyway)", model, err)
		}
		fmt.Fprintf(warnings, "WARNING: %s does not verify; its predictions are those of an unverified file: %v\n", model, err)
	}
	t, err := datasets.ReadTableFileHeader(data, names)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	score, err := r.PredictTable(t, &buf)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = stdout.Write(buf.Bytes())
	} else if err = os.MkdirAll(filepath.Dir(out), 0o755); err == nil {
		err = outfile.Write(out, force, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
	}
	if err != nil {
		return outputError("--out", err)
	}
	if score.Rows > 0 {
		fmt.Fprintf(stderr, "%s on the %d rows with a usable label: %.4f\n", score.Name, score.Rows, score.Value)
	}
	if msg := describe.Unscored(r, t, score); msg != "" {
		fmt.Fprintln(stderr, msg)
	}
	return nil
}
