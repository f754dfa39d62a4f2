package main

import (
	"strings"
	"testing"
)

// TestKeepSections checks that a section whose outputs are absent is
// taken from the earlier document under a note naming its commit, that a
// section this run made is never replaced, that a section kept twice keeps
// its first note, and that a section absent from both stays as rendered.
func TestKeepSections(t *testing.T) {
	old := "Made at commit `abc123`.\n\n## A\n\nold A 0.84\n\n## B\n\nold B\n\n## C\n\n*Not run: c is missing.*\n"
	doc := "Made at commit `def456`.\n\n## A\n\n*Not run: a is missing.*\n\n## B\n\nnew B\n\n## C\n\n*Not run: c is missing.*\n"
	got, kept := keepSections(doc, old)
	want := "Made at commit `def456`.\n\n## A\n\n" + strings.Replace(keptNote, "%s", "abc123", 1) + "old A 0.84\n\n## B\n\nnew B\n\n## C\n\n*Not run: c is missing.*\n"
	if got != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	if len(kept) != 1 || kept[0] != "## A" {
		t.Errorf("kept %v, want [## A]", kept)
	}
	// Kept again from the merged document at a later commit: the note
	// still names abc123, the commit of the figures.
	again, _ := keepSections(strings.Replace(doc, "def456", "0f0f0f", 1), got)
	if !strings.Contains(again, "commit `abc123` gave it") || strings.Count(again, "Not re-run") != 1 {
		t.Errorf("kept twice:\n%s", again)
	}
}
