//go:build !unix

package audit

import "os"

// Without flock, appends from one process are still whole lines; several
// processes appending at once may break the chain, which Verify reports.
func lock(*os.File) error { return nil }

func unlock(*os.File) {}
