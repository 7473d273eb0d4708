#!/usr/bin/env bash
# Builds cordon and proves this host's sandbox holds: 'cordon verify' runs
# the conformance suite (real escape attempts) through the kernel sandbox.
# Installs bubblewrap when it is missing and it can (as root or with sudo);
# without, it goes on with the backends this host has.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/ensure-bwrap.sh
ensure_bwrap --best-effort
# -buildvcs and the stamp: cordon version names the revision, from a
# clone, a git worktree, or with GOFLAGS=-buildvcs=false alike.
CGO_ENABLED=0 go build -buildvcs=auto -ldflags "$(scripts/ldflags.sh)" -o bin/cordon ./cmd/cordon
bin/cordon version
bin/cordon detect
exec bin/cordon verify "$@"
