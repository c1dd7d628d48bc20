#!/usr/bin/env bash
# coexist_check.sh — issue #42 on the GPU machine: the job's own torch.profiler
# beside gpuprof (docs/CONFIG.md "Beside the job's own profiler").  For an HF
# Trainer (a TrainerCallback profiling steps 10..15) and a Lightning fit
# (profiler="pytorch"), each bare, under `gpuprof run` (default: yield), under
# `gpuprof run` without the profiler (the reference), and under
# `gpuprof run --flight-recorder` with triggers before, during and after the
# profiler's window:
#   - exit status and RESULT line as bare;
#   - the profiler's kernels per ProfilerStep# equal to the bare run's;
#   - gpuprof's trace: the gaps marked (counters gpuprof.coexist.*; Lightning's
#     default schedule may profile more than once), kernels before and after,
#     gpuprof's + the profiler's = the reference's (2 %);
#   - the trigger during the window refused (saying why), the ones outside
#     it captured (kernels in each capture file);
# then `nsys profile` around `gpuprof run` when an nsys is there: what happens.
# Run from the repo root (scripts/gpu-session.sh coexist calls it):
#   RESULTS_DIR=/tmp/r bash tests/gpu/coexist_check.sh
# Environment: COEXIST_JOBS (hf lightning), GPUPROF (build/bin/gpuprof),
# NSYS (the nsys to try; default: nsys on PATH, else Nsight Compute's copy).
set -u
G=${GPUPROF:-build/bin/gpuprof}
RES=${RESULTS_DIR:-/tmp/gpuprof-results}/coexist
rm -rf "$RES"; mkdir -p "$RES/ctl"; chmod 700 "$RES/ctl"
export GPUPROF_CONTROL_DIR=$RES/ctl PYTHONUNBUFFERED=1
CHK="python3 tests/gpu/coexist_check.py"
FAILS=0
check() { "$@" || { FAILS=$((FAILS + 1)); echo "FAIL: $*"; }; }
result() { grep -a '^RESULT' "$1" | tail -1; }
# same_result NAME LOG...: exit 0 and the bare run's RESULT line
same_result() {
  local want; want=$(result "$RES/$1-bare.log")
  for l in "${@:2}"; do
    local got; got=$(result "$l"); local ex; ex=$(sed -n 's/^exit //p' "$l" | tail -1)
    if [ "$ex" = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then echo "OK   $l: exit 0, $got"
    else echo "FAIL $l: exit $ex, '$got' (bare: '$want')"; FAILS=$((FAILS + 1)); fi
  done
}
# job NAME OUT: the command; OUT: the profiler's Chrome trace (file for hf, directory for
# lightning; "" = no profiler)
job() {
  case $1 in
    hf) echo python3 examples/thirdparty/hf_trainer.py --steps 600 --nvtx \
          ${2:+--torch-profile 100:105 --torch-profile-out "$2"} ;;
    lightning) echo python3 examples/thirdparty/lightning_fit.py --steps 600 --nvtx ${2:+--torch-profiler "$2"} ;;
  esac
}
# chrome NAME OUT: the Chrome trace file the job wrote
chrome() {
  case $1 in
    hf) echo "$2" ;;
    lightning) ls -t "$2"/*.pt.trace.json "$2"/*/*.pt.trace.json 2>/dev/null | head -1 ;;
  esac
}
run() { local log=$1; shift; ( timeout 240 "$@" >"$log" 2>&1; echo "exit $?" >>"$log" ); }
# step_of PID: the step its registration shows (-1 when none yet)
step_of() { sed -n 's/^step=//p' "$RES/ctl/$1.proc" 2>/dev/null | tail -1; }

