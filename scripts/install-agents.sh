#!/usr/bin/env bash
# Installs the agent CLIs the end-to-end suite (package e2e) drives, at
# pinned versions, each into its own npm prefix under the cache directory
# (CORDON_E2E_AGENTS, default ~/.cache/cordon-e2e/agents): DIR/NAME/node_modules/.bin/PROG.
# A version already installed is kept. A package that cannot be installed
# is reported and skipped (the suite then skips that agent, saying so),
# except with CI set or CORDON_E2E=require, where it is an error.
set -uo pipefail
dir=${CORDON_E2E_AGENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/cordon-e2e/agents}
# NAME PACKAGE@VERSION PROG
agents=(
  "claude @anthropic-ai/claude-code@2.1.332 claude"
  "codex @openai/codex@0.171.0 codex"
  "gemini @google/gemini-cli@0.61.0 gemini"
  "copilot @github/copilot@1.0.102 copilot"
)
strict=
if [[ -n ${CI:-} || ${CORDON_E2E:-} == require ]]; then strict=1; fi
if ! command -v npm >/dev/null; then
  echo "install-agents: npm not found: the end-to-end suite needs Node.js 20+ and npm" >&2
  [[ -n $strict ]] && exit 1
  exit 0
fi
mkdir -p "$dir"
failed=0
pids=()
for a in "${agents[@]}"; do
  read -r name spec prog <<<"$a"
  want=${spec##*@}
  have=$(cat "$dir/$name/.version" 2>/dev/null || true)
  if [[ $have == "$want" && -x $dir/$name/node_modules/.bin/$prog ]]; then
    echo "install-agents: $spec already in $dir/$name"
    continue
  fi
  (
    start=$SECONDS
    rm -rf "$dir/$name"
    if npm install --prefix "$dir/$name" --no-audit --no-fund --no-save --loglevel=error "$spec" >"$dir/$name.log" 2>&1 &&
      "$dir/$name/node_modules/.bin/$prog" --version >>"$dir/$name.log" 2>&1; then
      echo "$want" >"$dir/$name/.version"
      echo "install-agents: $spec installed in $((SECONDS - start))s ($(du -sh "$dir/$name" | cut -f1))"
    else
      echo "install-agents: $spec could not be installed (log: $dir/$name.log):" >&2
      tail -n 5 "$dir/$name.log" >&2
      exit 1
    fi
  ) &
  pids+=($!)
done
for p in "${pids[@]}"; do
  wait "$p" || failed=1
done
if [[ $failed == 1 && -n $strict ]]; then
  exit 1
fi
exit 0
