#!/usr/bin/env bash
# hints.sh — issue #43 on the GPU machine: steps, anomaly capture, trigger and
# step sampling on jobs that carry no hint (no NVTX), and the same jobs with
# NVTX steps; checked through the offline tool (tests/gpu/hints_check.py).
# Run from the repo root (scripts/gpu-session.sh hints calls it):
#   RESULTS_DIR=/tmp/r bash tests/gpu/hints.sh
# Environment: HINTS_JOBS (mnist hf lightning; also hfpad: HF with batches padded to their longest), HINTS_STEPS (400), HINTS_STALL (200),
# HINTS_TRIG_STEPS (3000), GPUPROF (build/bin/gpuprof).
set -u
G=${GPUPROF:-build/bin/gpuprof}
RES=${RESULTS_DIR:-/tmp/gpuprof-results}/hints
rm -rf "$RES"; mkdir -p "$RES/ctl"; chmod 700 "$RES/ctl"
export GPUPROF_CONTROL_DIR=$RES/ctl PYTHONUNBUFFERED=1
JOBS=${HINTS_JOBS:-mnist hf lightning}
S=${HINTS_STEPS:-400}; K=${HINTS_STALL:-200}; T=${HINTS_TRIG_STEPS:-3000}
CHK="python3 tests/gpu/hints_check.py"
# job NAME VARIANT STEPS STALL: the command (VARIANT nonvtx|nvtx; STALL < 0: none)
job() {
  case $1 in
    mnist) echo python3 examples/train_mnist.py --warmup 5 --steps "$3" --stall-at "$4" --stall-s 2 \
             "$([ "$2" = nvtx ] || echo --no-nvtx)" ;;
    hf) echo python3 examples/thirdparty/hf_trainer.py --steps "$3" --stall-step "$4" "$([ "$2" = nvtx ] && echo --nvtx)" ;;
    # hfpad: the input copies change size every step (each batch padded to its longest sample)
    hfpad) echo python3 examples/thirdparty/hf_trainer.py --pad-varies --steps "$3" --stall-step "$4" \
             "$([ "$2" = nvtx ] && echo --nvtx)" ;;
    lightning) echo python3 examples/thirdparty/lightning_fit.py --steps "$3" --stall-step "$4" \
                 "$([ "$2" = nvtx ] && echo --nvtx)" ;;
  esac
}
echo "=== A. a 2 s stall at step $K, armed with --trigger 'step>5x'; and gpuprof trigger --steps 10 (jobs side by side)"
for j in $JOBS; do
  for v in nonvtx nvtx; do
    mkdir -p "$RES/stall-$j-$v"
    ( timeout 240 "$G" run --flight-recorder=30s --trigger='step>5x' -o "$RES/stall-$j-$v/$j-%p.gpuprof" -- \
        $(job $j $v "$S" "$K") >"$RES/stall-$j-$v.log" 2>&1; echo "exit $?" >>"$RES/stall-$j-$v.log" ) &
  done
  mkdir -p "$RES/trig-$j"
  ( HINTS_ROLE=trig timeout 300 "$G" run --flight-recorder=30s -o "$RES/trig-$j/$j-%p.gpuprof" -- $(job $j nonvtx "$T" -1) \
      >"$RES/trig-$j.log" 2>&1; echo "exit $?" >>"$RES/trig-$j.log" ) &
done
# trigger each job once its registration says step >= 100
declare -A done_pid=(); ntrig=0
for i in $(seq 1 1200); do
  for f in "$RES"/ctl/*.proc; do
    [ -e "$f" ] || continue
    p=$(basename "$f" .proc)
    [ -n "${done_pid[$p]:-}" ] && continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx HINTS_ROLE=trig || continue
    cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)
    st=$(sed -n 's/^step=//p' "$f" 2>/dev/null)
    if [ -n "$st" ] && [ "$st" -ge 100 ] 2>/dev/null; then
      done_pid[$p]=1; ntrig=$((ntrig + 1))
      echo "--- trigger pid $p at step $st: $cmd"
      "$G" trigger --steps 10 --wait "$p" & 
    fi
  done
  [ "$ntrig" -ge $(echo $JOBS | wc -w) ] && break
  sleep 0.1
done
wait
for j in $JOBS; do
  for v in nonvtx nvtx; do
    echo "--- stall $j $v: $(tail -1 "$RES/stall-$j-$v.log")"; grep -E 'gpuprof:|RESULT' "$RES/stall-$j-$v.log" | head -8
    $CHK capture "$RES/stall-$j-$v" --min-steps 5
  done
  echo "--- trigger $j: $(tail -1 "$RES/trig-$j.log")"; grep -E 'gpuprof:|RESULT' "$RES/trig-$j.log" | head -5
  c=$(ls "$RES/trig-$j"/*-cap*.gpuprof 2>/dev/null | head -1)
  if [ -n "$c" ]; then $CHK trigger "$c" --k 10; else echo "HINTS FAIL trigger $j: no capture file"; fi
done
echo "=== B. --sample-steps 1/10 vs a full trace, and step boundaries by method (one job at a time)"
for j in $JOBS; do
  timeout 240 "$G" run --sample-steps 1/10 -o "$RES/sample-$j.gpuprof" -- $(job $j nonvtx "$S" -1) 2>&1 | grep -E 'gpuprof|RESULT'
  timeout 240 "$G" run -o "$RES/full-$j.gpuprof" -- $(job $j nonvtx "$S" -1) 2>&1 | grep -E 'gpuprof|RESULT'
  timeout 240 "$G" run -o "$RES/fullnvtx-$j.gpuprof" -- $(job $j nvtx "$S" -1) 2>&1 | grep -E 'gpuprof|RESULT'
  echo "--- sample $j"; $CHK sample "$RES/sample-$j.gpuprof" "$RES/full-$j.gpuprof"
  # one step in 2 sampled: a trace that holds the shim's found steps (a plain trace runs no finder) and
  # the GPU work of every other step, for the trace method
  timeout 240 "$G" run --sample-steps 1/2 -o "$RES/found-$j.gpuprof" -- $(job $j nonvtx "$S" -1) 2>&1 | grep -E 'gpuprof|RESULT'
  echo "--- bounds $j, no NVTX (the shim's online steps, --sample-steps 1/2, against the trace method)"
  $CHK bounds "$RES/found-$j.gpuprof" --sampled 2
  echo "--- bounds $j, NVTX steps"; $CHK bounds "$RES/fullnvtx-$j.gpuprof"
done
