#!/usr/bin/env bash
# Runs every test: vet, the unit tests, the conformance suite against the
# real kernel sandbox, and the macOS cross-build. Installs bubblewrap when
# it is missing. On Linux a sandbox that cannot run is a failure, not a
# skip (CORDON_REQUIRE_BACKEND=bwrap,native,landlock).
set -euo pipefail
cd "$(dirname "$0")"
# --e2e adds the end-to-end suite with the real agent CLIs (package e2e):
# scripts/install-agents.sh installs them (pinned, cached) first.
e2e=
if [[ ${1:-} == --e2e ]]; then
  e2e=1
  shift
fi
export CGO_ENABLED=0  # cordon is pure Go; a static binary also starts faster
source scripts/ensure-bwrap.sh
ensure_bwrap
if [[ $(uname -s) == Linux ]]; then
  export CORDON_REQUIRE_BACKEND=${CORDON_REQUIRE_BACKEND:-bwrap,native,landlock}
fi
echo "== go vet"
go vet ./...
echo "== macOS cross-build"
GOOS=darwin go build ./... && GOOS=darwin go vet ./...
echo "== go mod tidy -diff"
go mod tidy -diff
echo "== staticcheck (linux, darwin)"
# Pinned, installed into a private bin directory (built once per Go cache),
# then run for both targets.
bin=$(mktemp -d)
GOBIN=$bin GOOS= GOARCH= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck=$bin/staticcheck
"$staticcheck" ./...
GOOS=darwin "$staticcheck" ./...
if [[ -n $e2e ]]; then
  echo "== agent CLIs for the end-to-end suite"
  scripts/install-agents.sh
  export CORDON_E2E=${CORDON_E2E:-1}
fi
echo "== go test"
# The conformance suite (two Linux backends, both mutation checks) takes
# about 6 minutes on a quiet 2-core machine and several times that on a
# loaded one, past the default 10-minute limit for no fault of ours.
go test -count=1 -timeout 60m ./... "$@"
