#!/usr/bin/env bash
# Builds cordon and proves this host's sandbox holds: 'cordon verify' runs
# the conformance suite (real escape attempts) through the kernel sandbox.
# Installs bubblewrap when it is missing.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/ensure-bwrap.sh
ensure_bwrap
CGO_ENABLED=0 go build -o bin/cordon ./cmd/cordon
bin/cordon detect
exec bin/cordon verify "$@"
