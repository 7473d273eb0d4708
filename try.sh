#!/usr/bin/env bash
# Builds cordon and proves this host's sandbox holds: 'cordon verify' runs
# the conformance suite (real escape attempts) through the kernel sandbox.
# Installs bubblewrap when it is missing and it can (as root or with sudo);
# without, it goes on with the backends this host has.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/ensure-bwrap.sh
ensure_bwrap --best-effort
CGO_ENABLED=0 go build -buildvcs=auto -o bin/cordon ./cmd/cordon  # -buildvcs: cordon version names the revision
bin/cordon version
bin/cordon detect
exec bin/cordon verify "$@"
