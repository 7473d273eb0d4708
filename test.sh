#!/usr/bin/env bash
# Runs every test: go vet, staticcheck, the macOS cross-build, the unit
# tests, the conformance suite against the real kernel sandbox, and the
# end-to-end suite with the real agent CLIs (installed from npm, pinned,
# cached). Installs bubblewrap when it is missing (and, as root, btrfs-progs
# for one landlock test). On Linux a sandbox that
# cannot run is a failure, not a skip
# (CORDON_REQUIRE_BACKEND=bwrap,native,landlock).
#
#   ./test.sh            everything
#   ./test.sh --no-e2e   everything but the end-to-end suite (no npm needed)
#   ./test.sh ARGS...    ARGS go to `go test` (e.g. -run TestX), as before
#
# The conformance suite is the long pole (about 8-9 minutes on 2 cores)
# and leaves part of the machine idle (it waits on the kernel as much as
# it computes), so it starts first and everything else runs beside it:
# the unit tests in the foreground, the checks, the npm install and the
# end-to-end suite in the background. Each background part's log is
# printed once it ends, and a summary names what failed, when each part
# ended and the CPU time it used.
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
ensure_btrfs
ensure_podman
ensure_tmux
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
  # One agent session at a time: beside the conformance suite, parallel
  # sessions only fight over the same two cores.
  CORDON_E2E=${CORDON_E2E:-1} go test -count=1 -timeout 20m -parallel 1 ./e2e "$@"
}

conformance() {
  set -e
  echo "== go test ./conformance (the escape suite, every Linux backend, root and unprivileged)"
  # The limit is generous: on a loaded machine the suite takes several
  # times its quiet time, for no fault of ours.
  go test -count=1 -timeout 60m ./conformance "$@"
}

# niced FUNC ARGS...: FUNC at a lower priority (its children too).
niced() {
  renice -n 10 -p $BASHPID >/dev/null
  "$@"
}

# cpu_used: the CPU seconds (user and system) of this shell's children
# that have ended, from bash's `times` (written to a file: in a pipe it
# would run in a subshell, which has no children). The summary gives each
# part's, so a slow run shows where the machine's time went.
cpu_used() {
  times >"$logs/times.$BASHPID"
  awk 'NR == 2 {
    t = 0
    for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
    printf "%d", t
  }' "$logs/times.$BASHPID"
}

# stage NAME FUNC...: runs FUNC in the background, its output in a log.
declare -A pids
stage() {
  local name=$1
  shift
  # The subshell's SECONDS runs on from the script's: when it ended.
  (set +e; ("$@"); r=$?; echo $SECONDS >"$logs/$name.end"; cpu_used >"$logs/$name.cpu"; exit $r) >"$logs/$name" 2>&1 &
  pids[$name]=$!
}
# The conformance suite first: it is the long pole, and the sooner its
# build starts the sooner the run ends.
stage conformance conformance "$@"
# Everything else runs niced: the conformance suite keeps the cores it
# can use, and the rest fills the time it spends waiting on the kernel.
# (Running its cases more parallel, or the three catalogues side by side,
# made it slower: 629 and 637 s against 599-660 s for the whole run.)
stage checks niced checks
if [[ -n $e2e ]]; then
  # In CI an agent CLI that cannot be installed is a failure
  # (scripts/install-agents.sh), not a skip.
  stage e2e niced endtoend "$@"
fi

echo "== go test, all but ./conformance and ./e2e (the conformance suite, the checks$([[ -n $e2e ]] && echo ", the agent CLIs and the end-to-end suite") run beside it)"
status=()
if (nice -n 10 go test -count=1 -timeout 30m $(go list ./... | grep -v -e '/e2e$' -e '/conformance$') "$@"; r=$?; cpu_used >"$logs/unit.cpu"; exit $r); then
  r=ok
else
  r=FAILED
fi
status+=("go test: $r ($((SECONDS - start)) s, $(cat "$logs/unit.cpu" 2>/dev/null || echo ?) s of CPU)")
for name in conformance checks e2e; do
  [[ -n ${pids[$name]:-} ]] || continue
  last=$SECONDS
  while kill -0 "${pids[$name]}" 2>/dev/null; do
    sleep 2
    if ((SECONDS - last >= 60)); then
      echo "   ... $name still running ($((SECONDS - start)) s so far)"
      last=$SECONDS
    fi
  done
  if wait "${pids[$name]}"; then r=ok; else r=FAILED; fi
  echo "== $name (log)"
  cat "$logs/$name"
  status+=("$name: $r (ended at $(($(cat "$logs/$name.end" 2>/dev/null || echo $SECONDS) - start)) s, $(cat "$logs/$name.cpu" 2>/dev/null || echo ?) s of CPU)")
done
echo "== summary"
failed=0
for s in "${status[@]}"; do
  echo "  $s"
  [[ $s == *FAILED* ]] && failed=1
done
exit $failed
