// Package tty owns the terminal between the user and a sandbox: the pty
// a command gets of its own (Session: opening it, the relay of keystrokes
// and output, resizes, suspend, signals, the drain at the end), the copy
// of output to the user's terminal when the command has none (Writer),
// the screen modes the output switched on and their reset, and the
// terminal's answers (OSC 52 queries dropped; what the sandbox asked read
// and discarded before the run ends). Package launcher imports it; it
// imports nothing of the launcher's.
package tty
