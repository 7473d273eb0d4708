// Package setup writes cordon's hook into an AI coding agent's
// settings and takes it out again: 'cordon init' and 'cordon doctor'.
//
// # What it writes
//
// One entry per hook event the agent has (Agent.events), running
// '<absolute path of cordon> hook AGENT [flags]' (Hook.Command) for the
// tools that command decides (Agent.matcher). Which file, which events and
// which shape were read from each agent's published package or
// documentation; Agent.Source says where, and docs/agents.md gives the
// snippets.
//
// # How it edits
//
// A settings file is the user's: it may hold comments (Claude Code and
// Gemini CLI read JSON with comments), other hooks and every other
// setting. The file is parsed with byte offsets (a small JSON-with-comments
// reader; a key given twice, or anything it cannot read, is refused with
// the file's name and nothing is written), and an edit splices text at
// those offsets: an entry goes in after the last one before it, in the
// file's own indentation, and comes out as exactly that text, so that
// install then remove gives back the file byte for byte (but for white
// space inside an empty {} or [] that cordon filled, and a "version": 1
// it added where the agent needs one). An entry is
// cordon's when every command in it runs 'cordon hook' (CordonHook);
// entries mixing cordon with other hooks are reported, never touched.
// Install is idempotent: with cordon's entry as it should be, nothing
// changes.
//
// A Change is planned first (Install, Remove), can be shown as a unified
// diff (Change.Diff) and is applied whole: a temporary file renamed over
// the old one with its mode (internal/atomicfile), through a symlinked
// settings file to the file it names.
package setup
