package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// mnistAccount is the command line of TF Privacy's MNIST tutorial setting
// (q = 256/60000, 60 epochs of 60000/256 steps, delta = 1e-5), without the
// noise or the target.
func mnistAccount(extra ...string) []string {
	q := strconv.FormatFloat(256.0/60000, 'g', -1, 64)
	return append([]string{"account", "--sample-rate", q, "--steps", "14062", "--delta", "1e-5"}, extra...)
}

// accountJSON runs account with --json and decodes its report.
func accountJSON(t *testing.T, args ...string) accountReport {
	t.Helper()
	out, _, err := call(t, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r accountReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

// TestAccount runs account on the MNIST tutorial setting: by default both
// accountants, the PLD's 2.3817 the claim (dp_accounting's value, within
// [0.7, 1] of RDP's), RDP's 2.5966 (improved) or the published 3.01
// (classical) beside it, in words and as JSON; --accountant rdp alone; the
// noise multiplier for a target eps by each, which gives that eps back.
func TestAccount(t *testing.T) {
	out, _, err := call(t, mnistAccount("--noise-multiplier", "1.1", "--conversion", "classical")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"eps = 2.3817 at delta = 1e-05 (PLD, grid interval 0.0001: remove 2.3817, add 2.24367",
		"also: eps = 3.00828 at delta = 1e-05 (RDP order 8.8, classical conversion)",
		"14062 steps", "noise multiplier 1.1", "add/remove-one neighbours", "replace-one neighbours (group privacy): eps = 4.763"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
	out, _, err = call(t, mnistAccount("--noise-multiplier", "1.1", "--conversion", "classical", "--accountant", "rdp")...)
	if err != nil || !strings.HasPrefix(out, "eps = 3.00828 at delta = 1e-05 (RDP order 8.8, classical conversion)") ||
		!strings.Contains(out, "replace-one neighbours (group privacy): eps = 6.01655") || strings.Contains(out, "PLD") {
		t.Errorf("--accountant rdp: %v\n%s", err, out)
	}

	r := accountJSON(t, mnistAccount("--noise-multiplier", "1.1")...)
	if r.RDPEpsilon == nil || math.Abs(*r.RDPEpsilon-2.59655586896075) > 1e-8 || r.Order != 8.1 || r.Conversion != "improved" || r.Neighbours != "add/remove one" ||
		r.NoiseMultiplier != 1.1 || r.Steps != 14062 || r.Delta != 1e-5 || r.TargetEpsilon != 0 || r.ExcludedOrders != nil {
		t.Errorf("RDP: %+v", r)
	}
	if p := r.PLD; r.Accountant != "pld" || p == nil || r.Epsilon != p.Epsilon || math.Abs(p.Epsilon-2.381686) > 5e-5 || p.Epsilon != max(p.Remove, p.Add) ||
		p.Interval != 1e-4 || p.Tail != 1e-15 || p.TailDelta <= 0 || p.RoundingDelta <= 0 || p.TailDelta+p.RoundingDelta > 1e-9 {
		t.Errorf("PLD: %+v, %+v", r, r.PLD)
	}
	if ratio := r.Epsilon / *r.RDPEpsilon; ratio < 0.7 || ratio > 1 {
		t.Errorf("PLD / RDP = %v, want in [0.7, 1]", ratio)
	}
	if b := r.ReplaceOne; b == nil || b.Epsilon != 2*r.Epsilon || math.Abs(b.Delta-(1+math.Exp(r.Epsilon))*1e-5) > 1e-15 {
		t.Errorf("replace-one: %+v", b)
	}

	inv := accountJSON(t, mnistAccount("--epsilon", "2")...)
	if inv.TargetEpsilon != 2 || inv.Epsilon > 2 || inv.Accountant != "pld" || math.Abs(inv.NoiseMultiplier-1.22419) > 1e-5 || math.Abs(inv.RDPNoise-1.29523) > 1e-5 {
		t.Errorf("--epsilon 2: %+v", inv)
	}
	back := accountJSON(t, mnistAccount("--noise-multiplier", strconv.FormatFloat(inv.NoiseMultiplier, 'g', -1, 64))...)
	if back.Epsilon != inv.Epsilon || back.Accountant != "pld" {
		t.Errorf("the noise multiplier of --epsilon 2 gives %+v, not %+v", back, inv)
	}
	out, _, err = call(t, mnistAccount("--epsilon", "2")...)
	if err != nil || !strings.Contains(out, "noise multiplier = 1.22419: the smallest that meets eps = 2 at delta = 1e-05 (PLD)") ||
		!strings.Contains(out, "RDP needs noise multiplier 1.29523 for it") {
		t.Errorf("--epsilon 2 in words: %v\n%s", err, out)
	}
	rdp := accountJSON(t, mnistAccount("--epsilon", "2", "--accountant", "rdp")...)
	if math.Abs(rdp.NoiseMultiplier-1.29523) > 1e-5 || rdp.Accountant != "rdp" || rdp.PLD != nil {
		t.Errorf("--epsilon 2 --accountant rdp: %+v", rdp)
	}
	pld := accountJSON(t, mnistAccount("--noise-multiplier", "1.1", "--accountant", "pld", "--pld-interval", "2e-4")...)
	if pld.RDPEpsilon != nil || pld.PLD == nil || pld.PLD.Interval != 2e-4 || math.Abs(pld.Epsilon-2.3817) > 1e-3 || pld.Epsilon < r.Epsilon {
		t.Errorf("--accountant pld --pld-interval 2e-4: %+v", pld)
	}

	// A large eps: (1 + e^eps) delta >= 1 gives no replace-one guarantee.
	args := []string{"account", "--sample-rate", "0.5", "--noise-multiplier", "0.5", "--steps", "10", "--delta", "1e-5"}
	if out, _, err = call(t, args...); err != nil || !strings.Contains(out, "replace-one neighbours: no guarantee") {
		t.Errorf("large eps: %v\n%s", err, out)
	}
	if r := accountJSON(t, args...); r.ReplaceOne != nil {
		t.Errorf("large eps: replace_one %+v", r.ReplaceOne)
	}

	// A grid too wide for the PLD: RDP is the claim, the PLD's reason is
	// printed (and with --accountant pld it is a usage error).
	wide := []string{"account", "--sample-rate", "1", "--noise-multiplier", "0.01", "--steps", "1000", "--delta", "1e-5"}
	out, _, err = call(t, wide...)
	if err != nil || !strings.Contains(out, "(RDP order") || !strings.Contains(out, "PLD: no bound (accountant: privacy loss distribution too wide for its grid") {
		t.Errorf("a grid too wide: %v\n%s", err, out)
	}
	if r := accountJSON(t, wide...); r.Accountant != "rdp" || r.PLD != nil || !strings.Contains(r.PLDError, "raise the interval, or use RDP") {
		t.Errorf("a grid too wide, JSON: %+v", r)
	}

	// A target the RDP cannot reach (classical conversion, even at the
	// largest noise multiplier it searches) that the PLD meets: the PLD
	// is the claim and the RDP's reason is printed.
	hard := []string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5", "--epsilon", "0.01", "--conversion", "classical"}
	out, _, err = call(t, hard...)
	if err != nil || !strings.HasPrefix(out, "noise multiplier = ") || !strings.Contains(out, "(PLD)") ||
		!strings.Contains(out, "RDP: no bound (accountant: target budget unreachable") || strings.Contains(out, "RDP needs") {
		t.Errorf("a target RDP cannot reach: %v\n%s", err, out)
	}
	if r := accountJSON(t, hard...); r.Accountant != "pld" || r.PLD == nil || r.Epsilon > 0.01 || r.NoiseMultiplier != r.PLD.NoiseMultiplier ||
		r.RDPEpsilon != nil || r.RDPNoise != 0 || !strings.Contains(r.RDPError, "raise eps or delta, or use the improved conversion") {
		t.Errorf("a target RDP cannot reach, JSON: %+v", r)
	}

	if out, _, err = call(t, "help", "account"); err != nil || !strings.Contains(out, "Usage: stabpriv account") || !strings.Contains(out, "-noise-multiplier") || !strings.Contains(out, "-pld-interval") {
		t.Errorf("help account: %v\n%s", err, out)
	}
}

// TestAccountUsageErrors checks that every bad command line of account is
// a usage error (exit status 2) that names the reason, with nothing on
// standard output.
func TestAccountUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"account"}, "missing --sample-rate, --steps, --delta, --noise-multiplier (for eps) or --epsilon (for the noise)"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5"}, "missing --noise-multiplier (for eps) or --epsilon"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--noise-multiplier", "1"}, "missing --delta (see stabpriv help account)"},
		{mnistAccount("--noise-multiplier", "1", "--epsilon", "2"), "--noise-multiplier and --epsilon exclude each other"},
		{mnistAccount("--noise-multiplier", "0"), "noise multiplier 0, want finite > 0"},
		{mnistAccount("--noise-multiplier", "NaN"), "noise multiplier NaN"},
		{mnistAccount("--noise-multiplier", "abc"), "--noise-multiplier"},
		{mnistAccount("--noise-multiplier", "1", "--conversion", "tight"), `--conversion: accountant: invalid argument: conversion "tight"`},
		{mnistAccount("--noise-multiplier", "1", "extra"), `unexpected argument "extra"`},
		{[]string{"account", "--sample-rate", "1.5", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1"}, "sample rate q = 1.5, want 0 <= q <= 1"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "0", "--delta", "1e-5", "--noise-multiplier", "1"}, "0 steps, want at least 1"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1", "--noise-multiplier", "1"}, "delta = 1, want 0 < delta < 1"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "0", "--noise-multiplier", "1"}, "delta = 0"},
		{[]string{"account", "--sample-rate", "0", "--steps", "10", "--delta", "1e-5", "--epsilon", "1"}, "want 0 < q <= 1 to calibrate noise"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5", "--epsilon", "-1"}, "target eps = -1"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5", "--epsilon", "0.01", "--conversion", "classical", "--accountant", "rdp"}, "raise eps or delta, or use the improved conversion"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1e-300", "--accountant", "both"}, "no finite eps at any order: the RDP is +Inf"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1e-300"}, "no finite eps at any order: the RDP is +Inf at all 156 orders: add noise"},
		{mnistAccount("--noise-multiplier", "1", "--accountant", "tight"), `--accountant "tight", want pld, rdp or both`},
		{mnistAccount("--noise-multiplier", "1", "--pld-interval", "0"), "--pld-interval 0, want a finite interval > 0 (nats)"},
		{mnistAccount("--noise-multiplier", "1", "--pld-interval", "NaN"), "--pld-interval NaN"},
		{[]string{"account", "--sample-rate", "1", "--steps", "1000", "--delta", "1e-5", "--noise-multiplier", "0.01", "--accountant", "pld"}, "too wide for its grid"},
		{[]string{"account", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-16", "--noise-multiplier", "1", "--accountant", "pld"}, "truncated masses and rounding allowance"},
	} {
		out, _, err := call(t, tc.args...)
		if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: exit %d, %v; want 2 and %q", tc.args, code, err, tc.msg)
		}
		if out != "" {
			t.Errorf("%q: printed %q", tc.args, out)
		}
	}
}

