#!/usr/bin/env bash
# Runs every test: go vet, staticcheck, the macOS cross-build, the unit
# tests, the conformance suite against the real kernel sandbox, and the
# end-to-end suite with the real agent CLIs (installed from npm, pinned,
# cached). Installs bubblewrap when it is missing. On Linux a sandbox that
# cannot run is a failure, not a skip
# (CORDON_REQUIRE_BACKEND=bwrap,native,landlock).
#
#   ./test.sh            everything
#   ./test.sh --no-e2e   everything but the end-to-end suite (no npm needed)
#   ./test.sh ARGS...    ARGS go to `go test` (e.g. -run TestX), as before
#
# The conformance suite is the long pole (about 6-8 minutes on 2 cores)
# and leaves part of the machine idle (it waits on the kernel as much as
# it computes), so the checks, the npm install and the end-to-end suite
# run beside it; their logs are printed when each ends, and a summary
# names what failed.
set -euo pipefail
cd "$(dirname "$0")"
e2e=1
case ${1:-} in
--no-e2e) e2e=; shift ;;
--e2e) shift ;; # the default now; kept so older instructions still work
esac
export CGO_ENABLED=0  # cordon is pure Go; a static binary also starts faster
source scripts/ensure-bwrap.sh
ensure_bwrap
if [[ $(uname -s) == Linux ]]; then
  export CORDON_REQUIRE_BACKEND=${CORDON_REQUIRE_BACKEND:-bwrap,native,landlock}
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start=$SECONDS

checks() {
  set -e
  echo "== go vet"
  go vet ./...
  echo "== macOS cross-build"
  GOOS=darwin go build ./... && GOOS=darwin go vet ./...
  echo "== go mod tidy -diff"
  go mod tidy -diff
  echo "== staticcheck (linux, darwin)"
  # Pinned, installed into a private bin directory (built once per Go
  # cache), then run for both targets.
  local bin
  bin=$(mktemp -d)
  GOBIN=$bin GOOS= GOARCH= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
  "$bin/staticcheck" ./...
  GOOS=darwin "$bin/staticcheck" ./...
  rm -rf "$bin"
}

endtoend() {
  set -e
  echo "== agent CLIs for the end-to-end suite"
  scripts/install-agents.sh
  echo "== go test ./e2e (the real agent CLIs)"
  CORDON_E2E=${CORDON_E2E:-1} go test -count=1 -timeout 20m ./e2e "$@"
}

# stage NAME FUNC...: runs FUNC in the background, its output in a log.
declare -A pids began
stage() {
  local name=$1
  shift
  began[$name]=$SECONDS
  # The subshell's SECONDS runs on from the script's: when it ended.
  (set +e; ("$@"); r=$?; echo $SECONDS >"$logs/$name.end"; exit $r) >"$logs/$name" 2>&1 &
  pids[$name]=$!
}
stage checks checks
if [[ -n $e2e ]]; then
  # In CI an agent CLI that cannot be installed is a failure
  # (scripts/install-agents.sh), not a skip.
  stage e2e endtoend "$@"
fi

echo "== go test (checks$([[ -n $e2e ]] && echo ", agent CLIs and the end-to-end suite") run beside it)"
# The limit is generous: on a loaded machine the conformance suite takes
# several times its quiet time, for no fault of ours.
status=()
if go test -count=1 -timeout 60m $(go list ./... | grep -v '/e2e$') "$@"; then
  status+=("go test: ok ($((SECONDS - start)) s)")
else
  status+=("go test: FAILED ($((SECONDS - start)) s)")
fi
for name in checks e2e; do
  [[ -n ${pids[$name]:-} ]] || continue
  if wait "${pids[$name]}"; then r=ok; else r=FAILED; fi
  echo "== $name (log)"
  cat "$logs/$name"
  status+=("$name: $r (ended at $(($(cat "$logs/$name.end" 2>/dev/null || echo $SECONDS) - start)) s)")
done
echo "== summary"
failed=0
for s in "${status[@]}"; do
  echo "  $s"
  [[ $s == *FAILED* ]] && failed=1
done
exit $failed
