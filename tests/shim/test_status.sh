#!/bin/sh
# GPUPROF_STATUS=FILE (the live status file) through the fake CUPTI:
#  - a 2.6 s launch loop inside an NVTX range: while it runs the file is
#    rewritten (>= 2 distinct versions seen, each one whole valid JSON, state
#    running, kernels/s near the loop's own rate, 4096 B of device memory
#    from the CUPTI memory records, the range's name escaped); at exit
#    state exited, kernels_total = the trace's kernel count, memory back to
#    0, no FILE.tmp left; `gpuprof top --once` shows it;
#  - the scripted workload (forks a CUDA-using child): stdout unchanged, the
#    parent's file counts its 83 kernels, the child writes its own
#    FILE-<pid> (a pattern without %p) with its 2;
#  - an unwritable directory, and FILE.tmp planted as a symlink: one
#    gpuprof: line each, the job's exit status and stdout unchanged, the
#    trace complete, the symlink's target untouched;
#  - SIGTERM: the job dies of it, the file says exited with the trace's count.
. "$(dirname "$0")/lib.sh"
unset GPUPROF_STATUS 2>/dev/null
GPUPROF=$B/bin/gpuprof
[ -e "$GPUPROF" ] || { echo "missing $GPUPROF (build first)"; exit 1; }
RANGE=$(printf 'step "q"\t')
# run_root OUT ERR [args]: like run_traced, but the workload itself is the
# job's first traced process (run_traced's `timeout` is preloaded too, which
# makes the workload a descendant whose file names get -PID)
run_root() {
  o=$1; e=$2; shift 2
  GPUPROF_OUTPUT=$T/trace-%p.gpuprof GPUPROF_CUPTI=$FAKE_CUPTI \
    timeout 60 env LD_PRELOAD="$SHIM" "$WORKLOAD" "$@" >"$o" 2>"$e"
}

# --- A: live rewrites of a running job (GPUPROF_ACTIVITY=all: memory
# records on, so device memory comes from CUPTI; B checks the default's "none")
GPUPROF_ACTIVITY=all GPUPROF_STATUS=$T/st-%p.json run_traced "$T/a.out" "$T/a.err" loop 2600 "$RANGE" &
job=$!
i=0
while kill -0 $job 2>/dev/null && [ $i -lt 400 ]; do
  for f in "$T"/st-*.json; do [ -f "$f" ] && cp "$f" "$T/snap.$i" 2>/dev/null; done
  i=$((i + 1))
  sleep 0.1
