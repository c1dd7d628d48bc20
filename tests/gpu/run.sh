#!/usr/bin/env bash
# tests/gpu/run.sh — THE one-command GPU suite (run on a machine with a GPU).
#
#   bash tests/gpu/run.sh            # from the repo root or anywhere
#
# Needs build/bin/gpuprof and build/lib/libgpuprof.so (make), nvcc (builds the
# .cu examples into build/gpu/) and python3 with torch.  Without a GPU it
# exits 77 (skip).  Results (traces, logs, check reports) go to
# $RESULTS_DIR/suite, else $OUT/suite, else build/gpu/out/suite.
#
# Knobs: MNIST_STEPS (100), VA_ITERS (50), JOB_TIMEOUT (300 s per job),
#        PYTHON (python3), NVCC, CUDA_ARCH (sm_90), B (build), GPUPROF, GPUPROF_LIB.
#
# Steps (each prints PASS/FAIL lines; the suite ends with "N passed, N failed"):
#   a. vector_add under `gpuprof run`: exact counts (check_trace.py --expect),
#      and its stdout is byte-identical to an untraced run
#   b. train_mnist.py under `gpuprof run`: step-mode checks, kernels/step,
#      events, bytes/event
#   c. LD_PRELOAD + GPUPROF_OUTPUT only (no `gpuprof run`): vector_add and a
#      short MNIST run
#   d. DataLoader with 2 workers re-forked every 10 steps finishes (timeout)
#   e. a job killed with SIGKILL mid-run leaves a readable trace
#   f. DDP with 2 ranks on one GPU (torchrun, gloo): every rank traced
#      (DDP=0 leaves it out)
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "skip: no GPU (nvidia-smi -L found none)"
  exit 77
fi

B=${B:-build}
GPUPROF=${GPUPROF:-$ROOT/$B/bin/gpuprof}
LIB=${GPUPROF_LIB:-$ROOT/$B/lib/libgpuprof.so}
PY=${PYTHON:-python3}
T=${JOB_TIMEOUT:-300}
MNIST_STEPS=${MNIST_STEPS:-100}
VA_ITERS=${VA_ITERS:-50}
CUDA_ARCH=${CUDA_ARCH:-sm_90}
export GPUPROF  # check_trace.py reads it
[ -d /usr/local/cuda-13.0 ] && export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
for f in "$GPUPROF" "$LIB"; do
  if [ ! -f "$f" ]; then
    echo "error: $f is missing: build it first (make), or set GPUPROF= / GPUPROF_LIB="
    echo "0 passed, 1 failed"
    exit 1
  fi
done
OUTDIR=${RESULTS_DIR:-${OUT:-$ROOT/$B/gpu/out}}/suite
rm -rf "$OUTDIR"; mkdir -p "$OUTDIR"
echo "gpu suite: results in $OUTDIR"

pass=0; fail=0; failed=""
result() { # result RC NAME [detail]
  if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "PASS $2${3:+: $3}"
  else fail=$((fail + 1)); failed="$failed; $2"; echo "FAIL $2${3:+: $3}"; fi
}
traces() { find "$1" -maxdepth 1 -type f -name '*.gpuprof*' | sort; }
check() { # check NAME LOG ARGS... : runs check_trace.py, output to LOG and stdout
  local name=$1 log=$2; shift 2
  timeout "$T" "$PY" tests/gpu/check_trace.py "$@" >"$log" 2>&1; local rc=$?
  sed 's/^/    /' "$log"
  result $rc "$name" "check_trace exit $rc"
}

# ---------------------------------------------------------------- build
NVCC=${NVCC:-}
for n in "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" /usr/local/cuda/bin/nvcc "$(command -v nvcc 2>/dev/null)"; do
  [ -z "$NVCC" ] && [ -x "$n" ] && NVCC=$n
done
mkdir -p "$B/gpu"
build_ok=0
for ex in vector_add empty_kernel; do
  if [ ! -x "$B/gpu/$ex" ] || [ "examples/$ex.cu" -nt "$B/gpu/$ex" ]; then
    if [ -z "$NVCC" ]; then echo "error: nvcc not found (set NVCC=)"; build_ok=1; continue; fi
    "$NVCC" -O2 -lineinfo -arch="$CUDA_ARCH" -I"${CUDA_HOME:-/usr/local/cuda}/include" \
      -o "$B/gpu/$ex" "examples/$ex.cu" >"$OUTDIR/build-$ex.log" 2>&1 || { cat "$OUTDIR/build-$ex.log"; build_ok=1; }
  fi
