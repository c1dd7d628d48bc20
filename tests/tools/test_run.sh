#!/bin/sh
# `gpuprof run` without a GPU: a fake libgpuprof.so (fake_shim.c) that only
# writes the summary file.  Checks exit status propagation (exit 3, killed by
# SIGTERM -> 143), signal forwarding, the environment the job sees, the
# summary line, -q, and error cases.
B=${1:-build}
G=$(cd "$B/bin" && pwd)/gpuprof
FAKE=$(cd "$B/tests/tools" && pwd)/fake_shim.so
GEN=$(cd "$B/tests/tools" && pwd)/gen_trace
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
export GPUPROF_LIB="$FAKE"
unset GPUPROF_OUTPUT GPUPROF_QUIET LD_PRELOAD
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# exit status of the job
"$G" run -- sh -c 'exit 3' 2>err; rc=$?
[ $rc -eq 3 ] || bad "exit 3 propagated: got $rc"
"$G" run -- sh -c 'kill -TERM $$' 2>err; rc=$?
[ $rc -eq 143 ] || bad "job killed by SIGTERM -> 143: got $rc"
"$G" run -- ./no-such-program 2>err; rc=$?
[ $rc -eq 127 ] || bad "missing program -> 127: got $rc"
grep -q "cannot execute ./no-such-program" err || bad "missing program message: $(cat err)"

# job's stdout passes through untouched; no summary -> says so on stderr
"$G" run -- echo hello >out 2>err; rc=$?
[ $rc -eq 0 ] && [ "$(cat out)" = "hello" ] || bad "stdout passthrough: rc=$rc out=$(cat out)"
grep -q "^gpuprof: no trace written" err || bad "no-trace message: $(cat err)"
# a job killed by a signal before the shim's final flush: not "no trace written"
"$G" run -o 'k-%p.gpuprof' -- sh -c 'kill -SEGV $$' 2>err; rc=$?
[ $rc -eq 139 ] || bad "job killed by SIGSEGV -> 139: got $rc"
grep -q "^gpuprof: the job was killed by signal 11 (.*); no traced process had created a trace file$" err \
	|| bad "killed-job message: $(cat err)"
grep -q "no trace written" err && bad "killed job reported as 'no trace written'"

# environment for the job
cp "$FAKE" other.so
LD_PRELOAD=$d/other.so "$G" run -o 'out-%p.gpuprof' --api=all --flush-ms 200 --buffer-size 4M \
	--max-memory 1G --gpu-window 2/30 --stacks --gpu-metrics=5 --no-follow -q -- env >env.txt 2>err
rc=$?
[ $rc -eq 0 ] || bad "env job exit $rc: $(cat err)"
for kv in "LD_PRELOAD=$FAKE:$d/other.so" "CUDA_INJECTION64_PATH=$FAKE" "NVTX_INJECTION64_PATH=$FAKE" \
	"GPUPROF_OUTPUT=out-%p.gpuprof" GPUPROF_API=all GPUPROF_FLUSH_MS=200 GPUPROF_BUFFER_SIZE=4194304 \
	GPUPROF_MAX_MEMORY=1073741824 GPUPROF_GPU_WINDOW=2/30 GPUPROF_STACKS=1 GPUPROF_GPU_METRICS=5 \
	GPUPROF_FOLLOW_EXEC=0 GPUPROF_QUIET=1; do
	grep -qxF "$kv" env.txt || bad "job env lacks $kv"
done
grep -q '^GPUPROF_SUMMARY=/' env.txt || bad "job env lacks GPUPROF_SUMMARY"
[ -s err ] && bad "-q printed: $(cat err)"
"$G" run -- env >env2.txt 2>/dev/null
grep -qx "GPUPROF_FOLLOW_EXEC=1" env2.txt || bad "follow exec is the default"
grep -qx "GPUPROF_GPU_METRICS=10" env2.txt && bad "metrics off by default"
"$G" run --gpu-metrics -- env >env3.txt 2>/dev/null
grep -qx "GPUPROF_GPU_METRICS=10" env3.txt || bad "--gpu-metrics default rate"

