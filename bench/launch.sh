#!/usr/bin/env bash
# cordon's launch benchmark: builds cordon (CGO_ENABLED=0), makes a git
# workspace fixture and alternates 'cordon run --workspace W -- /bin/true'
# with the same raw bwrap command, reporting median/p95, ratios, peak RSS,
# probe counts, srt as a peer when installed, and a 2,000-root policy.
# All flags go to the Go program: bench/launch.sh -n 500 -srt /path/to/srt
# See BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/launch "$@"