done
result $build_ok "build .cu examples" "$NVCC -arch=$CUDA_ARCH"

# ---------------------------------------------------------------- a. vector_add
d=$OUTDIR/a-vector_add; mkdir -p "$d/trace"
timeout "$T" "$B/gpu/vector_add" "$VA_ITERS" >"$d/bare.stdout" 2>"$d/bare.stderr"; rc=$?
result $rc "a. vector_add runs untraced" "exit $rc, $(head -c 200 "$d/bare.stdout")"
timeout "$T" "$GPUPROF" run -o "$d/trace/vector_add-%p.gpuprof" -- "$B/gpu/vector_add" "$VA_ITERS" \
  >"$d/traced.stdout" 2>"$d/traced.stderr"; rc=$?
result $rc "a. vector_add under gpuprof run" "exit $rc"
cmp -s "$d/bare.stdout" "$d/traced.stdout"
result $? "a. traced stdout identical to untraced" "$(head -c 200 "$d/traced.stdout")"
grep '^gpuprof' "$d/traced.stderr" | head -5 | sed 's/^/    stderr: /'
mapfile -t tr < <(traces "$d/trace")
if [ ${#tr[@]} -eq 0 ]; then result 1 "a. vector_add trace written" "no *.gpuprof* in $d/trace"
else check "a. vector_add trace matches EXPECT" "$d/check.log" --expect "$d/traced.stderr" \
       --report "$d/check.json" "${tr[@]}"; fi

# ---------------------------------------------------------------- b. mnist
d=$OUTDIR/b-mnist; mkdir -p "$d/trace"
WARM=5
timeout "$T" "$GPUPROF" run -o "$d/trace/mnist-%p.gpuprof" -- \
  "$PY" examples/train_mnist.py --steps "$MNIST_STEPS" --warmup $WARM --workers 2 \
  >"$d/stdout" 2>"$d/stderr"; rc=$?
result $rc "b. train_mnist.py under gpuprof run" "exit $rc; $(grep '^RESULT' "$d/stdout")"
[ $rc = 0 ] || tail -20 "$d/stderr" | sed 's/^/    /'
mapfile -t tr < <(traces "$d/trace")
if [ ${#tr[@]} -eq 0 ]; then result 1 "b. mnist trace written" "no *.gpuprof* in $d/trace"
else
  echo "    trace files: ${#tr[@]} ($(du -cb "${tr[@]}" | tail -1 | cut -f1) bytes)"
  check "b. mnist steps consistent" "$d/check.log" --steps $((MNIST_STEPS + WARM)) --skip 2 \
    --nested --report "$d/check.json" "${tr[@]}"
  grep '^SUMMARY' "$d/check.log" | sed 's/^/    /'
fi

# ---------------------------------------------------------------- c. LD_PRELOAD only
d=$OUTDIR/c-preload; mkdir -p "$d/va" "$d/mnist"
LD_PRELOAD=$LIB GPUPROF_OUTPUT="$d/va/vector_add-%p.gpuprof" timeout "$T" "$B/gpu/vector_add" "$VA_ITERS" \
  >"$d/va.stdout" 2>"$d/va.stderr"; rc=$?
result $rc "c. vector_add with LD_PRELOAD only" "exit $rc"
mapfile -t tr < <(traces "$d/va")
if [ ${#tr[@]} -eq 0 ]; then result 1 "c. LD_PRELOAD trace written" "no *.gpuprof* in $d/va"
else check "c. LD_PRELOAD vector_add trace matches EXPECT" "$d/va-check.log" --expect "$d/va.stderr" "${tr[@]}"; fi
LD_PRELOAD=$LIB GPUPROF_OUTPUT="$d/mnist/mnist-%p.gpuprof" timeout "$T" \
  "$PY" examples/train_mnist.py --steps 20 --warmup 3 --workers 0 >"$d/mnist.stdout" 2>"$d/mnist.stderr"; rc=$?
result $rc "c. train_mnist.py with LD_PRELOAD only" "exit $rc; $(grep '^RESULT' "$d/mnist.stdout")"
mapfile -t tr < <(traces "$d/mnist")
if [ ${#tr[@]} -eq 0 ]; then result 1 "c. LD_PRELOAD mnist trace written" "no *.gpuprof* in $d/mnist"
else check "c. LD_PRELOAD mnist steps consistent" "$d/mnist-check.log" --steps 23 --skip 2 --nested "${tr[@]}"; fi

# ---------------------------------------------------------------- d. DataLoader workers
# Workers are forked (after CUDA init, with the shim's threads running) at
# every epoch: 4 epochs of 10 steps.  Finishing within the timeout is the check.
d=$OUTDIR/d-workers; mkdir -p "$d/trace"
timeout 120 "$GPUPROF" run -o "$d/trace/workers-%p.gpuprof" -- \
  "$PY" examples/train_mnist.py --steps 37 --warmup 3 --workers 2 --epoch-steps 10 \
  >"$d/stdout" 2>"$d/stderr"; rc=$?
grep -q '^RESULT steps=37 ' "$d/stdout"; r2=$?
[ $rc = 0 ] && rc=$r2
result $rc "d. DataLoader 2 workers x 4 epochs: no deadlock" \
  "exit $rc (124 = timed out); $(grep '^RESULT' "$d/stdout")"
[ $rc = 0 ] || tail -20 "$d/stderr" | sed 's/^/    /'
mapfile -t tr < <(traces "$d/trace")
if [ ${#tr[@]} -gt 0 ]; then
  check "d. workers run: trace consistent" "$d/check.log" --steps 40 --skip 2 --nested "${tr[@]}"
fi

# ---------------------------------------------------------------- e. SIGKILL
# The trace must survive the job being killed: wait (event-driven, bounded)
# until the job has done 60 steps, SIGKILL it, then read what was flushed.
d=$OUTDIR/e-kill; mkdir -p "$d/trace"
"$GPUPROF" run -o "$d/trace/killed-%p.gpuprof" -- \
  "$PY" examples/train_mnist.py --steps 100000 --warmup 3 --workers 0 --log-interval 20 \
  >"$d/stdout" 2>"$d/stderr" &
gp=$!
for _ in $(seq 1 1200); do  # at most 120 s
  grep -q 'progress step=60' "$d/stderr" 2>/dev/null && break
  kill -0 $gp 2>/dev/null || break
  sleep 0.1
done
sleep 1  # let at least one periodic flush (default 500 ms) happen after step 60
# Kill the job itself (the child of `gpuprof run`; found through /proc, no
# pgrep needed), then the wrapper.
for st in /proc/[0-9]*/stat; do
  read -r cpid _ _ ppid _ <"$st" 2>/dev/null || continue
  [ "$ppid" = "$gp" ] && kill -9 "$cpid" 2>/dev/null
done
kill -9 $gp 2>/dev/null; wait $gp 2>/dev/null
grep -q 'progress step=60' "$d/stderr"
result $? "e. job reached step 60 before the kill" "$(grep -c progress "$d/stderr") progress lines"
mapfile -t tr < <(traces "$d/trace")
if [ ${#tr[@]} -eq 0 ]; then result 1 "e. killed job left a trace" "no *.gpuprof* in $d/trace"
else check "e. killed job's trace readable" "$d/check.log" --step-mode --min-steps 50 --skip 2 \
       --allow-truncated "${tr[@]}"; fi

# ---------------------------------------------------------------- f. DDP, 2 ranks on one GPU
# torchrun -> 2 worker processes (gloo: NCCL refuses two ranks on one GPU),
# traced through exec; every rank's file must hold consistent steps.
if [ "${DDP:-1}" = 1 ]; then
  d=$OUTDIR/f-ddp; mkdir -p "$d/trace"
  timeout 180 "$GPUPROF" run -o "$d/trace/ddp-%p.gpuprof" -- "$PY" -m torch.distributed.run \
    --standalone --nproc_per_node=2 examples/train_ddp.py --same-gpu --steps 30 --warmup 3 \
    >"$d/stdout" 2>"$d/stderr"; rc=$?
  result $rc "f. DDP 2 ranks on one GPU under gpuprof run" "exit $rc; $(grep '^RESULT' "$d/stdout")"
  [ $rc = 0 ] || tail -20 "$d/stderr" | sed 's/^/    /'
  mapfile -t tr < <(traces "$d/trace")
  if [ ${#tr[@]} -eq 0 ]; then result 1 "f. DDP traces written" "no *.gpuprof* in $d/trace"
  else
    echo "    trace files: ${#tr[@]}"
    check "f. DDP: both ranks' steps consistent" "$d/check.log" --each-pid --min-pids 2 \
      --steps 33 --skip 2 --nested "${tr[@]}"
  fi
fi

echo
[ -n "$failed" ] && echo "failed:${failed#;}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
