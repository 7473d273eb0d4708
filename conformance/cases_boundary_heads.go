package conformance

import (
	"fmt"
	"strconv"
)

// Class 16: heads whose parse costs the proxy far more than their
// bytes. Judged by the 'cordon run' process's peak memory.

// Twelve heads of 132,651 tiny distinct headers (663 KB each) fit the
// proxy's 8 MiB budget of raw head bytes. Held behind a silent
// destination they once held cordon at 230-275 MB resident; refused as
// here, parsed all at once, at 59-71 MiB; it now stays near 14 on a
// quiet machine, but reached 55 MiB once on a loaded one (its garbage
// outran the collector). A resident size depends on the collector's
// timing, so the bound here only catches heads held without a bound
// (hundreds of MiB); that the parsed heads cost what the budget says is
// netproxy's TestHeadsOfTinyHeaders, judged by the heap live after a
// collection, which no timing moves.
const (
	tinyHeadConns = 12
	tinyHeadLines = 132651
	tinyHeadRSS   = 128 << 20
)

func boundaryHeadCases() []Case {
	return []Case{
		{Name: "boundary-proxy-tiny-headers", Class: Boundary,
			Summary: fmt.Sprintf("%d connections at once, each sending the proxy a head of %d distinct tiny headers for a refused name: every head is answered and host-side cordon's memory stays under %d MiB", tinyHeadConns, tinyHeadLines, tinyHeadRSS>>20),
			Run: func(h *H) {
				needRusage(h)
				_, p := h.ws()
				p.AllowDomains = []string{"allowed.example"}
				o := h.Sandbox(p, `"$ATTACK" __attack proxy-tiny-headers `+strconv.Itoa(tinyHeadConns)+" "+strconv.Itoa(tinyHeadLines))
				if o.MaxRSS > tinyHeadRSS {
					h.Errorf("host: cordon run grew to %d MiB (bound %d MiB) parsing heads of tiny headers:\n%s", o.MaxRSS>>20, tinyHeadRSS>>20, o)
				}
				h.Expect(o, "ANSWERED")
			}},
	}
}
