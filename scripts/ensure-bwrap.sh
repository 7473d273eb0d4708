#!/usr/bin/env bash
# Installs what the tests need when it is missing (Linux only): bubblewrap,
# which cordon's Linux backend needs (test.sh and try.sh), and btrfs-progs
# for one test (test.sh, as root).
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

# Installs btrfs-progs when it is missing and this is root on Linux with
# apt-get (CI): the landlock backend's test of btrfs subvolume ioctls
# mounts a btrfs of its own, and is not applicable without mkfs.btrfs.
# Best effort: a failure leaves that one test not applicable.
ensure_btrfs() {
  [[ $(uname -s) == Linux && $(id -u) == 0 ]] || return 0
  command -v mkfs.btrfs >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 || return 0
  echo "installing btrfs-progs with apt-get (for the landlock backend's btrfs test)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq btrfs-progs >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq btrfs-progs >/dev/null 2>&1; } ||
    echo "could not install btrfs-progs: TestLandlockBtrfsSubvolumes will say not applicable" >&2
}
