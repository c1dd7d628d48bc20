#!/usr/bin/env bash
# bench/overhead/run.sh — tracing overhead, one command on the GPU machine.
#
#   bash bench/overhead/run.sh
#   WORKLOADS="mnist" CONFIGS="bare floor gpuprof" REPS=5 bash bench/overhead/run.sh
#
# For each repetition, every workload runs every config back to back
# (interleaved, so drift over time hits all configs alike; the config order
# rotates by one each repetition so none always runs first).  Ratios are
# taken against the SAME repetition's bare and floor runs.
#
# Workloads: empty_kernel (µs per launch), mnist, resnet50, transformer,
#            transformer-large (24 layers, d_model 1024, seq 1024, batch 8: GPU-bound)
#            (ms per step, timed loop after warm-up).
# Configs:   bare; floor (LD_PRELOAD libcupti_floor.so: CUPTI kernel+memcpy+
#            memset activity only); gpuprof (gpuprof run, defaults);
#            gpuprof-api-all (--api=all); gpuprof-api-none, -activity,
#            -nodriver, -window (GPU_WINDOW, default 1/10), -stacks (--stacks),
#            -stacks-all (GPUPROF_STACKS=all), -pm (--pm-sampling=PM_INTERVAL,
#            default 10ms), -metrics (--gpu-metrics), -apionly
#            (GPUPROF_ACTIVITY=none: API calls + NVTX, no GPU activity: what
#            the windowed mode costs outside its windows), -armed
#            (--flight-recorder=FLIGHT_DURATION, default 30s: armed, nothing
#            triggered), -armed-nvtx (the same with --flight-api=capture: API
#            calls only in captures, the history NVTX only), -sample (--sample-steps SAMPLE_STEPS, default 1/50),
#            -armed-always (armed with --flight-api=always: the API calls
#            stay in the history whatever their rate), -armed-rt (armed with GPUPROF_API_DRIVER=0: runtime API calls
#            only in the history), floor-api (empty callbacks on the
#            default API set, no activity kind: armed's CUPTI floor),
#            -act:K1+K2...
#            (GPUPROF_ACTIVITY=K1,K2...: which activity kinds cost what); torchprof
#            (--profile torch, python workloads); nsys (profile -t cuda,nvtx,
#            if the binary exists).
#
# In-process A/B (TOGGLE_PAIRS=N > 0): separate processes of the same job
# differ by up to ±15 % ("luck" per process) while one process is stable
# within itself, so each job alternates 2N blocks with the tracer capturing
# and not, in ABBA order, switched by cudaProfilerStart/Stop
# (examples/empty_kernel.cu argv[3], examples/steploop.py --toggle-pairs;
# blocks of EMPTY_LAUNCHES/2N launches or TOGGLE_STEPS steps).  floor gets
# CUPTI_FLOOR_CAPTURE=1, every gpuprof* config --capture-range=cudaProfilerApi
# (the tracer records only between start and stop); torchprof, nsys,
# gpuprof-window (a window cannot be combined with a capture range) and
# gpuprof-activity (under a capture range the shim records API calls through
# callbacks: it would measure gpuprof again) are skipped.  The RESULT's ab_* fields land in results.csv and summary.md gets
# an "in-process A/B" table per workload.
#
# Knobs (defaults sized for ≲ 8 min on one H200):
#   REPS (5: empty_kernel)  MNIST_REPS (3)  HEAVY_REPS (2: resnet50, transformer)
#   EMPTY_LAUNCHES (100000)  MNIST_STEPS (300)  HEAVY_STEPS (30)
#   WORKLOADS ("empty_kernel mnist resnet50 transformer")
#   CONFIGS ("bare floor gpuprof gpuprof-api-all torchprof nsys")
#   BUDGET_S (450): no new run starts after this many seconds (the rest are
#   reported as not run); JOB_TIMEOUT (300 s per job; NSYS_TIMEOUT 120 for
#   nsys, whose report step can be slow); NSYS (path); PYTHON (python3)
#   KEEP_TRACES=1 keeps trace files (default: sizes recorded, files deleted)
#   TOGGLE_PAIRS (0: plain runs)  TOGGLE_STEPS (50: steps per A/B block)
#   PIN_CPUS (e.g. "4-11"): every run under `taskset -c PIN_CPUS` (same cores
#   for every config: less run-to-run spread from scheduling/frequency)
# Output: $RESULTS_DIR/bench (else $OUT/bench, else build/gpu/out/bench):
#   results.csv (one row per run), summary.md (tables), per-run logs.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
B=${B:-build}
PY=${PYTHON:-python3}
GPUPROF=${GPUPROF:-$ROOT/$B/bin/gpuprof}
FLOOR=${CUPTI_FLOOR_SO:-$ROOT/$B/lib/libcupti_floor.so}
REPS=${REPS:-5}; MNIST_REPS=${MNIST_REPS:-3}; HEAVY_REPS=${HEAVY_REPS:-2}
EMPTY_LAUNCHES=${EMPTY_LAUNCHES:-100000}; MNIST_STEPS=${MNIST_STEPS:-300}; HEAVY_STEPS=${HEAVY_STEPS:-30}
WORKLOADS=${WORKLOADS:-empty_kernel mnist resnet50 transformer}
CONFIGS=${CONFIGS:-bare floor gpuprof gpuprof-api-all torchprof nsys}
BUDGET_S=${BUDGET_S:-450}; T=${JOB_TIMEOUT:-300}; NSYS_TIMEOUT=${NSYS_TIMEOUT:-120}
CUDA_ARCH=${CUDA_ARCH:-sm_90}
TOGGLE_PAIRS=${TOGGLE_PAIRS:-0}; TOGGLE_STEPS=${TOGGLE_STEPS:-50}
case $TOGGLE_PAIRS$TOGGLE_STEPS in *[!0-9]*)
  echo "error: TOGGLE_PAIRS and TOGGLE_STEPS must be whole numbers"; exit 2 ;;
