#!/usr/bin/env bash
# matrix.sh — the compatibility matrix (issue #18): every recording option of
# `gpuprof run` on real third-party workloads (examples/thirdparty/), on the GPU
# machine, from the repo root (`scripts/gpu-session.sh matrix` calls it).  Each
# workload runs once bare, then once per option; scripts/matrix_table.py checks
# each run (exit status and RESULT line as bare, traces whole and decodable,
# kernel count as the default run's) and makes the table: printed, and written
# to $RES/matrix.md and $RES/matrix.csv.  docs/RELIABILITY.md "Compatibility
# matrix" says what a cell checks.
#
#   scripts/matrix.sh
#   WORKLOADS="hf_trainer jax_flax" OPTIONS="default stacks" scripts/matrix.sh
#
# Environment:
#   WORKLOADS   names below (default: all, longest first)
#   OPTIONS     names below, or NAME:ARG[+ARG...] for another option set, e.g.
#               "default flush:--flush-ms=20+--api=all" (default: all below)
#   TIMEOUT     seconds one run may take (120)
#   BUDGET_S    seconds for the whole matrix (480): a run that would start past
#               it (from the bare run's time) is "not run"; every run is
#               killed at BUDGET_S + 30
#   JOBS        workloads run side by side (3); the PM-sampling runs run alone
#               (a writer-preferring flock: one CUPTI profiling session on the
#               GPU at a time); 1 = one run at a time
#   KEEP_TRACES fail (keep the traces of runs that failed a check, up to
#               KEEP_MAX_MB=4 per run: what comes back from the GPU machine is
#               small), all, none
#   RESULTS_DIR where results go (/tmp/gpuprof-results): traces
#               m-<workload>-<option>-<pid>.gpuprof, matrix.md, matrix.csv,
#               matrix/ (each run's stdout, stderr, CSV row)
#   GPUPROF (build/bin/gpuprof), PYTHON (python3), BUILD (the build's name
#               in the table's title; default: build/BUILD, else git's short commit)
#   MATRIX_CMD_<workload>  the command of a workload (replaces the table below;
#               also adds a workload: the self-test runs a fake one)
set -u
ROOT=$(pwd)
G=${GPUPROF:-build/bin/gpuprof}
case $G in /*) ;; *) G=$ROOT/$G ;; esac
PY=${PYTHON:-python3}
RES=${RESULTS_DIR:-/tmp/gpuprof-results}
D=$RES/matrix
mkdir -p "$D" || exit 2
TIMEOUT=${TIMEOUT:-120}
BUDGET_S=${BUDGET_S:-480}
JOBS=${JOBS:-3}
KEEP_TRACES=${KEEP_TRACES:-fail}
KEEP_MAX_MB=${KEEP_MAX_MB:-4}
TABLE=$ROOT/scripts/matrix_table.py
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

# the workloads: small step counts, each a few seconds to ~20 s on an H200
declare -A CMD=(
  [compile_graphs]="$PY examples/thirdparty/compile_graphs.py"
  [hf_trainer]="$PY examples/thirdparty/hf_trainer.py"
  [lightning_fit]="$PY examples/thirdparty/lightning_fit.py"
  [mp_spawn]="$PY examples/thirdparty/mp_spawn.py"
  [timm_model]="$PY examples/thirdparty/timm_model.py"
  [jax_flax]="$PY examples/thirdparty/jax_flax.py"
  [dataloader_workers]="$PY examples/thirdparty/dataloader_workers.py"
  [cupy_rawkernel]="$PY examples/thirdparty/cupy_rawkernel.py"
)
WORKLOADS=${WORKLOADS:-compile_graphs hf_trainer lightning_fit mp_spawn timm_model jax_flax dataloader_workers cupy_rawkernel}
# the option sets (status: the file pattern is added per workload)
declare -A OPT=(
  [default]=""
  [api-all]="--api=all"
  [activity]="--activity=default,sync,memory"
  [stacks]="--stacks"
  [memory]="--activity=default,memory --stacks"
  [gpu-metrics]="--gpu-metrics=20"
  [pm-sampling]="--pm-sampling=10ms"
  [gpu-window]="--gpu-window=50ms/200ms"
  [capture-range]="--capture-range=cudaProfilerApi"
  [status]="--status"
  [flight-recorder]="--flight-recorder=30s"
  [sample-steps]="--sample-steps=1/10"
)
# memory: the memory view's records (issue #39: memory records, stacks at
# allocation calls too); flight-recorder: armed and never triggered (none of
# these jobs runs out of memory: its default oom rule never fires), it must
# write no trace (and say so); sample-steps: GPU activity only in every 10th NVTX step (none of these
# jobs marks steps: its kernel count is at most the default run's)
OPTIONS=${OPTIONS:-default api-all activity stacks memory gpu-metrics pm-sampling gpu-window capture-range status flight-recorder sample-steps}
names=""
for o in $OPTIONS; do
  case $o in
  *:*) OPT[${o%%:*}]=$(echo "${o#*:}" | tr + ' '); names="$names ${o%%:*}" ;;
  *) [ -n "${OPT[$o]+x}" ] || { echo "matrix.sh: unknown option set '$o' (${!OPT[*]})" >&2; exit 2; }
     names="$names $o" ;;
  esac
done
OPTIONS=${names# }
for wl in $WORKLOADS; do
  v=MATRIX_CMD_$wl
  [ -n "${!v:-}" ] && CMD[$wl]=${!v}
  [ -n "${CMD[$wl]:-}" ] || { echo "matrix.sh: unknown workload '$wl' (${!CMD[*]})" >&2; exit 2; }
done
"$G" --version >/dev/null 2>&1 || { echo "matrix.sh: $G does not run" >&2; exit 2; }
if [ "$JOBS" -gt 1 ] && ! command -v flock >/dev/null; then
  echo "matrix.sh: no flock here: JOBS=1" >&2; JOBS=1
fi
rm -f "$RES"/m-*.gpuprof "$D"/* "$D"/.pg-*

T0=$(date +%s)
LOCK_GATE=$D/.lock-gate LOCK_GPU=$D/.lock-gpu
elapsed() { echo $(( $(date +%s) - T0 )); }

# timed WL NAME EXCLUSIVE CMD...: runs CMD (stdout/stderr to $D/WL.NAME.{out,err}),
# sets RC and MS.  With JOBS > 1 it holds the GPU lock shared, or alone for
# EXCLUSIVE=1 (the gate makes a waiting exclusive run block later shared ones).
timed() {
  local wl=$1 name=$2 excl=$3 gate gpu left t s; shift 3
  if [ "$JOBS" -gt 1 ]; then
    exec {gate}>>"$LOCK_GATE" {gpu}>>"$LOCK_GPU"
    flock -x $gate
    if [ "$excl" = 1 ]; then flock -x $gpu; else flock -s $gpu; flock -u $gate; fi
  fi
  # the time limit: TIMEOUT, and no run goes on past BUDGET_S + 30
  left=$(( BUDGET_S + 30 - $(elapsed) ))
  [ $left -lt 5 ] && left=5
  t=$TIMEOUT; [ "$left" -lt "$t" ] && t=$left
  s=$(date +%s%N)
  # timeout runs the job in a process group of its own (its pid): .pg-* names
  # it for the trap below, which a signal to matrix.sh's group would not reach
  # shellcheck disable=SC2016
  timeout -k 10 "$t" sh -c 'echo "$PPID" >"$0"; exec "$@"' "$D/.pg-$wl.$name" "$@" \
    >"$D/$wl.$name.out" 2>"$D/$wl.$name.err"
  RC=$?
  rm -f "$D/.pg-$wl.$name"
  MS=$(( ($(date +%s%N) - s) / 1000000 ))
  if [ "$JOBS" -gt 1 ]; then
    flock -u $gpu; flock -u $gate
    exec {gate}>&- {gpu}>&-
  fi
}

# row WL: the bare run, then one run per option
row() {
  local wl=$1 cmd=${CMD[$1]} o est args
  # too late for even a short row: all of it "not run" (the sweep below)
  [ $(( $(elapsed) + 15 )) -gt "$BUDGET_S" ] && return
  # shellcheck disable=SC2086
  timed "$wl" bare 0 $cmd
  "$PY" "$TABLE" cell --workload "$wl" --option bare --row "$D/$wl.bare.csv" --rc $RC --wall-ms $MS \
    --stdout "$D/$wl.bare.out" --stderr "$D/$wl.bare.err"
  local bare_ok=$?
  # a run under gpuprof: up to twice the bare run's time and 10 s more (estimate)
  est=$(( MS * 2 / 1000 + 10 ))
  for o in $OPTIONS; do
    if [ $bare_ok -ne 0 ]; then
      "$PY" "$TABLE" cell --workload "$wl" --option "$o" --row "$D/$wl.$o.csv" --state skip >/dev/null
      continue
    fi
    if [ $(( $(elapsed) + est )) -gt "$BUDGET_S" ]; then
      "$PY" "$TABLE" cell --workload "$wl" --option "$o" --row "$D/$wl.$o.csv" --state "not run"
      continue
    fi
    args=${OPT[$o]}
    local st=()
    [ "$o" = status ] && { args="--status=$D/st-$wl-%p.json"; st=(--status "$D/st-$wl-"); }
    case " $args " in *" --flight-recorder"*) st+=(--expect-no-trace) ;; esac
    local ex=0
    case " $args " in *" --pm-sampling"*) ex=1 ;; esac
    # shellcheck disable=SC2086
    timed "$wl" "$o" $ex "$G" run $args -o "$RES/m-$wl-$o-%p.gpuprof" -- $cmd
    if "$PY" "$TABLE" cell --workload "$wl" --option "$o" --args="$args" --row "$D/$wl.$o.csv" \
         --rc $RC --wall-ms $MS --stdout "$D/$wl.$o.out" --stderr "$D/$wl.$o.err" \
         --bare-stdout "$D/$wl.bare.out" --bare-stderr "$D/$wl.bare.err" \
         --traces "$RES/m-$wl-$o-" "${st[@]}" --gpuprof "$G"; then
      [ "$KEEP_TRACES" = all ] || rm -f "$RES/m-$wl-$o-"*.gpuprof
    elif [ "$KEEP_TRACES" = none ] ||
         [ "$(du -cm "$RES/m-$wl-$o-"*.gpuprof 2>/dev/null | tail -1 | cut -f1)" -gt "$KEEP_MAX_MB" ] 2>/dev/null; then
      rm -f "$RES/m-$wl-$o-"*.gpuprof
    fi
  done
}

# the build's own name (scripts/carry-build.sh writes build/BUILD), else git's
BUILD=${BUILD:-$(cat "$ROOT/build/BUILD" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)}
STOPPED=""
# table: every cell without a row is "not run"; then the table of them all
table() {
  local rows=() gpu vers
  for wl in $WORKLOADS; do
    for o in bare $OPTIONS; do
      [ -e "$D/$wl.$o.csv" ] ||
        "$PY" "$TABLE" cell --workload "$wl" --option "$o" --row "$D/$wl.$o.csv" --state "not run" >/dev/null
      rows+=("$D/$wl.$o.csv")
    done
  done
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
  vers=$("$PY" -c '
import importlib.metadata as m
out = []
for p in ("torch", "transformers", "lightning", "timm", "jax", "flax", "optax", "cupy-cuda13x"):
    try:
        out.append("%s %s" % (p, m.version(p)))
    except Exception:
        pass
print(", ".join(out))' 2>/dev/null)
  echo "=== matrix: done in $(elapsed) s$STOPPED"
  "$PY" "$TABLE" table "${rows[@]}" --md "$RES/matrix.md" --csv "$RES/matrix.csv" \
    --title "Compatibility matrix: build $BUILD ($("$G" --version 2>/dev/null)), $(date -u +%Y-%m-%d), ${gpu:-no nvidia-smi}" \
    --title "Packages: ${vers:-unknown}; $(elapsed) s for the matrix$STOPPED, JOBS=$JOBS"
}
# stopped from outside (gpu-session's timeout, ^C): the runs in flight killed
# (process groups of their own), then the table of what ran
# shellcheck disable=SC2046
stop() {
  trap - TERM INT
  STOPPED=" (stopped by a signal)"
  kill $(jobs -p) 2>/dev/null
  for f in "$D"/.pg-*; do [ -s "$f" ] && kill -TERM -- "-$(cat "$f")" 2>/dev/null; done
  wait
  table
  exit 124
}
trap stop TERM INT

echo "=== matrix: workloads: $WORKLOADS"
echo "=== matrix: options: $OPTIONS (JOBS=$JOBS TIMEOUT=$TIMEOUT BUDGET_S=$BUDGET_S)"
for wl in $WORKLOADS; do
  if [ "$JOBS" -gt 1 ]; then
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    row "$wl" &
  else
    row "$wl"
  fi
done
wait
table