# library next to the binary (../lib/libgpuprof.so) when GPUPROF_LIB is unset
mkdir -p inst/bin inst/lib && cp "$G" inst/bin/ && cp "$FAKE" inst/lib/libgpuprof.so
env -u GPUPROF_LIB inst/bin/gpuprof run -- env >env4.txt 2>/dev/null
grep -qx "LD_PRELOAD=$d/inst/lib/libgpuprof.so" env4.txt || bad "default library lookup: $(grep LD_PRELOAD env4.txt)"
GPUPROF_LIB=/nonexistent/libgpuprof.so "$G" run -- true 2>err; rc=$?
[ $rc -eq 1 ] || bad "missing library exit: $rc"
grep -q "cannot find libgpuprof.so" err || bad "missing library message: $(cat err)"

# summary line from the shim's summary file(s), with the file's size on disk
# (the fake shim's file is a copy of a gen_trace trace: 2.9 kB or so)
"$GEN" gen.gpuprof || bad "gen_trace"
export FAKE_SHIM_COPY=$d/gen.gpuprof
size=$(python3 -c 'import os,sys; b=os.path.getsize(sys.argv[1]); print(f"{b} B" if b < 1000 else f"{b/1e3:.1f} kB" if b < 1e6 else f"{b/1e6:.1f} MB")' gen.gpuprof)
"$G" run -o x.gpuprof -- env FAKE_SHIM_TRACE=1 true 2>err; rc=$?
[ $rc -eq 0 ] || bad "traced job exit $rc"
grep -qxF "gpuprof: 42 events, 1 dropped, wrote x.gpuprof ($size)" err || bad "summary line: $(cat err)"
[ "$(wc -l <err)" -eq 1 ] || bad "exactly one summary line: $(cat err)"
"$G" run -- sh -c 'env FAKE_SHIM_TRACE=1 true; env FAKE_SHIM_TRACE=1 true' 2>err
grep -q "^gpuprof: 84 events, 2 dropped, wrote 2 files: trace-[0-9]*.gpuprof ($size), trace-[0-9]*.gpuprof ($size)$" err \
	|| bad "two-process summary: $(cat err)"
# a file name with a space; two processes writing one file: one file, both
# counted
"$G" run -o 'my trace.gpuprof' -- sh -c 'env FAKE_SHIM_TRACE=1 true; env FAKE_SHIM_TRACE=1 true' 2>err
grep -qxF "gpuprof: 84 events, 2 dropped, wrote my trace.gpuprof ($size)" err \
	|| bad "one-line summary form: $(cat err)"
# a file that is not there (any more) is said to be missing
FAKE_SHIM_COPY= "$G" run -o gone.gpuprof -- env FAKE_SHIM_TRACE=1 true 2>err
grep -qxF "gpuprof: 42 events, 1 dropped, wrote gone.gpuprof (missing: No such file or directory)" err \
	|| bad "missing file: $(cat err)"
unset FAKE_SHIM_COPY
"$G" run -q -- env FAKE_SHIM_TRACE=1 true 2>err
[ -s err ] && bad "-q still printed the summary: $(cat err)"

# SIGTERM to gpuprof is forwarded to the job, whose own status is returned
"$G" run -- sh -c 'trap "exit 7" TERM; sleep 30 & wait' 2>err &
gp=$!
sleep 1
kill -TERM $gp
wait $gp; rc=$?
[ $rc -eq 7 ] || bad "SIGTERM forwarded, job's status returned: got $rc"
# the job dies of the forwarded signal -> 128+15
"$G" run -- sleep 30 2>err &
gp=$!
sleep 1
kill -TERM $gp
wait $gp; rc=$?
[ $rc -eq 143 ] || bad "forwarded SIGTERM kills the job -> 143: got $rc"