esac
[ -d /usr/local/cuda-13.0 ] && export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
OUTDIR=${RESULTS_DIR:-${OUT:-$ROOT/$B/gpu/out}}/bench
rm -rf "$OUTDIR"; mkdir -p "$OUTDIR"
CSV=$OUTDIR/results.csv
SECONDS=0

if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "skip: no GPU (nvidia-smi -L found none)"; exit 77
fi
if [ ! -x "$GPUPROF" ]; then
  echo "error: $GPUPROF is missing: build it first (make), or set GPUPROF="; exit 1
fi

# libcupti_floor.so: carried from the build machine, else built here.
if [ ! -f "$FLOOR" ]; then
  mkdir -p "$(dirname "$FLOOR")"
  ${CC:-cc} -std=gnu11 -O2 -fPIC -shared -D_GNU_SOURCE -I"${CUDA_HOME:-/usr/local/cuda}/include" \
    -Ilibprof -Ishim -o "$FLOOR" bench/overhead/cupti_floor.c shim/nvidia/gps_cbid.c -ldl -lpthread \
    || { echo "warning: cannot build libcupti_floor.so: floor config skipped"; FLOOR=; }
fi
# The CUPTI the floor loads: the toolkit's for the CUDA C probe; for python
# jobs the copy torch itself loads (venv nvidia/*/lib), so one CUPTI per process.
CUPTI_SYS=$(ls "${CUDA_HOME:-/usr/local/cuda}"/targets/x86_64-linux/lib/libcupti.so.1[0-9] 2>/dev/null | head -1)
CUPTI_PY=$("$PY" -c 'import glob,site
c=[]
for d in site.getsitepackages():
    c+=glob.glob(d+"/nvidia/*/lib/libcupti.so.1[0-9]")
print(sorted(c)[0] if c else "")' 2>/dev/null)
echo "bench: floor=$FLOOR cupti(sys)=$CUPTI_SYS cupti(python)=${CUPTI_PY:-none}"

NSYS=${NSYS:-}
for n in /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys "$(command -v nsys 2>/dev/null)"; do
  [ -z "$NSYS" ] && [ -n "$n" ] && [ -x "$n" ] && NSYS=$n
done
[ -z "$NSYS" ] && echo "bench: nsys not found: nsys config skipped"

# Toggle mode: what the workloads and the tracers get.
gprun=("$GPUPROF" run)
ek_toggle=; py_toggle=
if [ "$TOGGLE_PAIRS" -gt 0 ]; then
  ek_toggle=" $TOGGLE_PAIRS"
  py_toggle=" --toggle-pairs $TOGGLE_PAIRS --toggle-steps $TOGGLE_STEPS"
  if "$GPUPROF" run --help 2>&1 | grep -q -- --capture-range; then
    gprun=("$GPUPROF" run --capture-range=cudaProfilerApi)
  else # a gpuprof without the option: the shim reads the same setting from the environment
    gprun=(env GPUPROF_CAPTURE_RANGE=cudaProfilerApi "$GPUPROF" run)
  fi
  echo "bench: in-process A/B: TOGGLE_PAIRS=$TOGGLE_PAIRS TOGGLE_STEPS=$TOGGLE_STEPS; gpuprof configs: ${gprun[*]}"
  for c in $CONFIGS; do
    case $c in torchprof|nsys|gpuprof-window|gpuprof-activity|gpuprof-armed|gpuprof-armed-nvtx|gpuprof-armed-rt|gpuprof-armed-always|gpuprof-sample)
      echo "bench: $c skipped in toggle mode (torchprof/nsys do not capture by cudaProfilerStart/Stop here; a GPU window, the flight recorder and step sampling cannot be combined with a capture range; per-API activity records are not used under a capture range)" ;;
    esac
  done
