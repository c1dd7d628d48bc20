# lib.sh — shared set-up for the shim's script tests (sourced; $1 = build dir).
# Provides: $B, $SHIM, $FAKE_CUPTI, $WORKLOAD, $CHECK, $T (a temp dir removed
# at exit), fail(), and run_traced/run_plain wrappers.
set -u
B=${1:?usage: $0 BUILD_DIR}
ROOT=$(pwd)
case $B in /*) ;; *) B=$ROOT/$B ;; esac
SHIM=$B/lib/libgpuprof.so
FAKE_CUPTI=$B/tests/fake/libcupti.so.13
WORKLOAD=$B/tests/fake/workload
CHECK=$B/tests/shim/check_trace
for f in "$SHIM" "$FAKE_CUPTI" "$WORKLOAD" "$CHECK"; do
  [ -e "$f" ] || { echo "missing $f (build first)"; exit 1; }
done
T=$(mktemp -d /tmp/gpuprof-shimtest.XXXXXX)
trap 'rm -rf "$T"' EXIT
# the environment the tests control: nothing inherited from the caller
unset LD_PRELOAD CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH GPUPROF_ROOT_PID \
  GPUPROF_OUTPUT GPUPROF_GPU_WINDOW GPUPROF_API GPUPROF_API_MODE GPUPROF_API_DRIVER GPUPROF_FLUSH_MS GPUPROF_ACTIVITY GPUPROF_CUPTI GPUPROF_ENABLE \
  GPUPROF_QUIET GPUPROF_SUMMARY GPUPROF_FOLLOW_EXEC GPUPROF_BIND GPUPROF_CLOCK FAKE_CUPTI_BUSY \
  FAKE_CUPTI_NO_TSCB FAKE_CUPTI_LOG 2>/dev/null
FAILED=0
fail() { echo "FAIL: $*"; FAILED=1; }
finish() { [ $FAILED -eq 0 ] && echo "ok" ; exit $FAILED; }
# run_plain OUT ERR [args]: the workload untraced; returns its status
run_plain() { o=$1; e=$2; shift 2; timeout 60 "$WORKLOAD" "$@" >"$o" 2>"$e"; }
# run_traced OUT ERR [args]: preloaded, fake CUPTI, traces into $T/trace-%p.gpuprof
run_traced() {
  o=$1; e=$2; shift 2
  GPUPROF_OUTPUT=${GPUPROF_OUTPUT:-$T/trace-%p.gpuprof} GPUPROF_CUPTI=${GPUPROF_CUPTI:-$FAKE_CUPTI} \
    LD_PRELOAD=$SHIM timeout 60 "$WORKLOAD" "$@" >"$o" 2>"$e"
}
# lines of a file that do not start with "gpuprof: "
foreign_lines() { grep -v '^gpuprof: ' "$1" | grep -c . ; }
# loop_run_ok LABEL RC OUT ERR: a traced `workload loop MS` run that must look
# untraced: exit 0, stdout its one "loop N" line, stderr only gpuprof: lines
loop_run_ok() {
  [ "$2" -eq 0 ] || fail "$1: exit $2"
  grep -q '^loop [0-9]*$' "$3" || fail "$1: stdout: $(cat "$3")"
  [ "$(foreign_lines "$4")" -eq 0 ] || { fail "$1: non-gpuprof stderr"; cat "$4"; }
}
count_lines() { grep -c . "$1"; }
