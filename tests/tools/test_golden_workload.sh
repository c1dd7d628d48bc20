#!/bin/sh
# Golden output on traces recorded by the real shim from the fake-CUDA scripted
# workload (tests/fake/workload.c: threads, named kernels, copies, memsets,
# NVTX, a fork child that uses CUDA).  The fake's GPU timestamps are
# deterministic, so the kernel, memop and memsize reports are pinned exactly;
# NVTX ranges are CPU wall time, so only their names, instance counts and the
# GPU kernel time attributed to them are pinned.  Regenerate with
#   GPUPROF_UPDATE_GOLDEN=1 sh tests/tools/test_golden_workload.sh build
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
G=$ROOT/$B/bin/gpuprof
GOLD=$ROOT/tests/tools/golden/workload
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
( cd "$d" && GPUPROF_OUTPUT="$d/t-%p.gpuprof" GPUPROF_CUPTI="$ROOT/$B/tests/fake/libcupti.so.13" \
  GPUPROF_QUIET=1 LD_PRELOAD="$ROOT/$B/lib/libgpuprof.so" "$ROOT/$B/tests/fake/workload" >/dev/null 2>&1 ) \
  || { echo "workload failed"; exit 1; }
n=0
for f in "$d"/t-*.gpuprof; do
	n=$((n + 1))
	{
		# the PID column of each section holds the run's pid
		"$G" stats --report kernels,memops,memsize --format csv "$f" |
			awk -F, -v OFS=, '/^# /{hdr=1; print; next}
				hdr {c=0; for (i=1; i<=NF; i++) if ($i=="PID") c=i; hdr=0; print; next}
				c && $c ~ /^[0-9]+$/ {$c="PID"} {print}'
		echo "exit $?"
		"$G" stats --report nvtx --format csv "$f" | cut -d, -f3,11,12,13 | sort
	} >"$d/out.$n"
done
[ $n -eq 2 ] || { echo "want 2 traces (parent and CUDA-using fork child), got $n"; exit 1; }
# parent first: its report is the longer one
if [ "$(wc -c <"$d/out.1")" -ge "$(wc -c <"$d/out.2")" ]; then p=1 c=2; else p=2 c=1; fi
fail=0
for pair in "parent:$p" "child:$c"; do
	name=${pair%%:*}; i=${pair#*:}
	if [ -n "$GPUPROF_UPDATE_GOLDEN" ]; then
		mkdir -p "$GOLD"; cp "$d/out.$i" "$GOLD/$name.out"
	elif ! cmp -s "$d/out.$i" "$GOLD/$name.out"; then
		echo "MISMATCH: $name trace stats (golden/workload/$name.out)"
		diff -u "$GOLD/$name.out" "$d/out.$i" | head -30
		fail=1
	else
		echo "ok: $name trace: kernels, memops, memsize and NVTX attribution as pinned"
	fi
done
exit $fail
