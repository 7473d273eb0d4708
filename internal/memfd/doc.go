// Package memfd puts bytes in a sealed memory file (Linux), to hand a
// child process data through a descriptor: no size limit, no temp file
// on disk, no writer goroutine. The launcher passes bwrap its seccomp
// program and argument list this way, and the native init its Spec.
package memfd
