#!/bin/sh
# `gpuprof run`'s last line tells the truth, with the real shim and the fake
# CUDA (issue 21): it names the files on disk with their sizes on disk and
# whether they are whole, also when the job ended by _exit() (os._exit()) or
# SIGKILL before the shim's final flush, and it does not contradict the
# shim's "cannot create trace file" line.
. "$(dirname "$0")/lib.sh"
G=$B/bin/gpuprof
export GPUPROF_LIB=$SHIM GPUPROF_CUPTI=$FAKE_CUPTI
# the size as `gpuprof run` prints it (tools/common/util.c fmt_bytes)
size_of() { python3 -c 'import os,sys; b=os.path.getsize(sys.argv[1]); print(f"{b} B" if b < 1000 else f"{b/1e3:.1f} kB" if b < 1e6 else f"{b/1e6:.1f} MB" if b < 1e9 else f"{b/1e9:.1f} GB")' "$1"; }
last() { tail -n 1 "$1"; }

# 1. a normal run: events, the file, its size on disk
"$G" run -o "$T/n-%p.gpuprof" -- "$WORKLOAD" loop 300 >/dev/null 2>"$T/e1"; rc=$?
[ $rc -eq 0 ] || fail "normal run exit $rc"
set -- "$T"/n-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "normal run: want one trace, got $*"
want="wrote $1 ($(size_of "$1"))"
last "$T/e1" | grep -q "^gpuprof: [0-9][0-9]* events, 0 dropped, $want\$" || fail "normal run: last line '$(last "$T/e1")', want '... $want'"

# 2. _exit() after 50 kernels (Python's os._exit()): no final flush, but the
# flush thread wrote the kernels: the file is named, truncated, not "no trace"
"$G" run --flush-ms 100 -o "$T/x-%p.gpuprof" -- "$WORKLOAD" exit 50 >/dev/null 2>"$T/e2"; rc=$?
[ $rc -eq 0 ] || fail "_exit run exit $rc"
set -- "$T"/x-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "_exit run: want one trace, got $*"
grep -q "no trace written" "$T/e2" && fail "_exit run: 'no trace written': $(cat "$T/e2")"
want="wrote $1 ($(size_of "$1"), truncated)"
last "$T/e2" | grep -qF "gpuprof: $want; truncated = the process ended without closing its trace" ||
  fail "_exit run: last line '$(last "$T/e2")', want 'gpuprof: $want; ...'"
n=$("$G" dump --type kernel "$1" 2>/dev/null | grep -c .)
[ "$n" -eq 50 ] || fail "_exit run: the truncated trace holds $n kernels, want 50"

# 3. an output directory that cannot be written: the shim's complaint, then a
# last line that agrees with it
"$G" run -o "$T/no/such/dir/t-%p.gpuprof" -- "$WORKLOAD" loop 100 >/dev/null 2>"$T/e3"; rc=$?
[ $rc -eq 0 ] || fail "unwritable run exit $rc"
grep -q "^gpuprof: cannot create trace file $T/no/such/dir/t-[0-9]*.gpuprof: " "$T/e3" || fail "no 'cannot create' line: $(cat "$T/e3")"
last "$T/e3" | grep -q "^gpuprof: no trace written: cannot create trace file $T/no/such/dir/t-[0-9]*.gpuprof: .*No such file or directory\$" ||
  fail "unwritable: last line '$(last "$T/e3")'"
grep -q "made no CUDA calls" "$T/e3" && fail "unwritable: contradictory 'made no CUDA calls' line"

# 4. SIGKILL to the job: the file by its name (not the pattern), truncated
"$G" run --flush-ms 100 -o "$T/k-%p.gpuprof" -- "$WORKLOAD" sleep "$T/ready" >/dev/null 2>"$T/e4" &
gp=$!
i=0
while [ ! -e "$T/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.5
# the job is gpuprof's child (run forks and execs it)
job=$(pgrep -P $gp)
[ -n "$job" ] && kill -KILL $job || fail "no job process under gpuprof run ($gp)"
wait $gp; rc=$?
[ $rc -eq 137 ] || fail "SIGKILL run exit $rc, want 137"
set -- "$T"/k-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "SIGKILL run: want one trace, got $*"
want="gpuprof: the job was killed by signal 9 (Killed); wrote $1 ($(size_of "$1"), truncated)"
last "$T/e4" | grep -qF "$want" || fail "SIGKILL: last line '$(last "$T/e4")', want '$want'"
last "$T/e4" | grep -q "%p" && fail "SIGKILL: the pattern, not the file"
finish
