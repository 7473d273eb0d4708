#!/bin/sh
# The landlock backend's entry gate on work that makes many files, against
# native in the same run (BENCHMARKS.md, "The entry gate's cost").
#
#   bench/gate/run.sh ./bin/cordon [ROUNDS]
#
# Two workloads, each run ROUNDS times per backend, the backends in turn:
#   tar      extract 3,000 files in 150 new directories at the workspace's
#            top (a frozen directory under landlock: every entry goes
#            through the gate), then rm -rf them;
#   gobuild  rebuild a module of 41 packages (p0, which the 40 others
#            import, changed each time), its build cache a directory of the
#            workspace warmed once for the standard library, the binary
#            written at the workspace's top.
# Each line is one run's wall seconds (/usr/bin/time).
set -eu
cordon=$(readlink -f "$1")
rounds=${2:-5}
go=$(command -v go || echo /usr/local/go/bin/go)
d=$(mktemp -d /tmp/cordon-gate-bench-XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/ws" "$d/src/t" "$d/mod/p0"
echo hi > "$d/ws/README.md"
for i in $(seq 1 150); do
	mkdir "$d/src/t/d$i"
	for f in $(seq 1 20); do echo "file $i $f" > "$d/src/t/d$i/f$f.txt"; done
done
tar cf "$d/tree.tar" -C "$d/src" t
cd "$d/mod"
printf 'module example.com/m\n\ngo 1.26\n' > go.mod
printf 'package p0\n\nconst V = 0\n' > p0/p.go
{
	printf 'package main\n\nimport (\n\t"os"\n\t"strconv"\n'
	for i in $(seq 1 40); do
		mkdir -p "p$i"
		printf 'package p%s\n\nimport "example.com/m/p0"\n\nfunc N() int { return p0.V + %s }\n' "$i" "$i" > "p$i/p.go"
		printf '\t"example.com/m/p%s"\n' "$i"
	done
	printf ')\n\nfunc main() {\n\tn := 0\n'
	for i in $(seq 1 40); do printf '\tn += p%s.N()\n' "$i"; done
	printf '\tos.Stdout.WriteString(strconv.Itoa(n) + "\\n")\n}\n'
} > main.go
export GOCACHE="$d/mod/.gocache" GOTOOLCHAIN=local GOPROXY=off GOFLAGS="-mod=mod -buildvcs=false"
"$go" build -o app . # warms the cache for the standard library
for r in $(seq 1 "$rounds"); do
	for b in landlock native; do
		cd "$d/ws"
		/usr/bin/time -f "tar $b %e" "$cordon" run --backend "$b" --no-tty --workspace "$d/ws" -- \
			sh -c "tar xf '$d/tree.tar' && rm -rf t"
		cd "$d/mod"
		/usr/bin/time -f "gobuild $b %e" "$cordon" run --backend "$b" --no-tty --workspace "$d/mod" -- \
			sh -c "printf 'package p0\n\nconst V = %s\n' \"\$(date +%N)\" > p0/p.go && '$go' build -o app . && ./app >/dev/null"
	done
done
