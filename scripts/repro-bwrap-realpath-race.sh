#!/bin/sh
# Reproduces, deterministically, conformance finding F8 (race-stubs): bwrap
# realpath()s every bind source in the host's root before it builds the
# sandbox, so a pin's source (a writable ancestor of a protected root, bound
# by path onto itself) that a sandbox has swapped for a link at that moment
# is redirected to wherever the link points; swapped back before the mounts,
# the destinations are the real ones. The sandbox then gets the link's target
# mounted writable at the pin, and bwrap makes the next mount point inside it,
# on the host.
#
# strace holds bwrap's 1st and 3rd readlink of WS/d (the realpath of the pins
# WS/d and WS/d/x1/a) for 300 ms each; the exchanges happen meanwhile.
# Needs strace, bwrap without --bind-fd (0.8, 0.9), Go, root or any user.
# Prints what the sandbox saw at WS/d and what changed in OUTSIDE.
set -eu
F=$(mktemp -d /tmp/cordon-f8-XXXXXX)
W=$F/ws
mkdir -p "$W/d/x1/a/b/c" "$F/outside/x1" "$F/empty"
echo secret > "$F/outside/x1/marker"
ln -s "$F/outside" "$W/l"
chmod 111 "$F/empty"
cat > "$F/xchg.go" <<'GO'
package main

import (
	"os"

	"golang.org/x/sys/unix"
)

func main() {
	if err := unix.Renameat2(unix.AT_FDCWD, os.Args[1], unix.AT_FDCWD, os.Args[2], unix.RENAME_EXCHANGE); err != nil {
		panic(err)
	}
}
GO
(cd "$(dirname "$0")/.." && go build -o "$F/xchg" "$F/xchg.go")
# cordon's renderer's mounts for --workspace WS --deny WS/d/x1/a/b/c (the
# pins of WS/d, x1, a, b, then the mask).
set -- --unshare-user --unshare-pid --die-with-parent --ro-bind / / --proc /proc --dev /dev \
	--bind "$W" "$W" --bind "$W/d" "$W/d" --bind "$W/d/x1" "$W/d/x1" \
	--bind "$W/d/x1/a" "$W/d/x1/a" --bind "$W/d/x1/a/b" "$W/d/x1/a/b" \
	--ro-bind "$F/empty" "$W/d/x1/a/b/c"
strace -f -qq -o /dev/null -P "$W/d" -e trace=readlink,readlinkat \
	-e inject=readlink,readlinkat:delay_enter=300000:when=1+2 \
	bwrap "$@" -- /bin/sh -c "echo 'in the sandbox, WS/d holds:'; ls $W/d; touch $W/d/written-by-the-sandbox" &
sleep 0.15
"$F/xchg" "$W/d" "$W/l" # d is the link while bwrap resolves the pins of d and d/x1
sleep 0.3
"$F/xchg" "$W/d" "$W/l" # and the directory again from the pin of d/x1/a on
wait $!
echo "on the host, OUTSIDE now holds (before: x1, x1/marker):"
(cd "$F/outside" && find . -mindepth 1 | sort)