# usage errors
"$G" run 2>/dev/null; [ $? -eq 1 ] || bad "no command -> 1"
"$G" run --api=some -- true 2>/dev/null; [ $? -eq 1 ] || bad "bad --api -> 1"
"$G" run --buffer-size lots -- true 2>/dev/null; [ $? -eq 1 ] || bad "bad --buffer-size -> 1"
"$G" run --gpu-window 5 -- true 2>/dev/null; [ $? -eq 1 ] || bad "bad --gpu-window -> 1"
"$G" run --gpu-window 30/2 -- true 2>/dev/null; [ $? -eq 1 ] || bad "--gpu-window ON >= PERIOD -> 1"
"$G" run --gpu-window 1x/10 -- true 2>/dev/null; [ $? -eq 1 ] || bad "--gpu-window bad unit -> 1"
# implemented: passed on as given, no "not implemented" warning
"$G" run --gpu-window 500ms/10s --stacks -- env >env5.txt 2>err
grep -qx "GPUPROF_GPU_WINDOW=500ms/10s" env5.txt || bad "--gpu-window 500ms/10s not passed on"
grep -q "GPUPROF_GPU_WINDOW is not implemented" err && bad "--gpu-window still warns: $(cat err)"
grep -qx "GPUPROF_STACKS=1" env5.txt || bad "--stacks not passed on"
grep -q "not implemented" err && bad "--stacks still warns: $(cat err)"
# GPUPROF_STACKS=all in the environment stays all under --stacks; 0 becomes 1
GPUPROF_STACKS=all "$G" run --stacks -- env >env5b.txt 2>/dev/null
grep -qx "GPUPROF_STACKS=all" env5b.txt || bad "--stacks took GPUPROF_STACKS=all back to sampled: $(grep STACKS env5b.txt)"
GPUPROF_STACKS=0 "$G" run --stacks -- env >env5c.txt 2>/dev/null
grep -qx "GPUPROF_STACKS=1" env5c.txt || bad "--stacks with GPUPROF_STACKS=0: $(grep STACKS env5c.txt)"
for hz in 2.5 0 1001 10hz; do
	"$G" run --gpu-metrics=$hz -- true 2>/dev/null; [ $? -eq 1 ] || bad "bad --gpu-metrics=$hz -> 1"
done
"$G" run --gpu-metrics=50 -- env >env6.txt 2>err
grep -qx "GPUPROF_GPU_METRICS=50" env6.txt || bad "--gpu-metrics=50 not passed on"
grep -q "GPUPROF_GPU_METRICS is not implemented" err && bad "--gpu-metrics still warns: $(cat err)"
for iv in 10 50us 11s abc -5ms ""; do
	"$G" run --pm-sampling="$iv" -- true 2>/dev/null; [ $? -eq 1 ] || bad "bad --pm-sampling=$iv -> 1"
done
"$G" run --pm-sampling=500us -- env >env7.txt 2>/dev/null
grep -qx "GPUPROF_PM_SAMPLING=500us" env7.txt || bad "--pm-sampling=500us not passed on"
"$G" run --pm-sampling -- env >env8.txt 2>/dev/null
grep -qx "GPUPROF_PM_SAMPLING=10ms" env8.txt || bad "--pm-sampling default interval"
grep -q "^GPUPROF_PM_SAMPLING=" env2.txt && bad "PM sampling off by default"
# every name the shim takes (the one parser, libprof/gp_settings.c) is taken
# here too, in any case as there
for k in kernel memcpy memset peer memcpy2 sync memory device default all none default,sync,memory Kernel; do
	"$G" run --activity="$k" -- true 2>/dev/null || bad "--activity=$k refused"
done
for k in sync,bogus "" , kernels; do
	"$G" run --activity="$k" -- true 2>/dev/null; [ $? -eq 1 ] || bad "bad --activity=$k -> 1"
done
"$G" run --activity=default,sync -- env >env9.txt 2>/dev/null
grep -qx "GPUPROF_ACTIVITY=default,sync" env9.txt || bad "--activity=default,sync not passed on"
grep -q "^GPUPROF_ACTIVITY=" env2.txt && bad "GPUPROF_ACTIVITY set without --activity"
# the job's own options are not ours
"$G" run -- sh -c 'echo "$1"' sh --api=x >out 2>/dev/null
[ "$(cat out)" = "--api=x" ] || bad "job options passed through"

[ $fail -eq 0 ] && echo ok
exit $fail
