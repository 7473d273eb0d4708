#!/usr/bin/env bash
# Installs what the tests need when it is missing (Linux only): bubblewrap,
# which cordon's Linux backend needs (test.sh and try.sh), and btrfs-progs
# for one test, podman for the container test and tmux for the terminal
# test (test.sh, as root).
#
# ensure_bwrap --best-effort (try.sh): a user who is not root and has no
# sudo that works without a password gets a note instead of a failure:
# cordon's native backend needs no bubblewrap, and 'cordon verify' checks
# the backend this host has.
ensure_bwrap() {
  [[ $(uname -s) == Linux ]] || return 0
  command -v bwrap >/dev/null 2>&1 && return 0
  local sudo=()
  [[ $(id -u) == 0 ]] || sudo=(sudo)
  if [[ ${1:-} == --best-effort && $(id -u) != 0 ]] && ! sudo -n true 2>/dev/null; then
    echo "bubblewrap is missing, and installing it needs root (no sudo without a password here): going on without it;" >&2
    echo "  'cordon verify' checks the backend this host has; the bwrap backend stays unavailable until someone runs: apt-get install bubblewrap" >&2
    return 0
  fi
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

# Installs podman, runc and a static busybox when one is missing and this
# is root on Linux with apt-get (CI): TestContainerPodman runs cordon inside
# a real container (podman with runc, its default seccomp profile, a user
# who is not root) and fails, under CORDON_REQUIRE_BACKEND, without them.
ensure_podman() {
  [[ $(uname -s) == Linux && $(id -u) == 0 ]] || return 0
  command -v podman >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 &&
    command -v busybox >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 || return 0
  echo "installing podman, runc and busybox-static with apt-get (for the container test)" >&2
  local pkgs=(podman runc busybox-static)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null 2>&1; } ||
    echo "could not install podman: TestContainerPodman will fail under CORDON_REQUIRE_BACKEND" >&2
}

# ensure_tmux installs Debian's tmux, as root, for the test that reads the
# user's shell line after cordon returns (TestTerminalAnswersTmux).
ensure_tmux() {
  [[ $(uname -s) == Linux && $(id -u) == 0 ]] || return 0
  command -v tmux >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 || return 0
  echo "installing tmux with apt-get (for the terminal test)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null 2>&1; } ||
    echo "could not install tmux: TestTerminalAnswersTmux will fail under CORDON_REQUIRE_BACKEND" >&2
}
