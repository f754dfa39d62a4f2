package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestQuickstart(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	i := strings.Index(out.String(), "test accuracy: ")
	if i < 0 {
		t.Fatalf("no accuracy in:\n%s", out.String())
	}
	var acc float64
	if _, err := fmt.Sscan(out.String()[i+len("test accuracy: "):], &acc); err != nil || acc < 0.9 {
		t.Errorf("test accuracy %v (%v), want >= 0.9", acc, err)
	}
}