// TestAccountGuide runs the command lines of docs/GUIDE.md's section on
// account and checks that the numbers the section quotes are the ones
// printed.
func TestAccountGuide(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "GUIDE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line, extra  string // extra: flags the GUIDE names in words
		printed, doc string
	}{
		{"account --sample-rate 0.0042667 --noise-multiplier 1.1 --steps 14062 --delta 1e-5", "",
			"eps = 2.38172 at delta = 1e-05 (PLD", "eps = 2.38172 by PLD (the claim)"},
		{"account --sample-rate 0.0042667 --noise-multiplier 1.1 --steps 14062 --delta 1e-5", "",
			"also: eps = 2.59658 at delta = 1e-05 (RDP order 8.1", "eps = 2.59658 at RDP order 8.1 beside"},
		{"account --sample-rate 0.0042667 --noise-multiplier 1.1 --steps 14062 --delta 1e-5", "--conversion classical",
			"eps = 3.0083 at delta = 1e-05 (RDP order 8.8", "`--conversion classical` prints 3.0083 at order 8.8"},
		{"account --sample-rate 0.0042667 --epsilon 2 --steps 14062 --delta 1e-5", "",
			"noise multiplier = 1.2242:", "1.2242 by PLD here"},
		{"account --sample-rate 0.0042667 --epsilon 2 --steps 14062 --delta 1e-5", "",
			"RDP needs noise multiplier 1.29524", "where RDP needs\n1.29524"},
	} {
		if !strings.Contains(string(guide), "stabpriv "+tc.line) || !strings.Contains(string(guide), tc.doc) {
			t.Errorf("the GUIDE does not show %q and %q", tc.line, tc.doc)
		}
		out, _, err := call(t, strings.Fields(tc.line+" "+tc.extra)...)
		if err != nil || !strings.Contains(out, tc.printed) {
			t.Errorf("%s %s: %v\n%s\nwant %q", tc.line, tc.extra, err, out, tc.printed)
		}
	}
}

