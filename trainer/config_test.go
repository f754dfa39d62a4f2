package trainer

import (
	"encoding"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestEnumText checks that every schedule and engine marshals to its String
// name and back, that a value outside the enumeration does not marshal,
// and that unknown text is an error wrapping ErrConfig that lists the
// names and leaves the destination as it was.
func TestEnumText(t *testing.T) {
	type textEnum interface {
		encoding.TextMarshaler
		String() string
	}
	cases := []struct {
		v    textEnum
		text string
	}{
		{Constant, "constant"},
		{InverseT, "inverse-t"},
		{BoundedInverseT, "bounded-inverse-t"},
		{Custom, "custom"},
		{Native, "native"},
		{Graph, "graph"},
	}
	// parse unmarshals text into a fresh value of v's type that starts at
	// the type's last value (so a failed parse that wrote would show).
	parse := func(v textEnum, text string) (textEnum, error) {
		switch v.(type) {
		case Schedule:
			s := Custom
			err := s.UnmarshalText([]byte(text))
			return s, err
		case Engine:
			e := Graph
			err := e.UnmarshalText([]byte(text))
			return e, err
		}
		t.Fatalf("no parser for %T", v)
		return nil, nil
	}
	for _, tc := range cases {
		b, err := tc.v.MarshalText()
		if err != nil || string(b) != tc.text || tc.v.String() != tc.text {
			t.Errorf("%T %d: MarshalText %q, %v; String %q; want %q", tc.v, tc.v, b, err, tc.v.String(), tc.text)
		}
		if got, err := parse(tc.v, tc.text); err != nil || got != tc.v {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", tc.text, got, err, tc.v)
		}
	}
	for _, v := range []textEnum{Schedule(9), Schedule(-1), Engine(2)} {
		if b, err := v.MarshalText(); !errors.Is(err, ErrConfig) || b != nil {
			t.Errorf("%T(%d).MarshalText() = %q, %v; want an error wrapping ErrConfig", v, v, b, err)
		}
	}
	for _, tc := range []struct {
		v     textEnum
		text  string
		names string
	}{
		{Constant, "", "constant, inverse-t, bounded-inverse-t, custom"},
		{Constant, "Constant", "constant, inverse-t, bounded-inverse-t, custom"},
		{Constant, "inverse_t", "constant, inverse-t, bounded-inverse-t, custom"},
		{Constant, "Schedule(9)", "constant, inverse-t, bounded-inverse-t, custom"},
		{Native, "native ", "native, graph"},
		{Native, "gorgonia", "native, graph"},
	} {
		got, err := parse(tc.v, tc.text)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("UnmarshalText(%q) into %T: error %v, want one wrapping ErrConfig listing %s", tc.text, tc.v, err, tc.names)
		}
		if _, ok := got.(Schedule); (ok && got != Custom) || (!ok && got != Graph) {
			t.Errorf("UnmarshalText(%q) into %T changed it to %v", tc.text, tc.v, got)
		}
	}
}

// TestEnumFlags checks that Schedule and Engine work as command-line flags
// with flag.TextVar: the defaults, parsed names and a refused name.
func TestEnumFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		schedule Schedule
		engine   Engine
		ok       bool
	}{
		{nil, BoundedInverseT, Native, true},
		{[]string{"-schedule", "inverse-t", "-engine", "graph"}, InverseT, Graph, true},
		{[]string{"-schedule=constant"}, Constant, Native, true},
		{[]string{"-schedule", "1/t"}, 0, 0, false},
		{[]string{"-engine", "Graph"}, 0, 0, false},
	} {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var (
			s Schedule
			e Engine
		)
		fs.TextVar(&s, "schedule", BoundedInverseT, "step-size schedule")
		fs.TextVar(&e, "engine", Native, "gradient engine")
		err := fs.Parse(tc.args)
		if !tc.ok {
			if err == nil || !strings.Contains(err.Error(), "want one of") {
				t.Errorf("%q: error %v, want the list of names", tc.args, err)
			}
			continue
		}
		if err != nil || s != tc.schedule || e != tc.engine {
			t.Errorf("%q: schedule %v, engine %v, error %v; want %v, %v", tc.args, s, e, err, tc.schedule, tc.engine)
		}
	}
}
