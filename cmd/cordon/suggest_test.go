package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestDidYouMean(t *testing.T) {
	cands := []string{"run", "profile", "explain", "detect", "verify", "version", "doctor"}
	for _, c := range []struct{ word, want string }{
		{"verfiy", " (did you mean verify?)"},
		{"detetc", " (did you mean detect?)"},
		{"docter", " (did you mean doctor?)"},
		{"rnu", " (did you mean run?)"},
		{"prof", " (did you mean profile?)"},
		{"xyzzy", ""},
		{"r", ""},
	} {
		if got := didYouMean(c.word, cands, ""); got != c.want {
			t.Errorf("didYouMean(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

func TestUnknownSuggests(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verfiy"}, `unknown command "verfiy" (did you mean verify?)`},
		{[]string{"run", "--workspce", ".", "--", "true"}, "unknown flag --workspce (did you mean --workspace?)"},
		{[]string{"detect", "--jsno"}, "unknown flag --jsno (did you mean --json?)"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, strings.NewReader(""), &out, &errb)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", c.args, code, exitUsage)
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: stderr %q, want it to contain %q", c.args, errb.String(), c.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"completion", sh}, strings.NewReader(""), &out, &errb); code != exitOK {
			t.Fatalf("completion %s: exit %d: %s", sh, code, errb.String())
		}
		for _, w := range []string{"verify", "--workspace", "--allow-domain", "audit verify"} {
			if sh == "fish" {
				w = strings.Replace(w, "--", "-l ", 1) // fish names a long flag so
			}
			if !strings.Contains(out.String(), w) {
				t.Errorf("completion %s does not name %q", sh, w)
			}
		}
	}
	words := completionWords(commands)
	if !strings.Contains(strings.Join(words["run"], " "), "--workspace") || !strings.Contains(strings.Join(words[""], " "), "completion") {
		t.Errorf("completionWords: run %v, top %v", words["run"], words[""])
	}
}

func TestShownLinesKeepsTabs(t *testing.T) {
	got := shownLines("+\t\"a\": 1,\n-\x1b[2J\tx\n")
	if want := "+\t\"a\": 1,\n-\\x1b[2J\tx\n"; got != want {
		t.Errorf("shownLines: got %q, want %q", got, want)
	}
}

func TestPrintNotesBounded(t *testing.T) {
	var notes []string
	for i := range 1000 {
		notes = append(notes, fmt.Sprintf("note %d", i))
	}
	var errb bytes.Buffer
	printNotes(&env{name: "run", stderr: &errb}, notes)
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) != maxNotes+1 || !strings.Contains(lines[maxNotes], "and 980 more notes") {
		t.Errorf("printNotes of 1000: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	errb.Reset()
	printNotes(&env{name: "run", stderr: &errb}, notes[:maxNotes+1])
	if n := strings.Count(errb.String(), "\n"); n != maxNotes+1 {
		t.Errorf("printNotes of %d: %d lines, want all", maxNotes+1, n)
	}
}