fi

# The CUDA C probe.
if [[ " $WORKLOADS " == *" empty_kernel "* ]] && { [ ! -x "$B/gpu/empty_kernel" ] || [ examples/empty_kernel.cu -nt "$B/gpu/empty_kernel" ]; }; then
  mkdir -p "$B/gpu"
  NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
  "$NVCC" -O2 -arch="$CUDA_ARCH" -o "$B/gpu/empty_kernel" examples/empty_kernel.cu \
    || { echo "error: cannot build empty_kernel"; WORKLOADS=${WORKLOADS//empty_kernel/}; }
fi

workload_cmd() { # prints the command line of a workload
  case $1 in
  empty_kernel) echo "$ROOT/$B/gpu/empty_kernel $EMPTY_LAUNCHES 2000$ek_toggle" ;;
  mnist)        echo "$PY $ROOT/examples/train_mnist.py --steps $MNIST_STEPS --warmup 10 --workers 2$py_toggle" ;;
  resnet50)     echo "$PY $ROOT/examples/resnet_step.py --steps $HEAVY_STEPS --warmup 5$py_toggle" ;;
  transformer)  echo "$PY $ROOT/examples/transformer_step.py --steps $HEAVY_STEPS --warmup 5$py_toggle" ;;
  # the default transformer is launch-bound on an H200 (19 ms/step); this one is a heavy job
  transformer-large) echo "$PY $ROOT/examples/transformer_step.py --layers 24 --d-model 1024 --heads 16 --seq 1024 --batch-size 8 --steps $HEAVY_STEPS --warmup 3$py_toggle" ;;
  *) return 1 ;;
  esac
}
workload_reps() {
  case $1 in empty_kernel) echo "$REPS" ;; mnist) echo "$MNIST_REPS" ;; *) echo "$HEAVY_REPS" ;; esac
}

