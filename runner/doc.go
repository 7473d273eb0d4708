// Package runner executes decided tool calls: the governed loop around a
// permission.Decider.
//
//	PreToolUse → decide → approve (only on ASK) → PermissionDecision
//	           → handler, or block → PostToolUse
//
// Every call leaves three audit records (request, permission with rule id,
// reason and approval outcome, result). A call runs only when it was
// allowed, or asked and approved, and its request and permission records
// were written: an audit trail that cannot be written blocks the call.
//
// Hooks observe: they get copies, their panics are recovered, and nothing
// they do changes the decision, the approval or the audit. A failing or
// panicking handler becomes a FAILED result, never a crash of the loop.
//
// # Results
//
// BLOCKED (the handler was not called), SUCCEEDED, FAILED (no handler, an
// error, a panic, a non-zero exit). [Result.Block] turns a result into a
// tool_result content block, with is_error for BLOCKED and FAILED.
//
// # Files
//
// [FileHandlers] returns at most [MaxReadBytes] of a file or a directory
// listing to the model, marked where it was cut. edit_file edits only a
// file it read whole: one larger than MaxReadBytes fails with its size and
// is left unchanged, never written back cut.
//
// # Bash
//
// [Bash] runs commands through a [Spawner]; cordon's own spawner runs them
// under the launcher with the workspace policy, so the kernel confines what
// the rules let through. Output is capped and the command has a timeout.
// Set [Bash.ReadOnly] to the audit log's (*audit.Log).Protect(), so that a
// command cannot rewrite the trail of the calls around it.
package runner
