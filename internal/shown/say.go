package shown

import (
	"fmt"
	"io"
)

// Sayf prints one line of a sandbox init's on w, its stderr, which is the
// user's terminal (or cordon's relay to it), escaped (String): its errors
// name paths and objects a sandbox may have made, and a name must not
// move the cursor, set a title or write the clipboard at a later launch.
func Sayf(w io.Writer, format string, a ...any) {
	fmt.Fprintln(w, "cordon: sandbox: "+String(fmt.Sprintf(format, a...)))
}