for j in ${COEXIST_JOBS:-hf lightning}; do
  echo "=== $j [$(date +%T)]"
  o() { [ "$j" = hf ] && echo "$RES/$j-$1.json" || { mkdir -p "$RES/$j-$1"; echo "$RES/$j-$1"; }; }
  run "$RES/$j-bare.log" $(job $j "$(o bare)")
  run "$RES/$j-run.log" "$G" run -o "$RES/$j-run.gpuprof" -- $(job $j "$(o run)")
  run "$RES/$j-ref.log" "$G" run -o "$RES/$j-ref.gpuprof" -- $(job $j "")
  # armed: triggers at step 20 (before the window), inside it (hf's window is
  # 100..105; Lightning's default schedule waits one step, warms up one and
  # profiles three: about steps 1..4) with a 3 s stall fetching the next
  # batch to make sure, and at step 300 (after it).  The registration's step
  # is rewritten every flush tick (500 ms): on 60 steps of ~15 ms (the first
  # version, 2026-12-06 on the H100) "before" was seen at step 10, inside the
  # window, and "after" at step 59, the job's last: captures of no step.
  if [ "$j" = hf ]; then before=20; during=101; else before=-1; during=2; fi
  after=300
  mkdir -p "$RES/$j-fl"
  ( timeout 240 "$G" run --flight-recorder=30s -o "$RES/$j-fl/$j-%p.gpuprof" -- \
      $(job $j "$(o fl)") --stall-step $((during + 1)) --stall-s 3 >"$RES/$j-fl.log" 2>&1
    echo "exit $?" >>"$RES/$j-fl.log" ) &
  bg=$!
  pid=""; sent=""
  for i in $(seq 1 1800); do
    # the process with steps (Lightning's orted registers too, without any)
    for f in "$RES"/ctl/*.proc; do [ -e "$f" ] && grep -q '^step=[0-9]' "$f" && pid=$(basename "$f" .proc); done
    st=$(step_of "$pid"); st=${st:--1}
    for w in before during after; do
      k=${!w}; [ "$k" -ge 0 ] || continue
      case " $sent " in *" $w "*) continue ;; esac
      if [ -n "$pid" ] && [ "$st" -ge "$k" ] 2>/dev/null; then
        sent="$sent $w"
        echo "--- trigger $w the window at step $st"
        "$G" trigger --steps 5 "$pid" 2>&1 | sed 's/^/    /'
      fi
    done
    kill -0 $bg 2>/dev/null || break
    sleep 0.05
  done
  wait $bg
  rm -f "$RES"/ctl/*.proc
  same_result "$j" "$RES/$j-run.log" "$RES/$j-ref.log" "$RES/$j-fl.log"
  echo "--- gpuprof lines"; grep -a '^gpuprof:' "$RES/$j-run.log" "$RES/$j-fl.log" | cut -c1-240
  echo "--- the profiler's kernels per ProfilerStep#"
  check $CHK same "$(chrome $j "$(o bare)")" "$(chrome $j "$(o run)")" "$(chrome $j "$(o fl)")"
  echo "--- gpuprof's trace"
  check $CHK gap "$G" "$RES/$j-run.gpuprof" "$RES/$j-ref.gpuprof" "$(o run)"
  echo "--- the flight recorder's captures"
  grep -a 'refused\|accepted' "$RES/$j-fl.log" | cut -c1-240
  caps=$(ls "$RES/$j-fl"/*-cap*.gpuprof 2>/dev/null)
  echo "captures: $(echo $caps | wc -w)"
  [ -n "$caps" ] && check $CHK capture "$G" $caps
  # Lightning's window is where its schedule puts it: reported, not asserted
  if grep -aq "the job's own profiler has held CUPTI" "$RES/$j-fl.log"; then
    echo "OK   the trigger during the window was refused, saying why"
  elif [ "$j" = hf ]; then echo "FAIL no refusal during the window"; FAILS=$((FAILS + 1))
  else echo "note: no refusal (the trigger missed Lightning's window)"; fi
done

echo "=== nsys [$(date +%T)]"
NS=${NSYS:-$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)}
if [ -n "$NS" ] && [ -x "$NS" ]; then
  echo "nsys: $NS ($("$NS" --version 2>&1 | head -1))"
  timeout 150 "$NS" profile -o "$RES/nsys-around" --force-overwrite true -t cuda,nvtx \
    "$G" run -o "$RES/nsys-around.gpuprof" -- $(job hf "") >"$RES/nsys.log" 2>&1
  echo "--- nsys profile -- gpuprof run -- hf: exit $? (124: timed out)"
  grep -a 'RESULT\|^gpuprof:\|rror\|Generat\|report' "$RES/nsys.log" | cut -c1-200 | head -20
  ls -la "$RES"/nsys-around* 2>&1
  # the reverse: gpuprof preloaded into nsys and its target (nsys's injection
  # is the CUDA_INJECTION64_PATH there, so the shim binds at load, first)
  timeout 150 "$G" run -o "$RES/nsys-inside-%p.gpuprof" -- "$NS" profile -o "$RES/nsys-inside" \
    --force-overwrite true -t cuda,nvtx $(job hf "") >"$RES/nsys-inside.log" 2>&1
  echo "--- gpuprof run -- nsys profile -- hf: exit $? (124: timed out)"
  grep -a 'RESULT\|^gpuprof:\|rror\|Generat\|report' "$RES/nsys-inside.log" | cut -c1-200 | head -20
  ls -la "$RES"/nsys-inside* 2>&1
  for f in "$RES"/nsys-around*.gpuprof "$RES"/nsys-inside-*.gpuprof; do
    [ -e "$f" ] && echo "$f: $("$G" info "$f" 2>&1 | grep -ai 'kernel' | head -2 | tr '\n' ' ')"
    [ -e "$f" ] && "$G" dump --type counter "$f" 2>/dev/null | grep -a coexist | head -4
  done
else
  echo "no nsys here"
fi
rm -f "$RES"/*.gpuprof "$RES"/*/*.gpuprof
echo "=== coexist: $FAILS failed"
[ "$FAILS" -eq 0 ]
