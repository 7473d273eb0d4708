package seatbelt

import (
	"github.com/cordon-sandbox/cordon/policy"
)

// probeBase is where the probe's representative roots lie. The probe only
// compiles and applies the profile to /usr/bin/true; nothing exists there,
// and nobody can create anything there (/var/empty is root's, mode 0555),
// so canonicalizing the probe's policy reads the same answer on every Mac:
// under /tmp another user could plant a link loop and make detection fail.
// The space checks that a parameter value is passed whole.
const probeBase = "/private/var/empty/cordon probe"

// ProbePolicy is a small policy that makes Render emit every kind of rule
// it has: roots of all four kinds with and without a data-volume spelling
// (readonly "/"), a writable carve in a denied root (traversal), read-only
// and denied roots inside a writable one (the move rules), restrictWrites.
func ProbePolicy() policy.FsSandboxPolicy {
	return policy.FsSandboxPolicy{
		ReadonlyRoots:     []string{"/", probeBase + "/w/.git/hooks"},
		WritableRoots:     []string{probeBase + "/w", probeBase + "/d/carve"},
		BaseWritableRoots: []string{probeBase + "/state"},
		DeniedRoots:       []string{probeBase + "/d", probeBase + "/w/secret"},
		RestrictWrites:    true,
	}
}

// ProbeProfile is the profile detect applies to /usr/bin/true before
// calling Seatbelt usable: the fixed part of every profile (process,
// terminal, network, device and service rules) and one representative of
// each path rule, all through the same code as a launch. A construct that
// some release does not compile therefore makes detection fail with
// sandbox-exec's message, instead of every command.
func ProbeProfile() (*Profile, error) {
	c, err := policy.Canonicalize(ProbePolicy())
	if err != nil {
		return nil, err
	}
	return Render(c, Options{Devices: []string{"/dev/ttys000"}})
}
