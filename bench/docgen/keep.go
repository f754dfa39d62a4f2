package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// section is a part of a Markdown document that starts at a heading
// ("## " or "### "); the first section holds what precedes the first
// heading.
type section struct {
	heading string
	body    string
}

// sections splits a document at its "## " and "### " headings.
func sections(doc string) []section {
	var out []section
	cur := section{}
	var b strings.Builder
	for _, line := range strings.SplitAfter(doc, "\n") {
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ") {
			cur.body = b.String()
			out = append(out, cur)
			cur, b = section{heading: strings.TrimSpace(line)}, strings.Builder{}
			b.WriteString(line)
			continue
		}
		b.WriteString(line)
	}
	cur.body = b.String()
	return append(out, cur)
}

// absent reports whether a rendered section stands for outputs this run
// did not have: a table that says "Not run", or a figure that is "n/a".
func absent(body string) bool {
	return strings.Contains(body, "*Not run:") || strings.Contains(body, " n/a") || strings.Contains(body, "(n/a")
}

// keptNote starts a section carried over from an earlier document.
const keptNote = "*Not re-run at this commit: this run's directory had none of this section's outputs, so the section is kept as the document made at commit `%s` gave it; its figures are that commit's.*\n\n"

var commitRE = regexp.MustCompile("at commit `([^`]+)`")
var keptRE = regexp.MustCompile("^\\*Not re-run at this commit: [^\n]*\n\n")

// keepSections returns doc with every section whose outputs were absent
// replaced by the same section of the earlier document at old (when it
// has one whose figures were present), under a note naming the commit that
// made them, so that no figure of an earlier run reads as current and none
// is lost. A section kept twice keeps its first note (the commit of its
// figures).
func keepSections(doc, old string) (string, []string) {
	commit := "unknown"
	if m := commitRE.FindStringSubmatch(old); m != nil {
		commit = m[1]
	}
	prev := map[string]string{}
	for _, s := range sections(old) {
		if s.heading != "" && !absent(s.body) {
			prev[s.heading] = s.body
		}
	}
	var b strings.Builder
	var kept []string
	for _, s := range sections(doc) {
		body, ok := prev[s.heading]
		if s.heading == "" || !absent(s.body) || !ok {
			b.WriteString(s.body)
			continue
		}
		head, rest, _ := strings.Cut(body, "\n")
		rest = strings.TrimLeft(rest, "\n")
		note := fmt.Sprintf(keptNote, commit)
		if m := keptRE.FindString(rest); m != "" {
			note, rest = m, rest[len(m):]
		}
		b.WriteString(head + "\n\n" + note + rest)
		kept = append(kept, s.heading)
	}
	return b.String(), kept
}

// keepFrom applies keepSections to the rendered file out with the earlier
// document old (read before out was written), and reports the sections
// kept on standard error.
func keepFrom(out, old string) error {
	doc, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	merged, kept := keepSections(string(doc), old)
	for _, h := range kept {
		fmt.Fprintf(os.Stderr, "docgen: %s: kept from the earlier document (its outputs are absent)\n", h)
	}
	return os.WriteFile(out, []byte(merged), 0o644)
}
