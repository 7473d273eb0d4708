package guards

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how many shell strings (sh -c, eval, env -S, heredocs fed
// to a shell) are unpacked inside one another; deeper is denied, because
// nothing legitimate nests that far and the cost must stay bounded.
const maxDepth = 8

// maxScript bounds a shell string's length: keywords (if, while, case)
// nest without brackets, and the parser recurses once per level, so
// length is what bounds their depth (12 MB of nested ifs overflowed the
// stack, a fatal error).
const maxScript = 1 << 20

// maxNesting bounds how deeply brackets, braces and parentheses may nest
// in one shell string, counted without regard to quoting (an
// overestimate): the parser recurses once per level.
const maxNesting = 512

// nesting is the deepest run of opening (, { and [ not yet closed in src.
func nesting(src string) int {
	depth, most := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			most = max(most, depth)
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return most
}

// maxBraceWords bounds brace expansion of one word ({1..100000} is cheap to
// write and expensive to enumerate); beyond it the word counts as dynamic.
const maxBraceWords = 64

// ShellVerdict is what ClassifyShell found in a command line.
type ShellVerdict struct {
	// Deny is set for a hard-denied command and for one that does not parse.
	Deny       bool
	Unparsable bool
	// Command is the command word that decided, as the shell would run it
	// ("sudo", "rm", "dd"); Reason says why, naming the word and its context.
	Command string
	Reason  string
	// Paths are literal words that look like paths (contain a slash), with
	// globs cut to their static prefix, for the path guards.
	Paths []PathArg
}

// PathArg is a path-like word of a command; Recursive marks commands that
// descend into directories (find, grep -r, ls -R, ...).
type PathArg struct {
	Word      string
	Recursive bool
}

var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// ClassifyShell reports whether src runs a hard-denied command anywhere:
// in a pipeline, list, subshell, substitution, function body, behind a
// wrapper (the wrappers table: env, timeout, xargs, chroot, flock, ...,
// find -exec) or inside a string handed to another shell (sh -c, bash -c,
// eval, env -S, trap, flock -c, script -c, watch; a heredoc, here-string,
// echo or printf piped into sh, or into source /dev/stdin; a process
// substitution sourced). Parts of such a string known only at run time
// stand in as a placeholder word (docs/design.md §6). Only words in
// command position are matched.
func ClassifyShell(src string) ShellVerdict {
	c := &classifier{}
	c.script(src, 0, "")
	return c.v
}

type classifier struct {
	v ShellVerdict
}

// word is one shell word after brace expansion and quote removal.
type word struct {
	val    string
	static bool // fully known before run time (no expansion): see literal
	glob   bool // contains an unquoted glob
	// tmpl is val with each part known only at run time as placeholder,
	// for a word that is a shell string parsed in turn.
	tmpl string
}

func (c *classifier) deny(cmd, via, format string, a ...any) {
	if c.v.Deny {
		return
	}
	c.v.Deny, c.v.Command = true, cmd
	c.v.Reason = fmt.Sprintf(format, a...) + via
}

func (c *classifier) script(src string, depth int, via string) {
	if depth > maxDepth {
		c.deny("", via, "shell strings nested more than %d deep", maxDepth)
		return
	}
	if len(src) > maxScript {
		c.deny("", via, "the command is %d bytes long (more than %d); a command cordon cannot read is denied", len(src), maxScript)
		c.v.Unparsable = true
		return
	}
	if n := nesting(src); n > maxNesting {
		// The parser and brace expansion recurse once per level: a few
		// hundred thousand levels overflow the stack (a fatal error no
		// recover catches) and thousands of nested braces take seconds.
		c.deny("", via, "the command nests brackets or braces %d deep (more than %d); a command cordon cannot read is denied", n, maxNesting)
		c.v.Unparsable = true
		return
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		c.deny("", via, "the command does not parse (%v); a command cordon cannot read is denied", err)
		c.v.Unparsable = true
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c.v.Deny {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			c.stmt(n, depth, via)
		case *syntax.BinaryCmd:
			c.pipeToShell(n, depth, via)
		case *syntax.CallExpr:
			c.command(c.words(n.Args), depth, via)
			c.procSubst(n, depth, via)
		}
		return true
	})
}