// TestAccountRoundsUp checks that the words never round a number below
// the accountant's: the noise multiplier printed for a target eps, given
// back as --noise-multiplier, meets the target by the same accountant (the
// nearest 6 digits, 2.38225 for 2.382252..., did not), and every printed
// eps and delta is at or above the JSON's.
func TestAccountRoundsUp(t *testing.T) {
	base := []string{"account", "--sample-rate", "0.01", "--steps", "1000", "--delta", "1e-5"}
	for _, acct := range []string{"both", "rdp"} {
		for _, eps := range []string{"0.5", "1"} {
			args := append(slices.Clone(base), "--epsilon", eps, "--accountant", acct)
			out, _, err := call(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			var sigma string
			if _, err := fmt.Sscanf(out, "noise multiplier = %s", &sigma); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			sigma = strings.TrimSuffix(sigma, ":")
			back := accountJSON(t, append(slices.Clone(base), "--noise-multiplier", sigma, "--accountant", acct)...)
			if target, _ := strconv.ParseFloat(eps, 64); back.Epsilon > target {
				t.Errorf("--accountant %s: the printed noise multiplier %s gives eps = %v, above %s", acct, sigma, back.Epsilon, eps)
			}
			words, _, err := call(t, append(slices.Clone(base), "--noise-multiplier", sigma, "--accountant", acct)...)
			if err != nil {
				t.Fatal(err)
			}
			var printed, rdelta, reps float64
			if _, err := fmt.Sscanf(words, "eps = %g", &printed); err != nil || printed < back.Epsilon {
				t.Errorf("--accountant %s: prints eps = %v for %v (%v)\n%s", acct, printed, back.Epsilon, err, words)
			}
			i := strings.Index(words, "replace-one neighbours (group privacy): ")
			if i < 0 || back.ReplaceOne == nil {
				t.Fatalf("no replace-one budget:\n%s", words)
			}
			if _, err := fmt.Sscanf(words[i:], "replace-one neighbours (group privacy): eps = %g, delta = %g", &reps, &rdelta); err != nil ||
				reps < back.ReplaceOne.Epsilon || rdelta < back.ReplaceOne.Delta {
				t.Errorf("--accountant %s: replace-one printed (%v, %v) for %+v (%v)", acct, reps, rdelta, *back.ReplaceOne, err)
			}
		}
	}
	for _, tc := range []struct {
		x      float64
		digits int
		want   string
	}{
		{2.382252425041017, 6, "2.38226"}, {2.38225, 6, "2.38225"}, {9.9999951, 6, "10"}, {1.0000001, 6, "1.00001"},
		{8.3912e-5, 3, "8.4e-05"}, {8.39e-5, 3, "8.39e-05"}, {0, 6, "0"}, {-1.5e-7, 2, "-1.5e-07"}, {math.Inf(1), 6, "+Inf"},
	} {
		if got := up(tc.x, tc.digits); got != tc.want {
			t.Errorf("up(%v, %d) = %q, want %q", tc.x, tc.digits, got, tc.want)
		}
	}
}
