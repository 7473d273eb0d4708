package native

import (
	"fmt"
	"os"

	"github.com/cordon-sandbox/cordon/internal/shown"
)

// sayf prints one line of the init's on stderr, which is the user's
// terminal (or cordon's relay to it), escaped (shown.String): its errors
// name paths and objects a sandbox may have made, and a name must not
// move the cursor, set a title or write the clipboard at a later launch.
func sayf(format string, a ...any) {
	fmt.Fprintln(os.Stderr, "cordon: sandbox: "+shown.String(fmt.Sprintf(format, a...)))
}