maxreps=0
for w in $WORKLOADS; do r=$(workload_reps "$w"); [ "$r" -gt $maxreps ] && maxreps=$r; done
read -r -a cfgs <<<"$CONFIGS"
pin=(); [ -n "${PIN_CPUS:-}" ] && command -v taskset >/dev/null && pin=(taskset -c "$PIN_CPUS")
skipped=0
for rep in $(seq 1 $maxreps); do
  for w in $WORKLOADS; do
    [ "$rep" -le "$(workload_reps "$w")" ] || continue
    cmd=$(workload_cmd "$w") || { echo "unknown workload $w"; continue; }
    n=${#cfgs[@]}
    for k in $(seq 0 $((n - 1))); do
      c=${cfgs[$(( (k + rep - 1) % n ))]}
      dir=$OUTDIR/runs/$w/$c/rep$rep
      mkdir -p "$dir"
      extra=(); tol=(); to=$T
      if [ "$TOGGLE_PAIRS" -gt 0 ]; then
        case $c in torchprof|nsys|gpuprof-window|gpuprof-activity|gpuprof-armed|gpuprof-armed-nvtx|gpuprof-armed-rt|gpuprof-armed-always|gpuprof-sample) continue ;; esac
      fi
      capenv=(); [ "$TOGGLE_PAIRS" -gt 0 ] && capenv=(CUPTI_FLOOR_CAPTURE=1)
      case $c in
      bare) pre=() ;;
      floor|floor-cb|floor-cb-rt|floor-api)  # -cb: plus EMPTY callbacks on gpuprof's default API set; -api: those alone
        [ -n "$FLOOR" ] || continue
        lib=$CUPTI_SYS; [ "$w" != empty_kernel ] && [ -n "$CUPTI_PY" ] && lib=$CUPTI_PY
        api=(); case $c in floor-cb) api=(CUPTI_FLOOR_API=default) ;; floor-cb-rt) api=(CUPTI_FLOOR_API=runtime) ;;
          floor-api) api=(CUPTI_FLOOR_API=default CUPTI_FLOOR_KINDS=none) ;; esac
        pre=(env LD_PRELOAD="$FLOOR" CUPTI_FLOOR_LIB="$lib" "${api[@]}" "${capenv[@]}") ;;
      gpuprof)         pre=("${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-api-all) pre=("${gprun[@]}" --api=all -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-api-none) pre=(env GPUPROF_API=none "${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-activity) pre=(env GPUPROF_API_MODE=activity "${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-nodriver) pre=(env GPUPROF_API_DRIVER=0 "${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-mono) pre=(env GPUPROF_CLOCK=monotonic "${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-window) pre=("${gprun[@]}" --gpu-window "${GPU_WINDOW:-1/10}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-stacks) pre=("${gprun[@]}" --stacks -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-stacks-all) pre=(env GPUPROF_STACKS=all "${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-layers) pre=("${gprun[@]}" --layers -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-stacks-layers) pre=("${gprun[@]}" --stacks --layers -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-pm) pre=("${gprun[@]}" --pm-sampling="${PM_INTERVAL:-10ms}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-metrics) pre=("${gprun[@]}" --gpu-metrics -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-apionly) pre=(env GPUPROF_ACTIVITY=none "${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-armed) pre=("${gprun[@]}" --flight-recorder="${FLIGHT_DURATION:-30s}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-armed-always) pre=("${gprun[@]}" --flight-recorder="${FLIGHT_DURATION:-30s}" --flight-api=always -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-armed-rt) pre=(env GPUPROF_API_DRIVER=0 "${gprun[@]}" --flight-recorder="${FLIGHT_DURATION:-30s}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-armed-nvtx) pre=("${gprun[@]}" --flight-recorder="${FLIGHT_DURATION:-30s}" --flight-api=capture -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-sample) pre=("${gprun[@]}" --sample-steps "${SAMPLE_STEPS:-1/50}" -o "$dir/trace-%p.gpuprof" --) ;;
      gpuprof-act:*)  # gpuprof-act:kernel+memcpy+memset: GPUPROF_ACTIVITY=kernel,memcpy,memset
        kinds=${c#gpuprof-act:}
        pre=(env GPUPROF_ACTIVITY="${kinds//+/,}" "${gprun[@]}" -o "$dir/trace-%p.gpuprof" --) ;;
      torchprof)
        [ "$w" = empty_kernel ] && continue
        pre=(); extra=(--profile torch --profile-out "$dir/torch.json") ;;
      nsys)
        [ -n "$NSYS" ] || continue
        # nsys may be unable to write its report on this machine: the job's
        # own RESULT line is what we measure, so its exit status is tolerated.
        pre=("$NSYS" profile -t cuda,nvtx -o "$dir/nsys" --force-overwrite true); tol=(--tolerate-rc)
        to=$NSYS_TIMEOUT ;;
      *) echo "unknown config $c"; continue ;;
      esac
      if [ $SECONDS -ge "$BUDGET_S" ]; then
        skipped=$((skipped + 1)); continue
      fi
      count=(); [ "$rep" = 1 ] && count=(--count-events)
      keep=(); [ "${KEEP_TRACES:-0}" = 1 ] && keep=(--keep-traces)
      # shellcheck disable=SC2086
      "$PY" bench/overhead/runone.py --csv "$CSV" --dir "$dir" --rep "$rep" --workload "$w" \
        --config "$c" --timeout "$to" --gpuprof "$GPUPROF" "${tol[@]}" "${count[@]}" "${keep[@]}" \
        -- "${pin[@]}" "${pre[@]}" $cmd "${extra[@]}"
    done
  done
done
[ $skipped -gt 0 ] && echo "bench: time budget (${BUDGET_S}s) reached: $skipped run(s) not run"
echo "bench: ${SECONDS}s"
if [ -f "$CSV" ]; then
  "$PY" bench/overhead/summarize.py "$CSV" -o "$OUTDIR/summary.md"
  [ $skipped -gt 0 ] && echo "(time budget reached: $skipped run(s) not run)" >>"$OUTDIR/summary.md"
else
  echo "bench: no results"; exit 1
fi