// stmt checks redirects: writes onto a device, and scripts fed to a shell
// on stdin through a heredoc or here-string.
func (c *classifier) stmt(s *syntax.Stmt, depth int, via string) {
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob,
			syntax.RdrAll, syntax.AppAll, syntax.DplOut:
			if r.Word == nil {
				continue
			}
			if w, ok, _ := literal(r.Word); ok {
				if what, raw := rawTarget(w); raw {
					c.deny(w, via, "redirect %s writes onto %s", r.Op, what)
					return
				}
			}
			if w, ok, _ := literal(r.Word); ok && strings.Contains(w, "/") {
				c.v.Paths = append(c.v.Paths, PathArg{Word: w})
			}
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			call, isCall := s.Cmd.(*syntax.CallExpr)
			if !isCall {
				continue
			}
			fd := 0
			if r.N != nil {
				fd = descriptor(r.N.Value)
			}
			if fd < 0 || scriptFD(c.words(call.Args)) != fd {
				continue
			}
			body := r.Hdoc
			if r.Op == syntax.WordHdoc {
				body = r.Word
			}
			if body == nil {
				continue
			}
			c.script(template(body), depth+1, via+" (in a script fed to a shell)")
		}
	}
}

// pipeToShell unpacks "echo 'cmd' | sh", "printf '%s\n' 'cmd' | bash" and
// "echo 'cmd' | source /dev/stdin".
func (c *classifier) pipeToShell(b *syntax.BinaryCmd, depth int, via string) {
	if b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
		return
	}
	right, ok := b.Y.Cmd.(*syntax.CallExpr)
	if !ok || scriptFD(c.words(right.Args)) != 0 {
		return
	}
	if out, ok := c.output(b.X); ok {
		c.script(out, depth+1, via+" (piped into a shell)")
	}
}

// procSubst unpacks a script a shell or source reads from a process
// substitution: ". <(echo cmd)", "bash <(printf cmd)".
func (c *classifier) procSubst(call *syntax.CallExpr, depth int, via string) {
	// Operands are counted on the words as written (no brace expansion),
	// so the index names the syntax word.
	ws := make([]word, len(call.Args))
	for i, a := range call.Args {
		v, tmpl, ok, g := expandWord(a)
		ws[i] = word{v, ok, g, tmpl}
	}
	i := scriptOperand(ws)
	if i <= 0 || len(call.Args[i].Parts) != 1 {
		return
	}
	ps, ok := call.Args[i].Parts[0].(*syntax.ProcSubst)
	if !ok || ps.Op != syntax.CmdIn || len(ps.Stmts) != 1 {
		return
	}
	if out, ok := c.output(ps.Stmts[0]); ok {
		c.script(out, depth+1, via+" (in a script read from a process substitution)")
	}
}

// output is what s writes when it is an echo or printf, with each part
// known only at run time as placeholder; ok is false for anything else.
func (c *classifier) output(s *syntax.Stmt) (string, bool) {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || s.Negated || s.Background {
		return "", false
	}
	ws := c.words(call.Args)
	for len(ws) > 0 && ws[0].static && (ws[0].val == "builtin" || ws[0].val == "command") {
		ws = ws[1:]
	}
	if len(ws) == 0 || !ws[0].static {
		return "", false
	}
	switch path.Base(ws[0].val) {
	case "echo":
		return echoOutput(ws[1:]), true
	case "printf":
		return printfOutput(ws[1:])
	}
	return "", false
}

// words expands braces and removes quotes.
func (c *classifier) words(args []*syntax.Word) []word {
	out := make([]word, 0, len(args))
	for _, a := range args {
		// Split a copy: syntax.Walk cannot visit BraceExp nodes, and the
		// tree is still being walked.
		cp := *a
		if !syntax.SplitBraces(&cp) {
			v, tmpl, ok, g := expandWord(a)
			out = append(out, word{v, ok, g, tmpl})
			continue
		}
		n := 0
		for w, err := range expand.BracesSeq(nil, &cp) {
			n++
			if err != nil || n > maxBraceWords {
				out = append(out, word{tmpl: placeholder})
				break
			}
			v, tmpl, ok, g := expandWord(w)
			out = append(out, word{v, ok, g, tmpl})
		}
	}
	return out
}

// command looks at one simple command. The command word is matched by its
// base name, so /usr/bin/sudo and \sudo are sudo; a glob in command position
// (/usr/bin/su[d]o) is matched against every denied name it could expand to.
func (c *classifier) command(ws []word, depth int, via string) {
	if len(ws) == 0 || c.v.Deny {
		return
	}
	if !ws[0].static {
		return // $CMD: unknowable here; it still needs approval and the sandbox
	}
	name := strings.ToLower(path.Base(ws[0].val))
	if ws[0].glob {
		for _, d := range globbable {
			if m, _ := path.Match(name, d); m {
				c.named(d, ws, depth, via)
			}
		}
		return
	}
	c.named(name, ws, depth, via)
}
