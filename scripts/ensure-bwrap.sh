#!/usr/bin/env bash
# Installs bubblewrap when it is missing (Linux only); cordon's Linux
# backend needs it. Sourced by test.sh and try.sh.
ensure_bwrap() {
  [[ $(uname -s) == Linux ]] || return 0
  command -v bwrap >/dev/null 2>&1 && return 0
  local sudo=()
  [[ $(id -u) == 0 ]] || sudo=(sudo)
  echo "bubblewrap is missing: installing it with apt-get" >&2
  if command -v apt-get >/dev/null 2>&1; then
    "${sudo[@]}" apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq bubblewrap >/dev/null
  elif command -v dnf >/dev/null 2>&1; then
    "${sudo[@]}" dnf install -y bubblewrap
  else
    echo "no apt-get or dnf: install bubblewrap by hand" >&2
    return 1
  fi
}