done
wait $job; rc=$?
loop_run_ok "traced loop" $rc "$T/a.out" "$T/a.err"
grep -q 'STATUS' "$T/a.err" && { fail "status complaint:"; cat "$T/a.err"; }
set -- "$T"/st-*.json
[ $# -eq 1 ] && [ -f "$1" ] || fail "want one status file, got: $*"
final=$1
ls "$T"/*.tmp >/dev/null 2>&1 && fail "a .tmp file is left: $(ls "$T"/*.tmp)"
trace=$(ls "$T"/trace-*.gpuprof)
"$GPUPROF" dump --json --type kernel "$trace" > "$T/kern.json" || fail "dump $trace"
python3 - "$final" "$T" "$trace" "$T/kern.json" "$T/a.out" "$RANGE" <<'PY' || fail "status content (above)"
import glob, json, os, sys
final, tdir, trace, kern, out, rng = sys.argv[1:7]
bad = []
def load(p):
    with open(p) as f:
        return json.load(f)
st = load(final)
nkern = sum(1 for l in open(kern) if l.strip())
launches = int(open(out).read().split()[1])
want = {"version": 1, "state": "exited", "trace": trace, "kernels_total": nkern,
        "last_nvtx_range": rng, "device_mem_source": "cupti", "device_mem_used_bytes": 0,
        "memcpy_bytes_total": 0, "dropped": 0, "rank": None}
for k, v in want.items():
    if st.get(k) != v:
        bad.append("final %s = %r, want %r" % (k, st.get(k), v))
if nkern != launches:
    bad.append("trace has %d kernels, the loop launched %d" % (nkern, launches))
if "pid" not in st or os.path.basename(final) != "st-%d.json" % st["pid"]:
    bad.append("pid %r does not match the file name %s" % (st.get("pid"), final))
# per-second rates against the loop's average rate: loose bounds, the
# machine may be loaded; what must hold is that they are of that order
rate = launches / 2.6
if not (0.3 * rate <= st["kernels_per_s"] <= 1.5 * rate):
    bad.append("final kernels_per_s %r, the loop ran at %.0f/s" % (st["kernels_per_s"], rate))
if not (0 < st["gpu_busy_pct"] <= 100):
    bad.append("final gpu_busy_pct %r" % st["gpu_busy_pct"])
snaps = []
for p in sorted(glob.glob(os.path.join(tdir, "snap.*"))):
    try:
        snaps.append(load(p))
    except ValueError as e:
        bad.append("%s is not whole JSON: %s" % (p, e))
running = [s for s in snaps if s.get("state") == "running"]
versions = {s["updated_realtime_ns"] for s in running}
if len(versions) < 2:
    bad.append("%d distinct running versions seen, want >= 2" % len(versions))
live = [s for s in running if s["kernels_per_s"] > 0]
if not any(0.5 * rate <= s["kernels_per_s"] <= 1.5 * rate for s in live):
    bad.append("no running snapshot with kernels_per_s near the loop's %.0f/s: %r"
               % (rate, [s["kernels_per_s"] for s in running]))
for s in live:
    if s["kernels_per_s"] > 1.5 * rate + 50:
        bad.append("running kernels_per_s %r, the loop ran at %.0f/s" % (s["kernels_per_s"], rate))
    if s["device_mem_used_bytes"] != 4096:
        bad.append("running device_mem_used_bytes %r, want 4096" % s["device_mem_used_bytes"])
    if s["last_nvtx_range"] != rng:
        bad.append("running last_nvtx_range %r" % s["last_nvtx_range"])
    if s["kernels_total"] > nkern:
        bad.append("running kernels_total %r > final %d" % (s["kernels_total"], nkern))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
"$GPUPROF" top --once "$final" > "$T/top.out"; trc=$?
[ $trc -eq 0 ] || fail "top --once exit $trc"
grep -q " exited .*step \"q\"\\\\x09\$" "$T/top.out" || { fail "top line:"; cat "$T/top.out"; }

# --- B: the scripted workload; fork child writes its own file.  TSan does
# not support a fork child that starts threads (tests/faults/build.mk): B is
# skipped there and C runs the launch loop instead of the forking workload.
run_plain "$T/plain.out" "$T/plain.err"; prc=$?
rm -f "$T"/trace-*.gpuprof
if [ "${GPUPROF_FAULT_SANITIZER:-}" = tsan ]; then
  echo "fork part skipped under TSan"
else
GPUPROF_STATUS=$T/job.json run_root "$T/b.out" "$T/b.err"; rc=$?
[ $rc -eq $prc ] || fail "workload exit $rc, untraced $prc"
cmp -s "$T/plain.out" "$T/b.out" || fail "stdout differs with GPUPROF_STATUS"
[ "$(foreign_lines "$T/b.err")" -eq 0 ] || { fail "non-gpuprof stderr"; cat "$T/b.err"; }
set -- "$T"/job-*.json
[ $# -eq 1 ] && [ -f "$1" ] || fail "want one child status file job-PID.json, got: $*"
python3 - "$T/job.json" "$1" <<'PY' || fail "parent/child status (above)"
import json, os, sys
bad = []
for path, kernels in ((sys.argv[1], 83), (sys.argv[2], 2)):
    st = json.load(open(path))
    if st["state"] != "exited" or st["kernels_total"] != kernels:
        bad.append("%s: state %s kernels_total %s, want exited %d" % (path, st["state"], st["kernels_total"], kernels))
    # parent: 4 x (4096*(w+1) + 1024) bytes copied; child: 100
    want_bytes = 4 * 1024 + 4096 * (1 + 2 + 3 + 4) if kernels == 83 else 100
    if st["memcpy_bytes_total"] != want_bytes:
        bad.append("%s: memcpy_bytes_total %s, want %d" % (path, st["memcpy_bytes_total"], want_bytes))
    # the default kinds leave out MEMORY2 and the fake has no NVML samples
    if st["device_mem_source"] != "none" or st["device_mem_used_bytes"] != 0:
        bad.append("%s: device memory %r from %r, want 0 from 'none'"
                   % (path, st["device_mem_used_bytes"], st["device_mem_source"]))
child = json.load(open(sys.argv[2]))
if os.path.basename(sys.argv[2]) != "job-%d.json" % child["pid"]:
    bad.append("child file %s, pid %d" % (sys.argv[2], child["pid"]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
fi

# --- C: unwritable directory: one line, the job unchanged
rm -f "$T"/trace-*.gpuprof
if [ "${GPUPROF_FAULT_SANITIZER:-}" = tsan ]; then
  GPUPROF_STATUS=$T/no/such/dir/st.json run_root "$T/c.out" "$T/c.err" loop 300; rc=$?
  [ $rc -eq 0 ] || fail "unwritable: exit $rc"
  grep -q '^loop [0-9]*$' "$T/c.out" || fail "unwritable: stdout $(cat "$T/c.out")"
  ntraces=1
else
  GPUPROF_STATUS=$T/no/such/dir/st.json run_root "$T/c.out" "$T/c.err"; rc=$?
  [ $rc -eq $prc ] || fail "unwritable: exit $rc, untraced $prc"
  cmp -s "$T/plain.out" "$T/c.out" || fail "unwritable: stdout differs"
  ntraces=2
fi
n=$(grep -c '^gpuprof: GPUPROF_STATUS: cannot create .*no/such/dir/st.json.tmp: No such file or directory; no status file from now on$' "$T/c.err")
[ "$n" -eq 1 ] || { fail "unwritable: want one status line, got $n:"; cat "$T/c.err"; }
[ "$(grep -c 'GPUPROF_STATUS' "$T/c.err")" -eq 1 ] || { fail "unwritable: more status lines"; cat "$T/c.err"; }
[ "$(foreign_lines "$T/c.err")" -eq 0 ] || { fail "unwritable: foreign stderr"; cat "$T/c.err"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq $ntraces ] || fail "unwritable: want $ntraces trace(s), got $#"

# --- D: FILE.tmp planted as a symlink: O_NOFOLLOW refuses it
echo keep > "$T/victim"
ln -s "$T/victim" "$T/sl.json.tmp"
GPUPROF_STATUS=$T/sl.json run_root "$T/d.out" "$T/d.err" loop 300; rc=$?
[ $rc -eq 0 ] || fail "symlink: exit $rc"
[ "$(cat "$T/victim")" = keep ] || fail "symlink target was written"
[ "$(grep -c 'GPUPROF_STATUS: cannot create .*sl.json.tmp' "$T/d.err")" -eq 1 ] || { fail "symlink: want one line"; cat "$T/d.err"; }
[ -e "$T/sl.json" ] && fail "symlink: a status file was written anyway"

# --- E: SIGTERM: the job dies of it, the status says exited with the
# kernels of the trace (the "loop" range still open is the last range)
rm -f "$T"/trace-*.gpuprof "$T/ready"
GPUPROF_STATUS=$T/term.json GPUPROF_QUIET=1 GPUPROF_OUTPUT=$T/trace-%p.gpuprof GPUPROF_CUPTI=$FAKE_CUPTI \
  LD_PRELOAD=$SHIM "$WORKLOAD" sleep "$T/ready" >"$T/e.out" 2>"$T/e.err" &
pid=$!
i=0
while [ ! -e "$T/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
[ -e "$T/ready" ] || { fail "sleep workload never got ready"; kill -9 $pid; }
sleep 1.3
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit status $rc, want 143"
[ "$(count_lines "$T/e.err")" -eq 0 ] || { fail "SIGTERM: stderr:"; cat "$T/e.err"; }
"$GPUPROF" dump --json --type kernel "$T"/trace-*.gpuprof > "$T/kern.json" || fail "dump after SIGTERM"
python3 - "$T/term.json" "$T/kern.json" <<'PY' || fail "status after SIGTERM (above)"
import json, sys
st = json.load(open(sys.argv[1]))
n = sum(1 for l in open(sys.argv[2]) if l.strip())
bad = []
if st["state"] != "exited" or st["kernels_total"] != n or st["last_nvtx_range"] != "loop":
    bad.append("state %s kernels_total %s (trace %d) range %r" % (st["state"], st["kernels_total"], n, st["last_nvtx_range"]))
if not n > 10:
    bad.append("only %d kernels" % n)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
finish
