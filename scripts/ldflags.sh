#!/usr/bin/env bash
# Prints the -X flags that stamp the tree's revision, its commit time and
# whether it was modified into internal/buildinfo, for go build's -ldflags:
#
#   go build -ldflags "$(scripts/ldflags.sh)" ./cmd/cordon
#
# The go tool records these itself only from a .git directory, and not
# with -buildvcs=false: a build from a git worktree (whose .git is a
# file), or on a machine whose GOFLAGS say -buildvcs=false, would say
# nothing of its tree. Where the go tool does record them, its own win.
# Prints nothing outside a git checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse HEAD 2>/dev/null) || exit 0
# In UTC, as the go tool writes vcs.time.
time=$(TZ=UTC git show -s --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)
modified=false
[[ -z $(git status --porcelain 2>/dev/null) ]] || modified=true
pkg=github.com/cordon-sandbox/cordon/internal/buildinfo
echo "-X $pkg.Revision=$rev -X $pkg.Time=$time -X $pkg.Modified=$modified"
