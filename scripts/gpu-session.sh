#!/usr/bin/env bash
# One device call: everything we run on the GPU machine, results under $OUT.
# Usage (on the GPU machine, repo root): scripts/gpu-session.sh [phase...]
#   phases: env smoke outputs-ab install suite hints hints-thirdparty hints-steps hints-drop hints-cost coexist memory polish bench crosscheck steps status stacks shape-stacks sites layers-bwd layers-cost util nvml-map ddp scale rss report report-slices medians advise slices views diff-view flight-bench flight widths csv stacktable ...  (default: env smoke suite)
# The build is made on the dev machine (glibc 2.36) by scripts/carry-build.sh and carried as .carry/build;
# we copy it to build/ so every script finds build/bin/gpuprof and build/lib/.
set -u
OUT=${OUT:-/tmp/gpuprof-out}; mkdir -p "$OUT"
RES=/tmp/gpuprof-results; rm -rf "$RES"; mkdir -p "$RES"
export RESULTS_DIR=$RES PYTHONUNBUFFERED=1
if [ -d .carry/build ]; then rm -rf build; cp -a .carry/build build; fi
# Libraries the dev build links that the GPU image may lack (libsqlite3): carried as a fallback.
if ldd build/bin/gpuprof 2>/dev/null | grep -q "not found" && [ -d .carry/fallback-lib ]; then
  export LD_LIBRARY_PATH=$PWD/.carry/fallback-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
export PATH=$CUDA_HOME/bin:$PATH
phases=${*:-env smoke suite}
log() { echo "=== $* [$(date +%T)]"; }
# timed FILE CMD...: CMD's stdout into FILE, and one line: CMD, its wall, user and peak RSS, exit code
timed() { python3 - "$@" <<'PY'
import os, resource, subprocess, sys, time
t = time.time(); rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1], "wb"), timeout=280)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{' '.join(os.path.basename(a) for a in sys.argv[2:])}: {time.time() - t:.2f} s wall, {ru.ru_utime:.1f} s user, "
      f"{ru.ru_maxrss / 1024:.0f} MiB peak RSS, rc {rc}", flush=True)
PY
}
# SESSION_BUDGET_S: a phase that would start later than this many seconds
# after the call began is skipped (a device call is cut at 600 s and then
# brings back only what is already under $OUT: each phase's log is copied
# there as soon as it ends)
SESSION_T0=$(date +%s)
for ph in $phases; do
  if [ -n "${SESSION_BUDGET_S:-}" ] && [ $(( $(date +%s) - SESSION_T0 )) -ge "$SESSION_BUDGET_S" ]; then
    echo "=== $ph skipped: past SESSION_BUDGET_S=$SESSION_BUDGET_S" | tee -a "$RES/skipped.txt"; continue
  fi
  case $ph in
  env)
    log env
    { nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm --format=csv; python3 -V;
      python3 -c 'import torch;print("torch",torch.__version__,torch.cuda.is_available())';
      ls /usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti*; ldd build/lib/libgpuprof.so build/bin/gpuprof;
      ls -la build/bin build/lib; command -v /usr/bin/time || echo "no /usr/bin/time"; } 2>&1 | tee "$RES/env.txt"
    ;;
  smoke)
    log smoke
    ( set -x
      timeout 120 build/bin/gpuprof run -o "$RES/smoke-mnist.gpuprof" -- python3 examples/train_mnist.py --steps 50 --warmup 5
      build/bin/gpuprof info "$RES/smoke-mnist.gpuprof"
      build/bin/gpuprof dump --type counter "$RES/smoke-mnist.gpuprof"
      build/bin/gpuprof stats --report kernels,util "$RES/smoke-mnist.gpuprof" | cut -c1-180 | head -40
    ) 2>&1 | tee "$RES/smoke.txt"
    ;;
  outputs-ab)  # issue #41 (branch linesa, fewer lines in cmd/ cli/ export/ common/): run's summary line and every
    # reading command's output on a real MNIST trace (stacks, NVML); with OLD_GPUPROF=path (e.g. main's build carried
    # beside this one) each output is compared byte for byte with that build's
    log outputs-ab
    ( set -x
      timeout 120 build/bin/gpuprof run --stacks --gpu-metrics -o "$RES/ab-mnist.gpuprof" -- python3 examples/train_mnist.py --steps 50 --warmup 5
      t=$RES/ab-mnist.gpuprof
      for g in build/bin/gpuprof ${OLD_GPUPROF:-}; do
        d=$RES/ab-$(echo "$g" | tr / _); mkdir -p "$d"
        for c in "info" "info --json" "dump --json" "stats" "stats --format json --per-step" "steps" "memory" "advise" \
                 "advise --format json --all" "export --format perfetto -o -" "export --format perfetto --summary -o -" \
                 "export --format folded -o -" "export --format csv --table CUPTI_ACTIVITY_KIND_KERNEL -o -"; do
          $g $c "$t" > "$d/$(echo "$c" | tr ' /' '__').out" 2>&1
        done
        $g export --format sqlite "$t" -o "$d/x.db" && sqlite3 "$d/x.db" .dump > "$d/sqlite.sql" 2>/dev/null; rm -f "$d/x.db"
        $g export --format parquet "$t" -o "$d/pq" && (cd "$d/pq" && md5sum *) > "$d/parquet.md5"; rm -rf "$d/pq"
      done
      [ -n "${OLD_GPUPROF:-}" ] && diff -r "$RES/ab-build_bin_gpuprof" "$RES/ab-$(echo "$OLD_GPUPROF" | tr / _)" && echo "OUTPUTS-AB PASS: identical"
    ) 2>&1 | tee "$RES/outputs-ab.txt"
    rm -f "$RES"/ab-mnist.gpuprof ;;
  install)  # issue #40: make install into a prefix; the installed gpuprof traces MNIST with its installed shim
    # (and --layers' module), then make demo's headline on a real run
    log install
    ( set -x
      rm -rf /tmp/gp-inst; make -s -o all install PREFIX=/tmp/gp-inst
      env -u GPUPROF_LIB timeout 120 /tmp/gp-inst/bin/gpuprof run -o "$RES/inst-mnist.gpuprof" -- python3 examples/train_mnist.py --steps 30 --warmup 5
      /tmp/gp-inst/bin/gpuprof steps "$RES/inst-mnist.gpuprof" | head -12
      env -u GPUPROF_LIB timeout 120 /tmp/gp-inst/bin/gpuprof run --stacks --layers -o "$RES/inst-layers.gpuprof" -- python3 examples/train_mnist.py --steps 10 --warmup 2
      /tmp/gp-inst/bin/gpuprof stats --report layers "$RES/inst-layers.gpuprof" | head -20
      MANPATH=/tmp/gp-inst/share/man man gpuprof-run | head -20
      timeout 200 make -s -o all demo
    ) 2>&1 | tee "$RES/install.txt"
    ;;
  suite)      log suite;      timeout 400 bash tests/gpu/run.sh 2>&1 | tee "$RES/suite.txt" ;;
  bench-launch)  # per-launch cost of each capture mechanism (empty kernel)
    log bench-launch
    RESULTS_DIR=$RES/launch WORKLOADS=empty_kernel REPS=${REPS:-5} BUDGET_S=${LAUNCH_BUDGET_S:-150} \
      CONFIGS="${LAUNCH_CONFIGS:-bare floor gpuprof gpuprof-nodriver gpuprof-activity gpuprof-api-none gpuprof-api-all nsys}" \
      timeout $(( ${LAUNCH_BUDGET_S:-150} + 50 )) bash bench/overhead/run.sh 2>&1 | tee "$RES/bench-launch.txt" ;;
  bench-mnist)   # the paper's light job against every tracer
    log bench-mnist
    RESULTS_DIR=$RES/mnist WORKLOADS=mnist MNIST_REPS=${MNIST_REPS:-4} BUDGET_S=${MNIST_BUDGET_S:-300} \
      CONFIGS="${MNIST_CONFIGS:-bare floor gpuprof gpuprof-activity torchprof nsys}" \
      timeout $(( ${MNIST_BUDGET_S:-300} + 60 )) bash bench/overhead/run.sh 2>&1 | tee "$RES/bench-mnist.txt" ;;
  bench-ab)      # issue #6 in-process A/B: capture on/off blocks inside one process (TOGGLE_PAIRS)
    log bench-ab
    RESULTS_DIR=$RES/ab TOGGLE_PAIRS=${TOGGLE_PAIRS:-10} TOGGLE_STEPS=${TOGGLE_STEPS:-50} \
      EMPTY_LAUNCHES=${EMPTY_LAUNCHES:-200000} WORKLOADS="${AB_WORKLOADS:-empty_kernel mnist}" \
      CONFIGS="${AB_CONFIGS:-bare floor gpuprof gpuprof-apionly}" REPS=${REPS:-5} MNIST_REPS=${MNIST_REPS:-4} \
      BUDGET_S=${AB_BUDGET_S:-240} timeout $(( ${AB_BUDGET_S:-240} + 60 )) bash bench/overhead/run.sh 2>&1 | tee "$RES/bench-ab.txt"
    cat "$RES/ab/bench/summary.md" 2>/dev/null | tee -a "$RES/bench-ab.txt" ;;
  bench-ab-heavy)  # heavy jobs, in-process A/B (bar: gpuprof <= 1.003x)
    log bench-ab-heavy
    RESULTS_DIR=$RES/abheavy TOGGLE_PAIRS=${HEAVY_TOGGLE_PAIRS:-4} TOGGLE_STEPS=${HEAVY_TOGGLE_STEPS:-5} \
      WORKLOADS="${HEAVY_WORKLOADS:-resnet50 transformer}" CONFIGS="bare floor gpuprof" HEAVY_REPS=${HEAVY_REPS:-2} \
      BUDGET_S=${HEAVY_BUDGET_S:-220} timeout $(( ${HEAVY_BUDGET_S:-220} + 60 )) bash bench/overhead/run.sh 2>&1 | tee "$RES/bench-ab-heavy.txt"
    cat "$RES/abheavy/bench/summary.md" 2>/dev/null | tee -a "$RES/bench-ab-heavy.txt" ;;
  bench-heavy)   # heavy jobs: the bar is gpuprof <= 1.003x bare
    log bench-heavy
    RESULTS_DIR=$RES/heavy WORKLOADS="resnet50 transformer" HEAVY_REPS=${HEAVY_REPS:-2} BUDGET_S=280 \
      CONFIGS="bare floor gpuprof" timeout 330 bash bench/overhead/run.sh 2>&1 | tee "$RES/bench-heavy.txt" ;;
  stacks)        # issue #8: launch sites of MNIST with file:line; what stacks cost
    # build/lib/libunwind.so.8 is carried (scripts/carry-libunwind.sh .carry/build/lib);
    # without it the shim says so and uses glibc's backtrace()
    log stacks
    ( ls -la build/lib/libunwind.so.8 2>&1; ldd build/lib/libunwind.so.8 2>&1 | grep -i "lzma\|not found"
      set -x
      for cfg in bare sampled all; do
        case $cfg in
        bare) timeout 150 python3 examples/train_mnist.py --steps 200 --warmup 10 ;;
        sampled) timeout 150 build/bin/gpuprof run -o "$RES/stacks-sampled.gpuprof" --stacks -- \
                   python3 examples/train_mnist.py --steps 200 --warmup 10 ;;
        all) GPUPROF_STACKS=all timeout 150 build/bin/gpuprof run -o "$RES/stacks-all.gpuprof" -- \
               python3 examples/train_mnist.py --steps 200 --warmup 10 ;;
        esac 2>&1 | grep -E "RESULT|gpuprof" | sed "s/^/$cfg: /"
      done
      for t in sampled all; do
        f=$RES/stacks-$t.gpuprof
        build/bin/gpuprof info "$f" | grep -E "^(file|dropped|integrity)|^  (api|stack|module) "
        build/bin/gpuprof dump --type counter "$f" | grep -E "stacks_(captured|distinct)"
        build/bin/gpuprof stats --report launch_sites "$f" | cut -c1-220 | head -50
        build/bin/gpuprof export --format folded "$f" -o "$RES/stacks-$t.folded"
        sort -t' ' -k2 -nr "$RES/stacks-$t.folded" 2>/dev/null | head -15 | cut -c1-400
      done
    ) 2>&1 | tee "$RES/stacks.txt" ;;
  shape-stacks)  # branch shape: with --stacks every launch call (libprof's gp_launch, by cbid) has its stack,
                 # CUDA 13's __cudaLaunchKernel included (the shim's own name list had left it out)
    log shape-stacks
    ( set -x
      GPUPROF_STACKS=all timeout 150 build/bin/gpuprof run -o "$RES/shape-stacks.gpuprof" -- \
        python3 examples/train_mnist.py --steps 50 --warmup 5 2>&1 | grep -E "RESULT|gpuprof"
      build/bin/gpuprof dump --json --type api "$RES/shape-stacks.gpuprof" | python3 -c '
import json, sys, collections
n, st = collections.Counter(), collections.Counter()
for l in sys.stdin:
    r = json.loads(l); n[r["name"]] += 1; st[r["name"]] += 1 if r.get("stack") else 0
for k, v in n.most_common(25): print("%-34s %8d calls %8d with a stack" % (k, v, st[k]))'
      build/bin/gpuprof stats --report launch_sites "$RES/shape-stacks.gpuprof" | cut -c1-200 | head -25
    ) 2>&1 | tee "$RES/shape-stacks.txt" ;;
  window-exit)   # windowed mode at exit: edges racing CUDA's teardown once crashed jobs (exit 139)
    log window-exit
    for i in 1 2 3 4 5 6; do
      timeout 120 build/bin/gpuprof run -q --gpu-window 50ms/200ms -o "$RES/win-$i.gpuprof" -- \
        python3 examples/train_mnist.py --steps 400 --warmup 10 >/dev/null 2>"$RES/win-$i.err"
      echo "WINDOW-EXIT run=$i rc=$? $(build/bin/gpuprof info "$RES/win-$i.gpuprof" 2>&1 | grep -E '^integrity' | head -1)"
      grep -v "^TIMING" "$RES/win-$i.err" | head -3
    done 2>&1 | tee "$RES/window-exit.txt"
    build/bin/gpuprof stats --report windows,util "$RES/win-1.gpuprof" 2>&1 | cut -c1-200 | head -30 | tee -a "$RES/window-exit.txt"
    rm -f "$RES"/win-*.gpuprof ;;
  memcurve)      # tracer memory over time: VmRSS of one long MNIST run every 2 s, bare and traced
    log memcurve
    for cfg in ${MEMCURVE_CFGS:-bare gpuprof}; do
      pre=(); [ $cfg = gpuprof ] && pre=(build/bin/gpuprof run -q -o "$RES/memcurve.gpuprof" --)
      "${pre[@]}" python3 examples/train_mnist.py --steps ${MEMCURVE_STEPS:-6000} --warmup 10 >"$RES/memcurve-$cfg.out" 2>/dev/null &
      job=$!; samples=""
      for k in $(seq 1 40); do
        sleep 2
        pid=$(pgrep -f "^python3 examples/train_mnist.py --steps ${MEMCURVE_STEPS:-6000}" | head -1)
        [ -n "$pid" ] || break
        rss=$(awk '/^VmRSS/{print int($2/1024)}' /proc/$pid/status 2>/dev/null)
        samples="$samples ${rss:-?}"
      done
      wait $job; echo "MEMCURVE cfg=$cfg rc=$? rss_mib_every_2s:$samples $(grep RESULT "$RES/memcurve-$cfg.out")"
    done 2>&1 | tee "$RES/memcurve.txt"
    build/bin/gpuprof info "$RES/memcurve.gpuprof" 2>&1 | grep -E "^(dropped|integrity)" | tee -a "$RES/memcurve.txt"
    rm -f "$RES/memcurve.gpuprof" ;;
  pm-debug)      # PM sampling under MNIST: which setting crashes, and where (faulthandler; gdb if present)
    log pm-debug
    ( for w in 0 2; do for opt in "--pm-sampling=10ms" "--pm-sampling=10ms --gpu-metrics=20"; do
        # shellcheck disable=SC2086
        timeout 120 build/bin/gpuprof run $opt -o "$RES/pmdbg.gpuprof" -- python3 -X faulthandler \
          examples/train_mnist.py --steps 200 --warmup 10 --workers $w >"$RES/pmdbg.out" 2>"$RES/pmdbg.err"
        echo "PMDBG workers=$w opt='$opt' rc=$? $(grep RESULT "$RES/pmdbg.out")"
        grep -v "^TIMING" "$RES/pmdbg.err" | grep -iv "^ *File\|^Current thread" | tail -4
        grep -A6 "Fatal Python error" "$RES/pmdbg.err" | head -12
        rm -f "$RES"/pmdbg.gpuprof*
      done; done
      if command -v gdb >/dev/null; then
        timeout 150 gdb -q -batch -ex "set environment LD_PRELOAD=$PWD/build/lib/libgpuprof.so" \
          -ex "set environment GPUPROF_PM_SAMPLING=10ms" -ex "set environment GPUPROF_OUTPUT=$RES/pmgdb-%p.gpuprof" \
          -ex run -ex bt -ex "info threads" -ex "thread apply all bt 12" \
          --args python3 examples/train_mnist.py --steps 200 --warmup 10 --workers 2 2>&1 | grep -v "^\[New Thread\|^\[Thread" | tail -80
      else echo "PMDBG no gdb here"; fi
    ) 2>&1 | tee "$RES/pm-debug.txt" ;;
  pm-cupti)      # which libcupti / libnvperf a torch process holds, and PM sampling with the toolkit's CUPTI forced
    log pm-cupti
    ( V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib
      ls -la $V 2>&1 | grep -i "cupti\|nvperf"; ls -la $CUDA_HOME/targets/x86_64-linux/lib | grep -i "cupti\|nvperf"
      timeout 60 python3 -c 'import torch; torch.zeros(1, device="cuda"); import re; print("".join(sorted(set(l.split()[-1]+"\n" for l in open("/proc/self/maps") if re.search("cupti|nvperf", l)))))'
      for lib in "$CUDA_HOME/targets/x86_64-linux/lib/libcupti.so.13" "$V/libcupti.so.13"; do
        GPUPROF_CUPTI=$lib timeout 90 build/bin/gpuprof run --pm-sampling=10ms -o "$RES/pmc.gpuprof" -- \
          python3 examples/train_mnist.py --steps 100 --warmup 5 --workers 0 >"$RES/pmc.out" 2>"$RES/pmc.err"
        echo "PMCUPTI lib=$lib rc=$? $(grep RESULT "$RES/pmc.out")"; grep -v "^TIMING" "$RES/pmc.err" | tail -3
        build/bin/gpuprof dump --type counter "$RES/pmc.gpuprof" 2>&1 | grep -m 8 "pm\.\(setup\|formula\|sm_active\)"
        rm -f "$RES"/pmc.gpuprof*
      done ) 2>&1 | tee "$RES/pm-cupti.txt" ;;
  memflat)       # tracer memory over a run 10x longer (max RSS, gpuprof vs bare)
    log memflat
    for steps in 300 3000; do for cfg in bare gpuprof; do
      pre=(); [ $cfg = gpuprof ] && pre=(build/bin/gpuprof run -q -o "$RES/memflat-%p.gpuprof" --)
      /usr/bin/time -f "MEMFLAT cfg=$cfg steps=$steps maxrss_kib=%M" timeout 120 "${pre[@]}" \
        python3 examples/train_mnist.py --steps $steps --warmup 10 2>&1 | grep -E "MEMFLAT|RESULT"
    done; done 2>&1 | tee "$RES/memflat.txt"
    for f in "$RES"/memflat-*.gpuprof; do build/bin/gpuprof info "$f" 2>&1 | grep -E "^(file|dropped|integrity)|^  (api|kernel|counter) " ; done | tee -a "$RES/memflat.txt"
    rm -f "$RES"/memflat-*.gpuprof ;;
  status)       # live status file (issue #9): `gpuprof top` while MNIST runs and after it ended
    log status
    for src in cupti nvml; do
      # cupti: memory from MEMORY2 records, an opt-in kind (GPUPROF_ACTIVITY=default,memory)
      extra=(); kinds=default,memory; [ $src = nvml ] && { extra=(--gpu-metrics=10); kinds=default; }
      st=$RES/status-$src.json; rm -f "$st" "$RES"/status-$src.t*.json
      GPUPROF_ACTIVITY=$kinds timeout 200 build/bin/gpuprof run "${extra[@]}" --status "$st" -o "$RES/status-$src.gpuprof" -- \
        python3 examples/train_mnist.py --steps ${STATUS_STEPS:-8000} --warmup 5 >"$RES/status-$src.job.txt" 2>&1 &
      job=$!
      for t in 5 10 15 20 25 30; do
        sleep 5; kill -0 $job 2>/dev/null || break
        echo "--- top at ${t}s ($src)"; build/bin/gpuprof top --once "$st"; echo "top exit $?"
        cp "$st" "$RES/status-$src.t$t.json" 2>/dev/null
      done
      wait $job; echo "job exit $? ($src)"; tail -3 "$RES/status-$src.job.txt"
      echo "--- top after exit ($src)"; build/bin/gpuprof top --once "$st"; echo "top exit $?"
      build/bin/gpuprof dump --json --type kernel "$RES/status-$src.gpuprof" | wc -l > "$RES/status-$src.nkern"
      python3 - "$src" "$st" "$RES/status-$src.nkern" "$RES"/status-$src.t*.json <<'PY'
import json, sys
src, final, nk, snaps = sys.argv[1], sys.argv[2], int(open(sys.argv[3]).read()), sys.argv[4:]
def check(what, ok):
    print("STATUS %s %s: %s" % ("PASS" if ok else "FAIL", src, what))
st = json.load(open(final))
check("final state exited (%s)" % st["state"], st["state"] == "exited")
check("kernels_total %d == trace kernels %d" % (st["kernels_total"], nk), st["kernels_total"] == nk)
run = [json.load(open(p)) for p in snaps]
run = [r for r in run if r["state"] == "running"]
check("%d running snapshots (want >= 2)" % len(run), len(run) >= 2)
for r in run:
    print("  running: kps=%s busy=%s mem=%s (%s) range=%r lag=%s" % (r["kernels_per_s"], r["gpu_busy_pct"],
          r["device_mem_used_bytes"], r["device_mem_source"], r["last_nvtx_range"], r["rate_lag_ms"]))
live = [r for r in run if r["kernels_per_s"] > 0]
check("a running snapshot with kernels/s > 0 and busy > 0", any(r["gpu_busy_pct"] > 0 for r in live))
# before the job's first allocation the figure is rightly 0: judge the snapshots with kernels
check("memory source %s and > 0 while kernels run" % src,
      bool(live) and all(r["device_mem_source"] == src and r["device_mem_used_bytes"] > 0 for r in live))
check("an NVTX range while running", any(r["last_nvtx_range"] for r in run))
PY
    done 2>&1 | tee "$RES/status.txt"
    rm -f "$RES"/status-*.gpuprof ;;
  nvml-map)     # issue #9: nvml.* counters carry CUDA's device id (UUID match), also under CUDA_VISIBLE_DEVICES
    log nvml-map
    for cvd in unset 0; do
      tr=$RES/nvml-map-$cvd.gpuprof
      ( [ $cvd = unset ] || export CUDA_VISIBLE_DEVICES=$cvd
        timeout 200 build/bin/gpuprof run --gpu-metrics=20 -o "$tr" -- \
          python3 examples/train_mnist.py --steps 300 --warmup 5 >"$RES/nvml-map-$cvd.job.txt" 2>&1
        echo "job exit $? (CUDA_VISIBLE_DEVICES=$cvd)"; grep '^gpuprof:' "$RES/nvml-map-$cvd.job.txt" )
      nvidia-smi -L; nvidia-smi --query-gpu=index,uuid,mig.mode.current --format=csv
      build/bin/gpuprof dump --json --type device,counter,process,clock "$tr" > "$RES/nvml-map-$cvd.json"
      python3 - "$cvd" "$RES/nvml-map-$cvd.json" <<'PY'
import json, sys
cvd, recs = sys.argv[1], [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
def check(what, ok): print("NVMLMAP %s %s: %s" % ("PASS" if ok else "FAIL", cvd, what))
devs = {r["device"] for r in recs if r["type"] == "device"}
ctr = [r for r in recs if r["type"] == "counter" and r["name"] == "nvml.gpu_util"]
ids = {r["device"] for r in ctr}
start = min(r["start"] for r in recs if r["type"] == "process")
end = max(r["trace_ns"] for r in recs if r["type"] == "clock")
print("  CUDA devices %s, nvml.gpu_util device ids %s, %d samples in %.2f s" % (sorted(devs), sorted(ids), len(ctr), (end - start) / 1e9))
check("every nvml id is a CUDA device id, or >= 1000 (no UUID match: MIG?)", ids and all(i in devs or i >= 1000 for i in ids))
check("ids are CUDA's (no id >= 1000)", ids and all(i in devs for i in ids))
first = min(r["ts"] for r in ctr) if ctr else end
print("  first sample %.3f s after the trace start" % ((first - start) / 1e9))
per_dev = len(ctr) / max(1, len(ids))
check("samples per device %.0f >= half of 20 Hz x duration (none lost waiting for the mapping)" % per_dev,
      per_dev >= 0.5 * 20 * (end - first) / 1e9)
PY
    done 2>&1 | tee "$RES/nvml-map.txt"
    rm -f "$RES"/nvml-map-*.gpuprof "$RES"/nvml-map-*.json ;;
  util)         # issue #9: the paper's utilisation microbenchmark + MNIST, NVML / busy / Est SM / PM side by side
    log util
    {
      mkdir -p build/gpu
      echo "--- build util_microbench"
      timeout 120 nvcc -O2 -arch=sm_90 -I"$CUDA_HOME/include" -o build/gpu/util_microbench examples/util_microbench.cu \
        && echo "built" || echo "UTIL FAIL: nvcc rc=$?"
      UB=build/gpu/util_microbench
      echo "--- microbenchmark under gpuprof run --gpu-metrics=20 --pm-sampling=10ms (2 s per shape)"
      timeout 90 build/bin/gpuprof run --gpu-metrics=20 --pm-sampling=10ms -o "$RES/util-micro.gpuprof" -- $UB 2 0.5 \
        >"$RES/util-micro.out" 2>"$RES/util-micro.err"; echo "exit $?"; cat "$RES/util-micro.out" "$RES/util-micro.err"
      echo "--- microbenchmark table"
      timeout 120 python3 scripts/util_table.py --json --gpuprof build/bin/gpuprof "$RES/util-micro.gpuprof" \
        >"$RES/util-micro.json" || echo "UTIL FAIL: table rc=$?"
      python3 - "$RES/util-micro.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def check(what, ok):
    print("UTIL %s: %s" % ("PASS" if ok else "FAIL", what))
f = lambda v: "-" if v is None else "%.2f" % v
print("| shape | N | s | kernels | NVML (%) | Busy (%) | Est SM (%) | PM SM act (%) | PM occ (%) | PM tensor (%) | PM DRAM (%) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %d | %.3f | %d | %s | %s | %s | %s | %s | %s | %s |" % (r["range"], r["ranges"], r["length_s"], r["kernels"],
          f(r["nvml_gpu_util_pct"]), f(r["busy_pct"]), f(r["est_sm_pct"]), f(r["pm_sm_active_pct"]),
          f(r["pm_sm_occupancy_pct"]), f(r["pm_tensor_active_pct"]), f(r["pm_dram_throughput_pct"])))
by = {r["range"]: r for r in rows}
shapes = ["1x1", "131072x1", "1024x1024", "131072x1024"]
check("a row per shape (%s)" % sorted(by), all(s in by for s in shapes))
check("NVML samples in every shape", all(by.get(s, {}).get("nvml_gpu_util_pct") is not None for s in shapes))
check("PM SM active samples in every shape (else see the gpuprof: lines above)",
      all(by.get(s, {}).get("pm_sm_active_pct") is not None for s in shapes))
a1, a4 = by.get("1x1", {}).get("pm_sm_active_pct"), by.get("131072x1024", {}).get("pm_sm_active_pct")
check("PM SM active 1x1 (%s) < 131072x1024 (%s)" % (f(a1), f(a4)), a1 is not None and a4 is not None and a1 < a4)
PY
      timeout 60 build/bin/gpuprof stats --report util,counters "$RES/util-micro.gpuprof" | cut -c1-200 | head -40
      echo "--- first PM samples (raw)"; timeout 60 build/bin/gpuprof dump --type counter "$RES/util-micro.gpuprof" | grep -m 20 'pm\.'
      for w in 2 0; do  # DataLoader workers: 2 (the default); 0 only when that run failed
        echo "--- MNIST (200 steps, $w DataLoader workers) under the same options"
        timeout 120 build/bin/gpuprof run --gpu-metrics=20 --pm-sampling=10ms -o "$RES/util-mnist.gpuprof" -- \
          python3 -X faulthandler examples/train_mnist.py --steps 200 --warmup 5 --workers $w \
          >"$RES/util-mnist.out" 2>"$RES/util-mnist.err"
        rc=$?; echo "exit $rc"; tail -3 "$RES/util-mnist.out"; grep -v '^\[' "$RES/util-mnist.err" | tail -12
        [ $rc -eq 0 ] && break
        echo "UTIL FAIL: MNIST with $w workers exit $rc"
      done
      timeout 60 python3 scripts/util_table.py --merge-numbered --gpuprof build/bin/gpuprof "$RES/util-mnist.gpuprof" \
        || echo "UTIL FAIL: mnist table rc=$?"
      timeout 60 build/bin/gpuprof stats --report util,counters "$RES/util-mnist.gpuprof" | cut -c1-200 | head -40
      echo "--- PM sampling overhead: us per launch, 1 s per shape, bare / gpuprof / gpuprof --pm-sampling=10ms"
      for rep in 1 2; do for cfg in bare gpuprof pm; do
        pre=(); [ $cfg = gpuprof ] && pre=(build/bin/gpuprof run -q -o "$RES/util-ovh.gpuprof" --)
        [ $cfg = pm ] && pre=(build/bin/gpuprof run -q --pm-sampling=10ms -o "$RES/util-ovh.gpuprof" --)
        timeout 60 "${pre[@]}" $UB 1 0.2 >"$RES/util-ovh.out" 2>&1
        rc=$?; sed -n "s/^CONFIG /OVH rep=$rep cfg=$cfg /p" "$RES/util-ovh.out"
        [ $rc -eq 0 ] || { echo "UTIL FAIL: overhead run $cfg rep $rep exit $rc"; tail -3 "$RES/util-ovh.out"; }
        rm -f "$RES/util-ovh.gpuprof"
      done; done | tee "$RES/util-ovh.txt"
      python3 - "$RES/util-ovh.txt" <<'PY'
import re, sys, statistics
v = {}
for l in open(sys.argv[1]):
    m = re.match(r"OVH rep=\d+ cfg=(\w+) (\S+) .*us_per_launch=([\d.]+)", l)
    if m:
        v.setdefault((m.group(2), m.group(1)), []).append(float(m.group(3)))
print("| shape | bare (us/launch) | gpuprof | gpuprof + PM 10 ms | PM / gpuprof |")
print("|---|---|---|---|---|")
for shape in dict.fromkeys(k[0] for k in v):
    med = {c: statistics.median(v[(shape, c)]) if (shape, c) in v else None for c in ("bare", "gpuprof", "pm")}
    f = lambda x: "-" if x is None else "%.3f" % x
    r = "%.3fx" % (med["pm"] / med["gpuprof"]) if med["pm"] and med["gpuprof"] else "-"
    print("| %s | %s | %s | %s | %s |" % (shape, f(med["bare"]), f(med["gpuprof"]), f(med["pm"]), r))
PY
    } 2>&1 | tee "$RES/util.txt"
    rm -f "$RES/util-micro.gpuprof" ;;  # millions of kernels; the MNIST trace stays in results.tgz
  ddp)          # issue #10: DDP with 2 ranks on ONE GPU (gloo: NCCL refuses two ranks on one GPU),
    # one trace per rank (%r), merged onto one time axis, then the comm report.  gloo all-reduces
    # through host memory, so there are no NCCL kernels: Comm/Wait stay empty, steps and compute show.
    log ddp
    ( set -x
      timeout 240 build/bin/gpuprof run -o "$RES/ddp-%r.gpuprof" -- python3 -m torch.distributed.run \
        --standalone --nproc_per_node=2 examples/train_ddp.py --same-gpu --steps 30 --warmup 3 2>&1 |
        grep -E "RESULT|gpuprof|Error|error" | head -20
      ls -la "$RES"/ddp-*.gpuprof
      for f in "$RES"/ddp-*.gpuprof; do build/bin/gpuprof info "$f" | grep -E "^(file|rank|span|processes)|^  pid|^  kernel"; done
      build/bin/gpuprof merge "$RES"/ddp-*.gpuprof -o "$RES/ddp-merged.gpuprof"
      build/bin/gpuprof stats --report comm,kernels "$RES/ddp-merged.gpuprof" | cut -c1-220 | head -160
      build/bin/gpuprof stats --report comm --format json "$RES/ddp-merged.gpuprof" > "$RES/ddp-comm.json"
      set +x
      python3 - "$RES/ddp-comm.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ranks = [r["rank"] for r in d["comm"]]
print("DDP", "PASS" if ranks == [0, 1] else "FAIL", "ranks with kernels in the comm report:", ranks)
steps = {}
for r in d["comm_steps"]:
    if r["range"].startswith("step "):
        steps.setdefault(r["range"], {})[r["rank"]] = r
both = [s for s in steps if set(steps[s]) == {0, 1}]
print("DDP", "PASS" if len(both) >= 33 else "FAIL", "steps on both ranks:", len(both), "(want 33)")
k = sorted({(steps[s][0]["kernels"], steps[s][1]["kernels"]) for s in both if int(s.split()[1]) >= 3})
print("DDP", "PASS" if k and all(a == b for a, b in k) else "FAIL",
      "kernels per steady step (rank 0, rank 1):", k[:6])
PY
    ) 2>&1 | tee "$RES/ddp.txt" ;;
  # ddp2: the same with NCCL, one GPU per rank, for an nvidia-h200-x2 machine (not run yet: no
  # 2-GPU machine was lent).  NVLink multicast must stay off on the shared hosts (KINDS.md), also
  # in the job's own environment:
  # ddp2)
  #   log ddp2
  #   ( set -x
  #     export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  #     nvidia-smi -L
  #     timeout 240 build/bin/gpuprof run -o "$RES/ddp2-%r.gpuprof" -- python3 -m torch.distributed.run \
  #       --standalone --nproc_per_node=2 examples/train_ddp.py --steps 30 --warmup 3 2>&1 |
  #       grep -E "RESULT|gpuprof|Error|error" | head -20
  #     build/bin/gpuprof merge "$RES"/ddp2-*.gpuprof -o "$RES/ddp2-merged.gpuprof"
  #     build/bin/gpuprof stats --report comm,kernels "$RES/ddp2-merged.gpuprof" | cut -c1-220 | head -160
  #     build/bin/gpuprof stats --report comm --format json "$RES/ddp2-merged.gpuprof" > "$RES/ddp2-comm.json"
  #   ) 2>&1 | tee "$RES/ddp2.txt" ;;
  capture)      # --capture-range=cudaProfilerApi on the GPU: only what runs between torch.cuda.profiler.start/stop
    log capture
    ( set -x
      cat > /tmp/cap_job.py <<'PYEOF'
import torch
x = torch.ones(1 << 20, device="cuda"); torch.cuda.synchronize()
for r in range(3):
    torch.cuda.profiler.start()
    y = x * 2; torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    z = x + 1; w = z.sum(); torch.cuda.synchronize()
print("capture job done", float(y[0]), float(w))
PYEOF
      for mode in callback activity api-all; do
        env=(); case $mode in activity) env=(GPUPROF_API_MODE=activity) ;; api-all) env=(GPUPROF_API=all) ;; esac
        env "${env[@]}" timeout 120 build/bin/gpuprof run --capture-range=cudaProfilerApi -o "$RES/cap-$mode.gpuprof" -- python3 /tmp/cap_job.py
        [ $mode = callback ] && build/bin/gpuprof stats --report kernels,windows "$RES/cap-$mode.gpuprof" | cut -c1-160 | head -30
        build/bin/gpuprof dump --json "$RES/cap-$mode.gpuprof" | python3 -c '
import sys, json, collections
c = collections.Counter(); w = []; apis = []
for l in sys.stdin:
    r = json.loads(l)
    if r["type"] == "kernel": c[r["name"][:60]] += 1
    if r["type"] == "window": w.append((r["start"], r["end"]))
    if r["type"] == "api": apis.append(r)
out = [a["name"] for a in apis if not any(s <= a["start"] <= e for s, e in w)]
prof = [a["name"] for a in apis if "rofiler" in a["name"]]
print("CAPTURE", sys.argv[1], "kernels", dict(c), "windows", len(w), "apis", len(apis), "outside", out[:3], "profiler", prof[:2])
ok = len(w) == 3 and sum(c.values()) == 3 and apis and not out and not prof
print("CAPTURE", "PASS" if ok else "FAIL", sys.argv[1])' $mode
      done
    ) 2>&1 | tee "$RES/capture.txt" ;;
  activity-check)  # GPUPROF_API_MODE=activity records API calls (no capture range), and falls back under one
    log activity-check
    ( printf 'import torch\nx = torch.ones(1 << 20, device="cuda")\nfor r in range(3):\n    torch.cuda.profiler.start(); y = x * 2; torch.cuda.synchronize(); torch.cuda.profiler.stop()\nprint("ok")\n' > /tmp/act_job.py
      for cap in none cudaProfilerApi; do
        GPUPROF_API_MODE=activity timeout 60 build/bin/gpuprof run --capture-range=$cap -o "$RES/act-$cap.gpuprof" -- python3 /tmp/act_job.py
        n=$(build/bin/gpuprof dump --json "$RES/act-$cap.gpuprof" | grep -c '"type":"api"')
        k=$(build/bin/gpuprof dump --json "$RES/act-$cap.gpuprof" | grep -c '"type":"kernel"')
        echo "ACTCHECK capture=$cap api=$n kernels=$k $([ "$n" -gt 0 ] && [ "$k" -ge 3 ] && echo PASS || echo FAIL)"
      done ) 2>&1 | tee "$RES/activity-check.txt" ;;
  api-probe)    # bench/overhead/api_cost_probe.cu: when per-API activity records take effect; each API-recording mechanism's cost per launch, in-process
    log api-probe
    ( bin=build/gpu/api_cost_probe; mkdir -p build/gpu
      nvcc -O2 -arch=sm_90 -o $bin bench/overhead/api_cost_probe.cu -lcupti -L$CUDA_HOME/targets/x86_64-linux/lib || exit 1
      export LD_LIBRARY_PATH=$CUDA_HOME/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      for m in ${PROBE_ONCE-enable-at-start enable-after-ctx enable-in-cb prime-then-cb kind-after-ctx kind-in-cb nested}; do
        timeout 60 $bin $m 10000 || echo "PROBE mode=$m exit=$?"
        # the nested driver calls under the shared libcudart (what PyTorch loads) too
        [ $m = nested ] && nvcc -O2 -arch=sm_90 -cudart shared -o $bin-shared bench/overhead/api_cost_probe.cu \
          -lcupti -L$CUDA_HOME/targets/x86_64-linux/lib && timeout 60 $bin-shared nested | sed 's/^NESTED/NESTED-shared/'
      done
      for r in $(seq ${PROBE_REPS:-3}); do
        for m in ${PROBE_AB-ab-none ab-callback ab-callback-rt ab-actkind ab-actapi ab-actapi-rt}; do
          timeout 60 $bin $m ${PROBE_LAUNCHES:-10000} ${PROBE_PAIRS:-10} || echo "PROBE mode=$m exit=$?"
        done
      done ) 2>&1 | tee "$RES/api-probe.txt" ;;
  clock)        # what one timestamp costs there (the shim reads two per traced call)
    log clock
    ( bin=build/bench/shim/clock_cost
      [ -x $bin ] || { mkdir -p build/bench/shim; cc -O2 -o $bin bench/shim/clock_cost.c; }
      $bin 2000000; grep -o -m1 -w "constant_tsc\|nonstop_tsc" /proc/cpuinfo | sort -u | tr '\n' ' '; echo
      cat /sys/devices/system/clocksource/clocksource0/available_clocksource
      # GPUPROF_CLOCK=auto on a traced MNIST run: the TSC was used (counter),
      # and every kernel starts after its launch call began (GPU timestamps
      # come through the shim's clock too: a skewed clock would break this)
      for ck in auto monotonic; do
        GPUPROF_CLOCK=$ck timeout 120 build/bin/gpuprof run -o "$RES/clock-$ck.gpuprof" -- \
          python3 examples/train_mnist.py --steps 300 --warmup 10 2>&1 | grep RESULT
        build/bin/gpuprof dump --json "$RES/clock-$ck.gpuprof" | python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
upd = [r["value"] for r in recs if r.get("type") == "counter" and r.get("name") == "gpuprof.clock_tsc_updates"]
api = {r["corr"]: r for r in recs if r.get("type") == "api"}
ks = [r for r in recs if r.get("type") == "kernel" and r.get("corr") in api]
early = [k["start"] - api[k["corr"]]["start"] for k in ks if k["start"] < api[k["corr"]]["start"]]
lag = sorted(k["start"] - api[k["corr"]]["start"] for k in ks)
ok = ks and not early and (bool(upd) == (sys.argv[1] == "auto"))
print("CLOCKCHECK", sys.argv[1], "tsc_updates", upd, "kernels", len(ks), "before_launch", len(early),
      "launch_to_start_ns p50", lag[len(lag)//2] if lag else None, "PASS" if ok else "FAIL")' $ck
      done ) 2>&1 | tee "$RES/clock.txt" ;;
  noise)        # where the run-to-run noise comes from: identical bare runs, unpinned vs pinned to one core
    log noise
    ( lscpu | grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA|CPU max|Hypervisor)" ; grep -E "^cpu " /proc/stat
      nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,pstate --format=csv
      bin=build/gpu/empty_kernel; mkdir -p build/gpu
      [ -x $bin ] || nvcc -O2 -arch=sm_90 -o $bin examples/empty_kernel.cu
      for i in 1 2 3 4 5 6; do
        echo "NOISE empty unpinned $($bin 200000 2000 | grep RESULT)"
        echo "NOISE empty core6 $(taskset -c 6 $bin 200000 2000 | grep RESULT)"
        echo "NOISE empty core6-again $(taskset -c 6 $bin 200000 2000 | grep RESULT)"
      done
      for i in 1 2 3; do
        echo "NOISE mnist w2 $(timeout 100 python3 examples/train_mnist.py --steps 600 --warmup 20 2>/dev/null | grep RESULT)"
        echo "NOISE mnist w0 $(timeout 100 python3 examples/train_mnist.py --steps 600 --warmup 20 --workers 0 2>/dev/null | grep RESULT)"
      done
      grep -E "^cpu " /proc/stat ) 2>&1 | tee "$RES/noise.txt" ;;
  pm-crash)     # issue #18: --pm-sampling kills a Lightning job (SIGSEGV): bisect (mpi4py before/after CUDA) and backtraces
    log pm-crash
    ( ulimit -c unlimited 2>/dev/null; echo "core_pattern: $(cat /proc/sys/kernel/core_pattern)"
      echo "/tmp/core.%p" > /proc/sys/kernel/core_pattern 2>/dev/null && echo "core_pattern set" || echo "core_pattern not writable"
      python3 -c "import mpi4py; from mpi4py import MPI; print('mpi4py', mpi4py.__version__, MPI.Get_library_version().splitlines()[0])" 2>&1 | tail -2
      pmrun() { local name=$1; shift; local t0=$(date +%s.%N)
        timeout 150 "$@" >"$RES/pmc-$name.out" 2>"$RES/pmc-$name.err"; local rc=$?
        [ $rc -ge 128 ] && [ -z "${FIRST_CRASH:-}" ] && FIRST_CRASH=$name
        echo "PMCRASH $name rc=$rc $(grep RESULT "$RES/pmc-$name.out") t=$(python3 -c "import time;print('%.1f'%(time.time()-$t0))")"
        grep -v "^TIMING" "$RES/pmc-$name.err" | grep -v "^ *$" | tail -${PMC_TAIL:-14}; }
      G=build/bin/gpuprof; LF=examples/thirdparty/lightning_fit.py; MC=examples/thirdparty/mpi_then_cuda.py
      pmrun lf-bare python3 $LF
      pmrun lf-pm $G run --pm-sampling=10ms -o "$RES/pmc-lf.gpuprof" -- python3 -X faulthandler $LF
      pmrun mc-before $G run --pm-sampling=10ms -o "$RES/pmc-mcb.gpuprof" -- python3 -X faulthandler $MC
      pmrun mc-after $G run --pm-sampling=10ms -o "$RES/pmc-mca.gpuprof" -- python3 -X faulthandler $MC --mpi-after
      pmrun mc-nompi $G run --pm-sampling=10ms -o "$RES/pmc-mcn.gpuprof" -- python3 -X faulthandler $MC --no-mpi
      pmrun mc-before-default $G run -o "$RES/pmc-mcd.gpuprof" -- python3 $MC
      pmrun mc-before-nofollow env GPUPROF_FOLLOW_EXEC=0 $G run --pm-sampling=10ms -o "$RES/pmc-mcf.gpuprof" -- python3 $MC
      pmrun mc-before-pm-only env GPUPROF_ACTIVITY=none GPUPROF_API=none $G run --pm-sampling=10ms -o "$RES/pmc-mcp.gpuprof" -- python3 $MC
      ls -la /tmp/core.* 2>/dev/null | head
      for c in $(ls /tmp/core.* 2>/dev/null | head -2); do echo "--- core $c"
        timeout 120 cuda-gdb -batch -ex "set pagination off" -ex "info threads" -ex "thread apply all bt 25" "$(command -v python3)" "$c" 2>&1 | grep -v "^\[New LWP\|warning:" | head -150; done
      echo "--- cuda-gdb run of the first crashing job"
      echo "first crash: ${FIRST_CRASH:-none}"; prog=$LF; case ${FIRST_CRASH:-} in mc-*) prog=$MC ;; esac
      timeout 200 cuda-gdb -batch -ex "set pagination off" -ex "set startup-with-shell off" \
        -ex "handle SIGPIPE SIGUSR1 SIGUSR2 SIGCHLD nostop noprint pass" \
        -ex "set environment LD_PRELOAD=$PWD/build/lib/libgpuprof.so" -ex "set environment GPUPROF_PM_SAMPLING=10ms" \
        -ex "set environment GPUPROF_OUTPUT=$RES/pmgdb-%p.gpuprof" -ex run -ex "info threads" -ex "thread apply all bt 30" \
        --args "$(command -v python3)" $prog 2>&1 | grep -v "^\[New Thread\|^\[Thread .* exited\|^\[Detaching\|^\[Inferior" | tail -200
    ) 2>&1 | tee "$RES/pm-crash.txt"
    rm -f "$RES"/pmc-*.gpuprof* /tmp/core.* ;;
  pm-crash2)    # issue #18, second look: the faulting frame in libnvperf_host, who binds its symbols, and variants
    log pm-crash2
    ( ulimit -c unlimited 2>/dev/null; echo "/tmp/core.%p" > /proc/sys/kernel/core_pattern 2>/dev/null
      pmrun() { local name=$1; shift
        timeout 150 "$@" >"$RES/pmc-$name.out" 2>"$RES/pmc-$name.err"; local rc=$?
        echo "PMCRASH $name rc=$rc $(grep RESULT "$RES/pmc-$name.out")"
        grep -a "gpuprof\|Fatal\|Error" "$RES/pmc-$name.err" | tail -6; }
      G=build/bin/gpuprof; LF=examples/thirdparty/lightning_fit.py; MC=examples/thirdparty/mpi_then_cuda.py
      rm -rf /tmp/ldd; mkdir -p /tmp/ldd
      pmrun lf-pm-lddebug env LD_DEBUG=bindings LD_DEBUG_OUTPUT=/tmp/ldd/b $G run --pm-sampling=10ms -o "$RES/pmc-lf.gpuprof" -- python3 $LF
      echo "--- symbols libnvperf_host binds outside itself and the C/C++ runtime"
      cat /tmp/ldd/b.* 2>/dev/null | grep -a "binding file [^ ]*libnvperf_host" | grep -av "to [^ ]*\(libnvperf_host\|libc\.so\|libm\.so\|libstdc++\|libgcc_s\|ld-linux\|libpthread\|libdl\|librt\)" | sed 's/^ *[0-9]*: *//' | sort | uniq -c | sort -rn | head -40
      echo "--- libraries that define symbols bound by libnvperf_host, all"
      cat /tmp/ldd/b.* 2>/dev/null | grep -a "binding file [^ ]*libnvperf_host" | sed 's/.* to \([^ ]*\) .*/\1/' | sort | uniq -c | sort -rn | head
      rm -rf /tmp/ldd
      c=$(ls -t /tmp/core.* 2>/dev/null | head -1)
      if [ -n "$c" ]; then echo "--- core $c"
        timeout 150 cuda-gdb -batch -ex "set pagination off" -ex "info sharedlibrary" -ex "bt 40" -ex "info registers rip rsp rdi rsi rax" \
          -ex "x/12i \$pc-24" -ex "thread 2" -ex "bt 30" "$(command -v python3)" "$c" 2>&1 \
          | grep -av "^\[New LWP\|warning:" | grep -a -v "^0x.*/\(python3.12/lib-dynload\|site-packages/[a-z_]*/[^ ]*\.cpython\)" | head -260
      fi
      rm -f /tmp/core.*
      pmrun lf-pm-noopencl env HWLOC_COMPONENTS=-opencl,-cuda,-nvml,-rsmi,-levelzero $G run --pm-sampling=10ms -o "$RES/pmc-lf2.gpuprof" -- python3 $LF
      pmrun lf-pm-toolkit-cupti env GPUPROF_CUPTI=$CUDA_HOME/targets/x86_64-linux/lib/libcupti.so.13 $G run --pm-sampling=10ms -o "$RES/pmc-lf3.gpuprof" -- python3 $LF
      pmrun lf-default $G run -o "$RES/pmc-lf4.gpuprof" -- python3 $LF
      pmrun mc-before-pm $G run --pm-sampling=10ms -o "$RES/pmc-mcb.gpuprof" -- python3 $MC
      echo "mc-before PM samples: $($G dump --type counter "$RES/pmc-mcb.gpuprof" 2>&1 | grep -c pm.sm_active)"
      pmrun mc-nompi-pm $G run --pm-sampling=10ms -o "$RES/pmc-mcn.gpuprof" -- python3 $MC --no-mpi
      echo "mc-nompi PM samples: $($G dump --type counter "$RES/pmc-mcn.gpuprof" 2>&1 | grep -c pm.sm_active)"
      ls /tmp/core.* 2>/dev/null
    ) 2>&1 | tee "$RES/pm-crash2.txt"
    rm -f "$RES"/pmc-*.gpuprof* /tmp/core.* ;;
  pm-crash3)    # issue #18: confirm the cause (config image freed after SetConfig) and the fix: glibc's MALLOC_PERTURB_ fills
                # freed blocks, so a build that frees what CUPTI keeps crashes at once, even in a small job
    log pm-crash3
    ( pmrun() { local name=$1; shift
        timeout 150 "$@" >"$RES/pmc-$name.out" 2>"$RES/pmc-$name.err"; local rc=$?
        echo "PMCRASH $name rc=$rc $(grep RESULT "$RES/pmc-$name.out")"
        grep -a "gpuprof" "$RES/pmc-$name.err" | grep -v "events, 0 dropped" | tail -4; }
      samples() { echo "  $1 PM samples (pm.sm_active_pct): $(build/bin/gpuprof dump --type counter "$2" 2>&1 | grep -c pm.sm_active)"; }
      LF=examples/thirdparty/lightning_fit.py; MC=examples/thirdparty/mpi_then_cuda.py; OLD=.carry/build-old
      if [ -d $OLD ]; then
        pmrun old-mc-nompi-perturb env MALLOC_PERTURB_=165 $OLD/bin/gpuprof run --pm-sampling=10ms -o "$RES/pmc-o1.gpuprof" -- python3 $MC --no-mpi
        pmrun old-mc-nompi $OLD/bin/gpuprof run --pm-sampling=10ms -o "$RES/pmc-o2.gpuprof" -- python3 $MC --no-mpi
      fi
      pmrun new-mc-nompi-perturb env MALLOC_PERTURB_=165 build/bin/gpuprof run --pm-sampling=10ms -o "$RES/pmc-n1.gpuprof" -- python3 $MC --no-mpi
      samples new-mc-nompi-perturb "$RES/pmc-n1.gpuprof"
      pmrun lf-bare python3 $LF
      for i in 1 2 3; do
        pmrun new-lf-pm-$i build/bin/gpuprof run --pm-sampling=10ms -o "$RES/pmc-lf$i.gpuprof" -- python3 $LF
        samples new-lf-pm-$i "$RES/pmc-lf$i.gpuprof"
        cmp -s <(grep RESULT "$RES/pmc-lf-bare.out") <(grep RESULT "$RES/pmc-new-lf-pm-$i.out") && echo "  RESULT same as bare" || echo "  RESULT DIFFERS from bare"
      done
      pmrun new-lf-pm-perturb env MALLOC_PERTURB_=165 build/bin/gpuprof run --pm-sampling=10ms -o "$RES/pmc-lfp.gpuprof" -- python3 $LF
      samples new-lf-pm-perturb "$RES/pmc-lfp.gpuprof"
      build/bin/gpuprof info "$RES/pmc-lf1.gpuprof" | grep -E "^(integrity|dropped)|^  kernel"
    ) 2>&1 | tee "$RES/pm-crash3.txt"
    rm -f "$RES"/pmc-*.gpuprof* ;;
  pm-crash4)    # issue #18: the heap corruption at exit with PM sampling (after the use-after-free fix): backtraces
    log pm-crash4
    ( ulimit -c unlimited 2>/dev/null; echo "/tmp/core.%p" > /proc/sys/kernel/core_pattern 2>/dev/null; rm -f /tmp/core.*
      LF=examples/thirdparty/lightning_fit.py; MC=examples/thirdparty/mpi_then_cuda.py
      corebt() { local c=$(ls -t /tmp/core.* 2>/dev/null | head -1); [ -n "$c" ] || { echo "  no core"; return; }
        timeout 120 cuda-gdb -batch -ex "set pagination off" -ex "bt 40" -ex "info threads" -ex "thread apply all bt 16" \
          "$(command -v python3)" "$c" 2>&1 | grep -av "^\[New LWP\|warning:\|^Using host\|^\[Thread debugging" \
          | awk '/^Thread /{hdr=$0; next} /gps_|cupti|nvperf|libcuda|exit|free|malloc|abort|raise|^#[0-9]+ .* in \?\? \(\) from .*libc/{ if (hdr) {print hdr; hdr=""} print; next} /^[^#T]/{print}' | head -${COREBT_LINES:-150}
        rm -f /tmp/core.*; }
      for v in "mc-perturb env MALLOC_PERTURB_=165 build/bin/gpuprof run --pm-sampling=10ms -o $RES/p4a.gpuprof -- python3 $MC --no-mpi" \
               "mc-plain build/bin/gpuprof run --pm-sampling=10ms -o $RES/p4b.gpuprof -- python3 $MC --no-mpi" \
               "lf-plain build/bin/gpuprof run --pm-sampling=10ms -o $RES/p4c.gpuprof -- python3 $LF" \
               "mc-perturb-nocheck env MALLOC_PERTURB_=165 MALLOC_CHECK_=3 build/bin/gpuprof run --pm-sampling=10ms -o $RES/p4d.gpuprof -- python3 $MC --no-mpi"; do
        name=${v%% *}; cmd=${v#* }
        timeout 150 $cmd >"$RES/p4-$name.out" 2>"$RES/p4-$name.err"; rc=$?
        echo "PMCRASH4 $name rc=$rc $(grep RESULT "$RES/p4-$name.out")"; grep -a -v "^TIMING\|Tip\|TPU\|GPU avail\|Tensor Cores\|LOCAL_RANK\|stopped" "$RES/p4-$name.err" | tail -4
        [ $rc -ge 128 ] && corebt
      done
    ) 2>&1 | tee "$RES/pm-crash4.txt"
    rm -f "$RES"/p4*.gpuprof* ;;
  scale)      # issue #25 on the 16-core machine: run `SCALE_N=1e8 bash scripts/gpu-session.sh scale`
              # (~7 min at 1e8 estimated from this machine's figures, under the call's 600 s; ~2.5
              # min at the default 3e7): the
              # reader's rate on 1..16 threads (and the same records), a late window, stats (all
              # reports) on 16 threads and on 1 (wall, peak RSS, phases from --verbose: the one-thread
              # pre-pass and steps analysis, the slices' CPU sum and largest, the pass over the GPU
              # operations in slices), the merging reports alone, the join reports (nvtx,launch_sites)
              # and the union reports (comm,windows,util --whole-trace) on 16 and 1, info, the
              # summarised Perfetto export; at the end the bars (16 threads against 1, peak RSS at
              # 1e8) as SCALE BAR lines.  A generated trace (bench/bigtrace): SCALE_N events (default
              # 3e7, ~0.2 GB; 1e8 = 0.65 GB takes ~3x as long), SCALE_THREADS (default "1 2 4 8 16"),
              # SCALE_RUNS (bench_read runs per count, best kept; default 1).
    log scale
    ( N=${SCALE_N:-3e7}; T=$RES/big.gpuprof; M=$RES/scale-meas.txt; : > "$M"
      # wall s and peak RSS MiB of a command (no /usr/bin/time needed); also into $M for the bars
      meas() { python3 - "$M" "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time(); rc = subprocess.call(sys.argv[3:], stdout=subprocess.DEVNULL)
line = f"SCALE {sys.argv[2]}: {time.time() - t:.2f} s, peak RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB, exit {rc}"
print(line, flush=True)
open(sys.argv[1], "a").write(line + "\n")
PY
      }
      nproc; set -x
      timeout 120 build/bench/gen_bigtrace "$N" "$T"; ls -la "$T"
      timeout 60 build/bench/bench_read -r "${SCALE_RUNS:-1}" "$T" ${SCALE_THREADS:-1 2 4 8 16}
      timeout 20 build/bench/bench_read -w 500000000 "$T"
      # --verbose: the phases' times on stderr (what stays serial: the pre-pass, the steps
      # analysis; the slices' CPU sum and largest; finish's pass over the GPU operations in slices)
      for t in 16 1; do meas "stats --threads $t" timeout 240 build/bin/gpuprof stats --verbose --threads $t "$T"; done
      for t in 16 1; do meas "stats merging reports --threads $t" timeout 120 build/bin/gpuprof stats --verbose \
        --threads $t --report api,kernels,memops,memsize,sync,occupancy,counters,memory "$T"; done
      # the join reports in shards (branch joinshards): --verbose gives the one-thread pre-pass
      # (the NVTX ranges) and the slices' CPU sum and largest
      for t in 16 1; do meas "stats join reports --threads $t" timeout 120 build/bin/gpuprof stats --verbose \
        --threads $t --report nvtx,launch_sites "$T"; done
      # the streaming unions in shards (branch stepshards): comm's and util's merged at the cuts
      for t in 16 1; do meas "stats union reports --threads $t" timeout 120 build/bin/gpuprof stats --verbose \
        --threads $t --report comm,windows,util --whole-trace "$T"; done
      meas "info --threads 16" timeout 20 build/bin/gpuprof info --threads 16 "$T"
      meas "export perfetto --summary" timeout 60 build/bin/gpuprof export --format perfetto --summary -o "$RES/s.json.gz" "$T"
      set +x
      # the bars: stats on 16 threads <= 1/8 of its 1-thread time; peak RSS of stats (all) <= 512 MiB at 1e8
      python3 - "$M" "$N" <<'PY'
import re, sys
m = {}
for l in open(sys.argv[1]):
    x = re.match(r"SCALE (.*): ([0-9.]+) s, peak RSS ([0-9]+) MiB, exit (\d+)", l)
    if x: m[x.group(1)] = (float(x.group(2)), int(x.group(3)), int(x.group(4)))
for what in ("stats", "stats merging reports", "stats join reports", "stats union reports"):
    a, b = m.get(f"{what} --threads 16"), m.get(f"{what} --threads 1")
    if a and b and not a[2] and not b[2]:
        print(f"SCALE BAR {what} ({sys.argv[2]} events): 16 threads {a[0]:.2f} s / 1 thread {b[0]:.2f} s = "
              f"{b[0] / a[0]:.2f}x (bar 8x: {'met' if b[0] >= 8 * a[0] else 'not met'}); peak RSS {a[1]} / {b[1]} MiB")
    else:
        print(f"SCALE BAR {what}: not measured (a run failed or timed out: {a} {b})")
PY
    ) 2>&1 | tee "$RES/scale.txt"
    rm -f "$RES"/big.gpuprof "$RES"/s.json.gz ;;
  engine)       # issue #41 on the 16-core machine: stats, steps, advise and report on one generated trace
                # (seed 7; ENGINE_N events, default 3e7; 1e8 as in the issue fits the call only without
                # strace): wall, peak RSS, the reads of the trace (strace's pread bytes over the size,
                # when strace is there) and each command's time over stats' (bars: advise, steps, report
                # within 2x; report reading the trace once)
    log engine
    ( set -x; DIR=$RES SEED=7 timeout 540 sh bench/offline/engine.sh -t 16 "${ENGINE_N:-3e7}" ) 2>&1 | tee "$RES/engine.txt"
    rm -f "$RES"/bench-*.gpuprof ;;
  views)       # issue #41 (branch advspeed) on the 16-core machine, a generated trace (seed 7, VIEWS_N
                # events, default 1e8): advise (stats' driver, tools/reports/advise_drive.h: the pre-pass,
                # the steps' pass and the facts pass in slices, tools/analysis/steps/steps_slice.h,
                # tools/analysis/advise/advise_slice.h; --verbose's lines say how each ran) and a 10-step window
                # (export --steps 20000:20010: the steps found by the pre-pass in slices, then the
                # window's chunks) on 16 threads, byte for byte what one thread gives, with wall times
                # (bars: advise within 2x of `stats` (engine phase), the window < 1 s)
    log views
    ( T=$RES/views.gpuprof; G=build/bin/gpuprof; TIMEFORMAT='%R s wall, %U s user'
      set -x; timeout 150 build/bench/gen_bigtrace --seed 7 "${VIEWS_N:-1e8}" "$T" >/dev/null; set +x
      for n in 16 1; do
        echo "advise --threads $n:"; time timeout 200 $G advise --threads $n --all --format json --verbose "$T" \
          >"$RES/adv$n.json" 2>"$RES/adv$n.err"; tail -4 "$RES/adv$n.err"
        echo "export --steps 20000:20010 --threads $n:"; time timeout 60 $G export --threads $n --format perfetto \
          --steps 20000:20010 -o "$RES/win$n.json" "$T"
      done
      echo "stats --threads 16 (every report):"; time timeout 100 $G stats --threads 16 "$T" >/dev/null
      if cmp -s "$RES/adv16.json" "$RES/adv1.json"; then echo "VIEWS SAME advise: 16 threads = 1"
      else echo "VIEWS DIFFER advise"; fi
      if cmp -s "$RES/win16.json" "$RES/win1.json"; then echo "VIEWS SAME export window: 16 threads = 1"
      else echo "VIEWS DIFFER export window"; fi ) 2>&1 | tee "$RES/views.txt"
    rm -f "$RES"/views.gpuprof "$RES"/adv1*.json "$RES"/win1*.json "$RES"/adv16.json ;;
  diff-view)    # issue #41 (branch ldiff) on the 16-core machine, two generated traces (seeds 7 and 8,
                # DIFFV_N events, default 1e8): `gpuprof diff` (each trace's steps through stats' driver,
                # reports/stats_drive.h, in slices) at --threads 16 and 1, byte for byte the same, and with
                # OLD_GPUPROF=path (main's build before ldiff, carried) that build's at 16 the same too;
                # wall, user and peak RSS of each (and at 4: where the drives' slices stop paying, the
                # profile pass of the aligned steps being one thread at any --threads); --verbose's lines
                # say the slices
    log diff-view
    ( A=$RES/dv7.gpuprof; B=$RES/dv8.gpuprof; G=build/bin/gpuprof
      set -x; timeout 150 build/bench/gen_bigtrace --seed 7 "${DIFFV_N:-1e8}" "$A" >/dev/null
      timeout 150 build/bench/gen_bigtrace --seed 8 "${DIFFV_N:-1e8}" "$B" >/dev/null; set +x
      run() { timed "$RES/dv-$3.json" "$1" diff --format json --threads "$2" ${4:-} "$A" "$B"; }  # BUILD THREADS TAG [OPTION]
      same() { if [ -s "$RES/dv-$2.json" ] && cmp -s "$RES/dv-$1.json" "$RES/dv-$2.json"; then echo "DIFFVIEW SAME: $1 = $2"
               else echo "DIFFVIEW DIFFER: $1 != $2"; fi; }
      run $G 16 t16 --verbose; run $G 4 t4; run $G 1 t1; same t16 t1; same t16 t4
      if [ -n "${OLD_GPUPROF:-}" ]; then run "$OLD_GPUPROF" 16 old16; same old16 t16; fi
    ) 2>&1 | tee "$RES/diff-view.txt"
    rm -f "$RES"/dv7.gpuprof "$RES"/dv8.gpuprof "$RES"/dv-*.json ;;
  speed)        # issue #41 (branch speed) on the 16-core machine, a generated trace (seed 7, SPEED_N events,
                # default 1e8), this build against OLD_GPUPROF's (e.g. 912857e's, carried), interleaved
                # SPEED_REPS times (default 3): wall and CPU of each and the means' ratios.  SPEED_ONLY:
                # which (default "stats window window-indexed"; also advise, report):
                #   stats: `stats --threads 16` (bar: within ~3 % of the old);
                #   window: the 10-step window (`export --steps 20000:20010`, bar < 1 s), its file the
                #     same as the old's; without the steps' index (GPUPROF_CACHE_DIR=off);
                #   window-indexed: the same after `steps --threads 16` kept the index;
                #   advise, report: `--threads 16`, without the index and with it (the facts beside
                #     the trace method's steps).
                # SPEED_GEN: more gen_bigtrace options (--no-nvtx: steps by the trace method)
    log speed
    ( T=$RES/speed.gpuprof
      set -x; timeout 150 build/bench/gen_bigtrace --seed 7 ${SPEED_GEN:-} "${SPEED_N:-1e8}" "$T" >/dev/null; set +x
      SPEED_ONLY=${SPEED_ONLY:-stats window window-indexed} python3 - "$T" "${SPEED_REPS:-3}" build/bin/gpuprof ${OLD_GPUPROF:-} <<'PY'
import os, resource, subprocess, sys, time
T, reps, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
only = os.environ["SPEED_ONLY"].split()
ix = os.path.join(os.path.dirname(T), "ix")
def run(cmd, cache="off"):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.time()
    rc = subprocess.call(cmd, stdout=subprocess.DEVNULL, timeout=200, env=dict(os.environ, GPUPROF_CACHE_DIR=cache))
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.time() - t, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, rc
window = ["export", "--threads", "16", "--format", "perfetto", "--steps", "20000:20010"]
new, old = bins[0], bins[1:]
plain = [(new, "off")] + [(b, "off") for b in old]
both = [(new, "off"), (new, ix)] + [(b, "off") for b in old]
def lab(v): return f"{v[0]} index {'off' if v[1] == 'off' else 'kept'}"
for what, args, variants in (("stats", ["stats", "--threads", "16", T], plain), ("window", window, plain),
                             ("window-indexed", window, [(new, ix)] + [(b, "off") for b in old]),
                             ("advise", ["advise", "--threads", "16", T], both),
                             ("report", ["report", "--threads", "16", "-o", T + ".html", T], both)):
    if what not in only: continue
    if ix in (c for _, c in variants) and not os.path.isdir(ix):
        w, c, rc = run([new, "steps", "--threads", "16", T], ix)
        print(f"SPEED steps keeping the index {new}: {w:.2f} s wall, {c:.1f} s CPU, rc {rc}, index "
              f"{sum(os.path.getsize(os.path.join(ix, f)) for f in os.listdir(ix)) if os.path.isdir(ix) else 0} bytes",
              flush=True)
    got = {v: [] for v in variants}
    for i in range(reps):
        for v in variants:
            b, cache = v
            out = ["-o", f"{T}.{bins.index(b)}.json", T] if what.startswith("window") else []
            w, c, rc = run([b] + args + out, cache)
            got[v].append((w, c))
            print(f"SPEED {what} {lab(v)}: {w:.2f} s wall, {c:.1f} s CPU, rc {rc}", flush=True)
    mean = {v: [sum(x[k] for x in r) / len(r) for k in (0, 1)] for v, r in got.items()}
    for v in variants[1:]:
        print(f"SPEED {what}: {lab(variants[0])} / {lab(v)}: wall {mean[variants[0]][0] / mean[v][0]:.3f}, "
              f"CPU {mean[variants[0]][1] / mean[v][1]:.3f} (means of {reps})")
    for v in variants:
        print(f"SPEED {what}: {lab(v)}: mean {mean[v][0]:.2f} s wall"
              + (" (bar < 1 s)" if what.startswith("window") else ""))
if old and any(w.startswith("window") for w in only):
    f = [f"{T}.{i}.json" for i in (0, 1)]
    same = all(map(os.path.exists, f)) and open(f[0], "rb").read() == open(f[1], "rb").read()
    print("SPEED window file:", "same as the old's" if same else "DIFFERS from the old's")
PY
      ) 2>&1 | tee "$RES/speed.txt"
    rm -rf "$RES"/speed.gpuprof "$RES"/speed.gpuprof.*.json "$RES"/speed.gpuprof.html "$RES"/ix ;;
  rss)          # issue #41's memory bar on the 16-core machine: peak RSS of stats, steps, advise and
                # report (default threads) on a generated trace of RSS_N events (seed 7; default 1e8,
                # ~4 min; 3e8 = 2 GB takes ~3x as long), each against 512 MiB: RSS BAR lines.  RSS_CMDS:
                # the commands (default "stats steps advise report"; at 1e9, ~90 s to generate, one or
                # two a call: report alone takes ~13 min there)
    log rss
    ( N=${RSS_N:-1e8}; T=$RES/rss.gpuprof
      set -x; timeout 200 build/bench/gen_bigtrace --seed 7 "$N" "$T"; set +x
      for c in ${RSS_CMDS:-stats steps advise report}; do
        python3 - "$N" "$c" build/bin/gpuprof "$c" -o "$RES/rss.html" "$T" <<'PY'
import resource, subprocess, sys, time
cmd = sys.argv[3:] if sys.argv[2] == "report" else sys.argv[3:5] + sys.argv[7:]
t = time.time(); rc = subprocess.call(cmd, stdout=subprocess.DEVNULL, timeout=540)
mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"RSS BAR {sys.argv[1]} {sys.argv[2]}: peak RSS {mib:.0f} MiB ({'ok' if mib <= 512 else 'OVER'} 512), "
      f"{time.time() - t:.1f} s, exit {rc}", flush=True)
PY
      done ) 2>&1 | tee "$RES/rss.txt"
    rm -f "$RES"/rss.gpuprof "$RES"/rss.html ;;
  slices)       # the slice runner (tools/analysis/core/slices.h) at scale: `stats` (every report) and the steps
                # (--report steps,util --per-step) as JSON on a generated trace (seed 7, SLICES_N events,
                # default 1e8) on 16 threads, byte for byte what one thread gives; the slices' CPU seconds
                # and the steps' verdict at the cuts (--verbose)
    log slices
    ( T=$RES/slices.gpuprof
      set -x; timeout 150 build/bench/gen_bigtrace --seed 7 "${SLICES_N:-1e8}" "$T" >/dev/null
      for rep in "" "--report steps,util --per-step"; do
        # shellcheck disable=SC2086
        timeout 60 build/bin/gpuprof stats --format json --verbose --threads 16 $rep "$T" >"$RES/sl16.json" 2>"$RES/sl16.err"
        # shellcheck disable=SC2086
        timeout 150 build/bin/gpuprof stats --format json --threads 1 $rep "$T" >"$RES/sl1.json"
        if cmp -s "$RES/sl16.json" "$RES/sl1.json"; then echo "SLICES SAME (${rep:-every report}): 16 threads = 1"
        else echo "SLICES DIFFER (${rep:-every report})"; fi
        grep -i "slice" "$RES/sl16.err" | tail -6
      done ) 2>&1 | tee "$RES/slices.txt"
    rm -f "$RES"/slices.gpuprof "$RES"/sl16.* "$RES"/sl1.json ;;
  medians)      # deterministic medians (branch median, analysis/core/summary.h): stats, every report as JSON, on a
                # generated trace (seed 7, MEDIANS_N events, default 1e8: tables past 2^20 values, estimated
                # medians) at --threads 1, 2, 4, 16 and 16 again, byte for byte the same; wall, user and peak
                # RSS of each (with OLD_GPUPROF=path, that build's --threads 16 twice too: run to run it differed)
    log medians
    ( T=$RES/medians.gpuprof; G=build/bin/gpuprof
      set -x; timeout 150 build/bench/gen_bigtrace --seed 7 "${MEDIANS_N:-1e8}" "$T" >/dev/null; set +x
      run() { timed "$RES/md-$3.json" "$1" stats --format json --threads "$2" "$T"; }  # BUILD THREADS TAG
      same() { if [ -s "$RES/md-$2.json" ] && cmp -s "$RES/md-$1.json" "$RES/md-$2.json"; then echo "MEDIANS SAME: $1 = $2"
               else echo "MEDIANS DIFFER: $1 != $2"; fi; }
      run $G 1 t1
      for n in 2 4 16; do run $G $n t$n; same t$n t1; done
      run $G 16 t16b; same t16b t1
      if [ -n "${OLD_GPUPROF:-}" ]; then run "$OLD_GPUPROF" 16 old16; run "$OLD_GPUPROF" 16 old16b; same old16b old16; fi
    ) 2>&1 | tee "$RES/medians.txt"
    rm -f "$RES"/medians.gpuprof "$RES"/md-*.json ;;
  report-slices) # issue #41 on the 16-core machine, a generated trace (seed 7, RSLICES_N events, default
                # 1e8): `gpuprof report` on 16 threads (its tables, steps and series as stats --threads
                # runs them, reports/stats_drive.h) against one, wall time and peak RSS of each (bars:
                # within 2x of `stats --threads 16`, timed here too, and <= 512 MiB), and the page's
                # data byte for byte the same
    log report-slices
    ( T=$RES/rslices.gpuprof; G=build/bin/gpuprof
      set -x; timeout 150 build/bench/gen_bigtrace --seed 7 "${RSLICES_N:-1e8}" "$T" >/dev/null; set +x
      for c in "stats --threads 16" "report --threads 16" "report --threads 1"; do
        # shellcheck disable=SC2046,SC2086
        python3 - "$c" $G $c $(case $c in report*) echo "-o $RES/rs${c##* }.html";; esac) "$T" <<'PY'
import resource, subprocess, sys, time
t = time.time(); rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, timeout=280)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{sys.argv[1]}: {time.time() - t:.2f} s wall, {ru.ru_utime:.1f} s user, {ru.ru_maxrss / 1024:.0f} MiB peak RSS, rc {rc}")
PY
      done
      for n in 16 1; do  # the data element, its command line's -o the same
        python3 -c 'import re, sys; h = open(sys.argv[1]).read(); m = re.search(r"id=\"gpuprof-data\">(.*?)</script>", h, re.S)
print(m.group(1).replace(sys.argv[2], "rsN.html") if m else "")' "$RES/rs$n.html" "rs$n.html" >"$RES/rs$n.json"
      done
      if [ -s "$RES/rs1.json" ] && cmp -s "$RES/rs16.json" "$RES/rs1.json"; then
        echo "REPORT SLICES SAME: the page's data at 16 threads = 1"
      else echo "REPORT SLICES DIFFER"; fi ) 2>&1 | tee "$RES/report-slices.txt"
    rm -f "$RES"/rslices.gpuprof "$RES"/rs1*.html "$RES"/rs1*.json ;;
  report)       # issue #23: `gpuprof diff` on A/B pairs that change one thing (FP32 vs bf16 autocast,
                # SDPA math vs flash, DataLoader 0 vs 4 workers, two identical configs), each config run
                # AB_REPS times (default 3) interleaved A1 B1 A2 B2 ..., diffed with 3 runs a side (the
                # verdict from the runs' medians, docs/REPORT.md) and with one run a side (the --noise
                # floor); and `gpuprof report` pages of MNIST, ResNet-50 and the transformer with NVML and
                # PM-sampled counters.  Keeps the pages (report-*.html) and the diffs (diff-*.json), not the
                # traces.  About 6 minutes on the H200 (12 MNIST runs of ~10 s, 12 transformer runs of ~12 s).
    log report
    ( G=build/bin/gpuprof
      ab() { local name=$1; shift
        timeout "${AB_TIMEOUT:-150}" $G run -q -o "$RES/ab-$name.gpuprof" -- "$@" >"$RES/ab-$name.out" 2>"$RES/ab-$name.err"
        echo "AB $name rc=$? $(grep RESULT "$RES/ab-$name.out")"; grep -av "^TIMING" "$RES/ab-$name.err" | tail -3; }
      T="python3 examples/transformer_step.py --steps ${AB_TSTEPS:-40} --warmup 5"
      M="python3 examples/train_mnist.py --steps ${AB_MSTEPS:-300} --warmup 10"
      declare -A CMD=([fp32]="$T" [bf16]="$T --amp bf16" [sdpa-math]="$T --amp bf16 --sdpa math"
                      [sdpa-flash]="$T --amp bf16 --sdpa flash" [workers0]="$M --workers 0"
                      [workers4]="$M --workers 4" [same1]="$M" [same2]="$M")
      reps=${AB_REPS:-3}
      for pair in ${AB_PAIRS:-fp32:bf16 sdpa-math:sdpa-flash workers0:workers4 same1:same2}; do
        a=${pair%%:*} b=${pair#*:} la=() lb=()
        for i in $(seq 1 "$reps"); do  # interleaved: a slow stretch of the machine hits both sides
          # shellcheck disable=SC2086  # the commands are command lines
          ab "$a-$i" ${CMD[$a]}; ab "$b-$i" ${CMD[$b]}
          la+=("$RES/ab-$a-$i.gpuprof"); lb+=("$RES/ab-$b-$i.gpuprof")
        done
        echo "=== DIFF $a -> $b, $reps runs a side (the first line should name the change and its effect)"
        $G diff "${la[@]}" --vs "${lb[@]}" 2>&1 | cut -c1-600 | head -"${DIFF_LINES:-40}"
        $G diff --format json --top 0 "${la[@]}" --vs "${lb[@]}" >"$RES/diff-$a-$b.json" 2>&1
        echo "=== DIFF $a -> $b, one run a side (runs 1)"
        $G diff "${la[0]}" "${lb[0]}" 2>&1 | head -1 | cut -c1-600
      done
      for job in "mnist:$M" "resnet50:python3 examples/resnet_step.py --steps 30 --warmup 5" "transformer:$T --amp bf16"; do
        name=${job%%:*} cmd=${job#*:}
        # shellcheck disable=SC2086  # $cmd is a command line
        timeout 200 $G run -q --gpu-metrics=20 --pm-sampling=10ms -o "$RES/rep-$name.gpuprof" -- $cmd \
          >"$RES/rep-$name.out" 2>"$RES/rep-$name.err"
        echo "REPORT $name rc=$? $(grep RESULT "$RES/rep-$name.out")"
        $G report -o "$RES/report-$name.html" "$RES/rep-$name.gpuprof" 2>&1 | tail -3
        ls -la "$RES/report-$name.html" 2>&1
        $G stats --report counters "$RES/rep-$name.gpuprof" 2>&1 | cut -c1-160 | head -20
      done
      $G report -o "$RES/report-ab-fp32-bf16.html" "$RES/ab-fp32-1.gpuprof" "$RES/ab-bf16-1.gpuprof" 2>&1 | tail -3
    ) 2>&1 | tee "$RES/report.txt"
    rm -f "$RES"/ab-*.gpuprof "$RES"/rep-*.gpuprof ;;
  flight-bench)  # issue #26: armed (--flight-recorder, nothing triggered: --flight-api=auto, the default),
                 # armed keeping its API history (-always) and CUPTI's empty API callbacks (floor-api) vs
                 # bare, interleaved (bench/overhead rotates the order each rep); bars: MNIST armed <= 1.02x,
                 # resnet50/transformer armed <= 1.003x (docs/FLIGHT.md); PIN_CPUS=2-13 as on 2026-12-05
    log flight-bench
    RESULTS_DIR=$RES/flbench WORKLOADS=mnist MNIST_REPS=${FLIGHT_MNIST_REPS:-6} MNIST_STEPS=${FLIGHT_MNIST_STEPS:-1000} \
      CONFIGS="${FLIGHT_CONFIGS:-bare gpuprof-armed gpuprof-armed-always floor-api}" BUDGET_S=${FLIGHT_BENCH_S:-330} \
      timeout $(( ${FLIGHT_BENCH_S:-330} + 60 )) bash bench/overhead/run.sh 2>&1 | tee "$RES/flight-bench.txt"
    cat "$RES/flbench/bench/summary.md" 2>/dev/null | tee -a "$RES/flight-bench.txt"
    RESULTS_DIR=$RES/flheavy WORKLOADS="resnet50 transformer" HEAVY_REPS=${FLIGHT_HEAVY_REPS:-3} HEAVY_STEPS=${FLIGHT_HEAVY_STEPS:-60} \
      CONFIGS="bare gpuprof-armed" BUDGET_S=${FLIGHT_HEAVY_S:-180} \
      timeout $(( ${FLIGHT_HEAVY_S:-180} + 60 )) bash bench/overhead/run.sh 2>&1 | tee -a "$RES/flight-bench.txt"
    cat "$RES/flheavy/bench/summary.md" 2>/dev/null | tee -a "$RES/flight-bench.txt" ;;
  flight)        # issue #26: the stall rule, a trigger from another shell, --sample-steps vs full (scripts/flight_check.py);
                 # FLIGHT_API=capture runs them with --flight-api=capture
    log flight
    ( fl=$RES/flight; rm -rf "$fl"; mkdir -p "$fl/stall" "$fl/trig" "$fl/ctl"; chmod 700 "$fl/ctl"
      export GPUPROF_CONTROL_DIR=$fl/ctl
      MN=(python3 examples/train_mnist.py --warmup 5)
      FA=(); [ -n "${FLIGHT_API:-}" ] && FA=(--flight-api="$FLIGHT_API")  # FLIGHT_API=capture: the NVTX-only history
      echo "--- flight options: ${FA[*]:-(defaults)}"
      echo "--- 1. a 2 s host stall at step 300, armed with --trigger=step>10x: one capture, history <= 295, kernels >= 301..305"
      timeout 240 build/bin/gpuprof run --flight-recorder=30s "${FA[@]}" --trigger='step>10x' -o "$fl/stall/mnist-%p.gpuprof" -- \
        "${MN[@]}" --steps 700 --stall-at 300 --stall-s 2 --step-times "$fl/stall.times" 2>&1 | grep -v '^TIMING'
      python3 scripts/flight_check.py stall "$fl/stall" --stall-at 300
      echo "--- 2. gpuprof trigger from another shell on a running armed MNIST: exactly K=10 whole steps, no pause > 50 ms"
      timeout 240 build/bin/gpuprof run --flight-recorder=30s "${FA[@]}" -o "$fl/trig/mnist-%p.gpuprof" -- \
        "${MN[@]}" --steps 4000 --step-times "$fl/trig.times" >"$fl/trig.job.txt" 2>&1 &
      for i in $(seq 1 600); do  # the job's registration, past step 1000
        p=$(ls "$fl/ctl" 2>/dev/null | sed -n 's/^\([0-9]*\)\.proc$/\1/p' | head -1)
        [ -n "$p" ] && [ "$(sed -n 's/^step=//p' "$fl/ctl/$p.proc" 2>/dev/null)" -ge 1000 ] 2>/dev/null && break
        sleep 0.1
      done
      echo "job pid ${p:-none}"; cat "$fl/ctl/$p.proc" 2>/dev/null
      build/bin/gpuprof trigger --steps 10 --wait "$p"; echo "trigger exit $?"
      wait; tail -3 "$fl/trig.job.txt"
      for c in "$fl"/trig/*-cap*.gpuprof; do
        python3 scripts/flight_check.py trigger "$c" --k 10 --step-times "$fl/trig.times"
      done
      echo "--- 3. --sample-steps 1/50 vs full capture: per-step GPU time of the sampled steps (within 2 %)"
      timeout 240 build/bin/gpuprof run --sample-steps 1/50 "${FA[@]}" -o "$fl/sample.gpuprof" -- "${MN[@]}" --steps 1000 2>&1 | grep RESULT
      timeout 240 build/bin/gpuprof run -o "$fl/full.gpuprof" -- "${MN[@]}" --steps 1000 2>&1 | grep RESULT
      python3 scripts/flight_check.py sample "$fl/sample.gpuprof" "$fl/full.gpuprof" --n 50
      ls -la "$fl" "$fl"/stall "$fl"/trig
      rm -f "$fl"/*.gpuprof "$fl"/*/*.gpuprof
    ) 2>&1 | tee "$RES/flight.txt" ;;
  hints-steps)  # issue #43 item 1: steps found online in a plain PyTorch loop (no NVTX): the stall rule armed,
                # gpuprof trigger --steps 10, --sample-steps 1/10 vs a full trace (the same loop with NVTX);
                # armed overhead with the finder on vs off (MNIST --no-nvtx, interleaved)
    log hints-steps
    ( hs=$RES/hints-steps; rm -rf "$hs"; mkdir -p "$hs/stall" "$hs/trig" "$hs/ctl"; chmod 700 "$hs/ctl"
      export GPUPROF_CONTROL_DIR=$hs/ctl
      G=build/bin/gpuprof; PL=(python3 examples/hints/plain_loop.py)
      echo "--- 1. plain loop, no NVTX, 2 s stall at step 300, armed --trigger 'step>5x': one capture of 301..305"
      timeout 150 $G run --flight-recorder=30s --gpu-metrics --trigger='step>5x' -o "$hs/stall/pl-%p.gpuprof" -- \
        "${PL[@]}" --steps 600 --stall-at 300 --stall-s 2 2>&1 | grep -a 'RESULT\|^gpuprof'
      for c in "$hs"/stall/*-cap*.gpuprof; do
        echo "capture $c"; $G dump --type nvtx_mark "$c" | grep -a 'gpuprof' | head -3
        python3 scripts/flight_check.py stall "$hs/stall" --stall-at 300
        $G steps "$c" | head -12; $G advise "$c" | head -20
      done
      echo "--- 2. gpuprof trigger --steps 10 on the running plain loop: exactly 10 steps"
      timeout 150 $G run --flight-recorder=30s -o "$hs/trig/pl-%p.gpuprof" -- "${PL[@]}" --steps 3000 \
        --step-times "$hs/trig.times" >"$hs/trig.job.txt" 2>&1 &
      for i in $(seq 1 600); do
        p=$(ls "$hs/ctl" 2>/dev/null | sed -n 's/^\([0-9]*\)\.proc$/\1/p' | head -1)
        [ -n "$p" ] && [ "$(sed -n 's/^step=//p' "$hs/ctl/$p.proc" 2>/dev/null)" -ge 500 ] 2>/dev/null && break
        sleep 0.1
      done
      echo "job pid ${p:-none}"; cat "$hs/ctl/$p.proc" 2>/dev/null
      $G trigger --steps 10 --wait "$p"; echo "trigger exit $?"
      wait; grep -a 'RESULT\|^gpuprof' "$hs/trig.job.txt"
      for c in "$hs"/trig/*-cap*.gpuprof; do
        python3 scripts/flight_check.py trigger "$c" --k 10 --step-times "$hs/trig.times"
        $G steps "$c" | head -12
      done
      echo "--- 3. --sample-steps 1/10 (found steps) vs a full trace of the same loop with NVTX 'step i': per-step GPU time"
      timeout 150 $G run --sample-steps 1/10 -o "$hs/sample.gpuprof" -- "${PL[@]}" --steps 600 2>&1 | grep -a 'RESULT\|^gpuprof'
      timeout 150 $G run -o "$hs/full.gpuprof" -- "${PL[@]}" --steps 600 --nvtx 2>&1 | grep -a 'RESULT\|^gpuprof'
      $G dump --type nvtx_mark "$hs/sample.gpuprof" | grep -a 'steps found'
      python3 scripts/flight_check.py sample "$hs/sample.gpuprof" "$hs/full.gpuprof" --n 10
      echo "offline on the full trace: NVTX vs trace method (the online boundary is the input copy)"
      $G steps --method nvtx "$hs/full.gpuprof" | head -8; $G steps --method trace "$hs/full.gpuprof" | head -8
      echo "--- 4. armed MNIST --no-nvtx, finder on (auto) vs off, and bare: 2 interleaved reps (step_ms_median)"
      for r in 1 2; do
        for cfg in bare off auto; do
          case $cfg in
            bare) out=$(timeout 120 python3 examples/train_mnist.py --no-nvtx --steps 600 --warmup 20 2>/dev/null | grep RESULT) ;;
            *) out=$(timeout 120 $G run --flight-recorder=30s --steps=$cfg -o "$hs/mn-%p.gpuprof" -- \
                 python3 examples/train_mnist.py --no-nvtx --steps 600 --warmup 20 2>&1 | grep -a 'RESULT\|^gpuprof: steps') ;;
          esac
          echo "rep $r $cfg: $out"
        done
      done
      ls -la "$hs" "$hs"/stall "$hs"/trig
      rm -f "$hs"/*.gpuprof "$hs"/*/*.gpuprof
    ) 2>&1 | tee "$RES/hints-steps.txt" ;;
  hints-drop)  # issue #43 item 1 (rules on time): drop>P%/W on NVML busy in a plain loop with no step structure to rely on
               # (--steps=off) and with found steps; the last found step as 'step N (partial)'; the finder's callbacks
               # narrowed at once with --flight-api=capture (a stall still captured)
    log hints-drop
    ( hd=$RES/hints-drop; rm -rf "$hd"; mkdir -p "$hd"
      G=build/bin/gpuprof; PL=(python3 examples/hints/plain_loop.py)
      for st in off auto; do
        echo "--- drop>50%/1s, --steps=$st: 8 s host stall at step 4000 of 6000 (the GPU idles): one capture by the rule"
        timeout 300 $G run --flight-recorder=30s --gpu-metrics --steps=$st --trigger='drop>50%/1s' \
          -o "$hd/drop-$st-%p.gpuprof" -- "${PL[@]}" --steps 6000 --stall-at 4000 --stall-s 8 2>&1 | grep -a 'RESULT\|^gpuprof'
        for c in "$hd"/drop-$st-*-cap*.gpuprof; do $G dump --type nvtx_mark "$c" | grep -a 'gpuprof capture'; done
      done
      echo "--- steady (no stall): no capture expected"
      timeout 300 $G run --flight-recorder=30s --gpu-metrics --trigger='drop>50%/1s' -o "$hd/steady-%p.gpuprof" -- \
        "${PL[@]}" --steps 6000 2>&1 | grep -a 'RESULT\|^gpuprof'; ls "$hd" | grep -c 'steady.*-cap' || true
      echo "--- the last found step, partial (sample-steps trace)"
      timeout 150 $G run --sample-steps 1/10 -o "$hd/sample.gpuprof" -- "${PL[@]}" --steps 600 2>&1 | grep -a '^gpuprof'
      $G dump --type nvtx_range "$hd/sample.gpuprof" | grep -a 'partial' | head -2
      echo "--- --flight-api=capture, step>5x, 2 s stall at 300: a capture of 301..305 (callbacks narrowed after learning)"
      timeout 150 $G run --flight-recorder=30s --flight-api=capture --trigger='step>5x' -o "$hd/cap-%p.gpuprof" -- \
        "${PL[@]}" --steps 600 --stall-at 300 --stall-s 2 2>&1 | grep -a 'RESULT\|^gpuprof'
      python3 scripts/flight_check.py stall "$hd" --stall-at 300
      rm -f "$hd"/*.gpuprof
    ) 2>&1 | tee "$RES/hints-drop.txt" ;;
  hints-cost)  # issue 43: what the step finder costs an armed job: MNIST --no-nvtx (600 steps, 20 warm-up) bare, armed with
               # --steps=off and armed with --steps=auto (the finder), HINTS_REPS interleaved repetitions (default 6), the order
               # rotating; each armed run's step_ms_median over the same repetition's bare run, then the median of those ratios
    log hints-cost
    ( hc=$RES/hints-cost; mkdir -p "$hc"; : >"$hc/runs.txt"
      cfgs=(bare off auto)
      for r in $(seq 1 "${HINTS_REPS:-6}"); do
        for k in 0 1 2; do
          cfg=${cfgs[$(( (k + r) % 3 ))]}
          case $cfg in
            bare) out=$(timeout 120 python3 examples/train_mnist.py --no-nvtx --steps 600 --warmup 20 2>/dev/null | grep RESULT) ;;
            *) out=$(timeout 120 build/bin/gpuprof run --flight-recorder=30s --steps=$cfg -o "$hc/mn-%p.gpuprof" -- \
                 python3 examples/train_mnist.py --no-nvtx --steps 600 --warmup 20 2>/dev/null | grep RESULT) ;;
          esac
          echo "$r $cfg $(echo "$out" | sed -n 's/.*step_ms_median=\([0-9.]*\).*/\1/p')" | tee -a "$hc/runs.txt"
        done
      done
      python3 - "$hc/runs.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3:
        runs.setdefault(int(p[0]), {})[p[1]] = float(p[2])
for cfg in ("off", "auto"):
    r = [v[cfg] / v["bare"] for v in runs.values() if cfg in v and "bare" in v]
    if r:
        print("armed --steps=%-4s / bare: median %.3fx (min %.3f, max %.3f, %d reps)" % (cfg, statistics.median(r), min(r), max(r), len(r)))
r = [v["auto"] / v["off"] for v in runs.values() if "auto" in v and "off" in v]
if r:
    print("finder on / off (armed): median %.3fx (min %.3f, max %.3f)" % (statistics.median(r), min(r), max(r)))
PY
      rm -f "$hc"/*.gpuprof
    ) 2>&1 | tee "$RES/hints-cost.txt" ;;
  hints-thirdparty)  # the jobs of examples/thirdparty with no hint: each traced (`gpuprof run`), its steps by the
               # trace method (`gpuprof steps`) against the job's own count, then with --sample-steps 1/5 the
               # shim's found steps (the trace's mark and `gpuprof:step N` ranges); docs/STEPS.md's tables.
               # HT_JOBS: the jobs' names to run (default: all)
    log hints-thirdparty
    ( R=$RES/thirdparty; rm -rf "$R"; mkdir -p "$R"; G=build/bin/gpuprof
      for spec in "jax:jax_flax.py --steps 200" "compile:compile_graphs.py --steps 200" "timm:timm_model.py --steps 60" \
                  "loader:dataloader_workers.py --steps 80" "lightning:lightning_fit.py --steps 200" \
                  "hf:hf_trainer.py --steps 200" "hfpad:hf_trainer.py --pad-varies --steps 200"; do
        n=${spec%%:*}; set -- ${spec#*:}; s=$1; shift
        case " ${HT_JOBS:-$n} " in *" $n "*) ;; *) continue ;; esac
        echo "### $n: $s $*"
        XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 90 $G run -o "$R/$n-%p.gpuprof" -- python3 "examples/thirdparty/$s" "$@" 2>&1 |
          grep -a 'RESULT\|^gpuprof' | tail -3
        for f in "$R/$n"-[0-9]*.gpuprof; do $G steps "$f" 2>&1 | sed -n 3,11p | grep -v '^ *$' | cut -c1-240; done
        XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 90 $G run --sample-steps 1/5 -o "$R/$n-s-%p.gpuprof" -- \
          python3 "examples/thirdparty/$s" "$@" 2>&1 | grep -a '^gpuprof: step' | cut -c1-240
        for f in "$R/$n"-s-*.gpuprof; do
          $G dump --type nvtx_mark "$f" | grep -a 'steps found' | cut -c1-240; $G steps "$f" | sed -n 6p | cut -c1-120
        done
      done
      rm -f "$R"/*.gpuprof ) 2>&1 | tee "$RES/hints-thirdparty.txt" ;;
  hints)       # issue 43: steps, the step>5x capture, `gpuprof trigger --steps 10` and --sample-steps on MNIST (--no-nvtx),
               # an HF Trainer and a Lightning fit with no NVTX, and the same with NVTX steps (tests/gpu/hints.sh)
    log hints; timeout 560 bash tests/gpu/hints.sh 2>&1 | tee "$RES/hints.txt" ;;
  coexist)     # issue 42: the job's own torch.profiler beside gpuprof (HF TrainerCallback over steps 10..15,
               # Lightning profiler="pytorch"), bare / gpuprof run / without the profiler / --flight-recorder with
               # triggers before, in and after the window; then nsys profile around gpuprof run (tests/gpu/coexist_check.sh)
    log coexist; timeout 420 bash tests/gpu/coexist_check.sh 2>&1 | tee "$RES/coexist.txt" ;;
  advise)      # issues 22, 38: each job of examples/pathologies and its fix, bare (ADVISE_REPS pairs, interleaved,
                # default 3) and under gpuprof run (the bad one also with --stacks); advise must name the cause first
                # (with stacks: its file:line), its estimated saving within 30 % of the measured bare one (median of
                # the pairs), nothing above low for the healthy job (tests/gpu/advise_check.py; the table goes into
                # docs/ADVISE.md).  ADVISE_JOBS=a,b runs a subset: 11 jobs take three calls of under 8 minutes;
                # ADVISE_STEPS=N the same steps for every job (default: each job's own, advise_check.py JOB_STEPS);
                # ADVISE_NO_NVTX=1 the jobs with no NVTX range (advise on the steps it finds in the trace).
    log advise
    timeout 580 python3 tests/gpu/advise_check.py --gpuprof build/bin/gpuprof --out "$RES/advise" \
      --steps "${ADVISE_STEPS:-0}" --warmup "${ADVISE_WARMUP:-5}" --budget-s "${ADVISE_BUDGET_S:-450}" \
      --reps "${ADVISE_REPS:-3}" ${ADVISE_JOBS:+--jobs "$ADVISE_JOBS"} ${ADVISE_NO_NVTX:+--no-nvtx} \
      2>&1 | tee "$RES/advise.txt" ;;
  memory)      # issue 39: the memory view (stats --report memory_steps) and advise's out-of-memory rule on a
              # leaking job (its kept.append line named: stacks at allocation calls), an OOM job (the alloc_fail
              # record's request and NVML free/total, the site in oom.py; armed mode's default oom capture, the
              # job's exit and message unchanged, its live memory by site from the shim's live table against
              # torch's allocated + reserved-unallocated in its OOM message: part oom-armed), HF Trainer and torch.compile against
              # torch.cuda.memory_reserved() per step, and the cost of --activity=default,memory and of --stacks
              # on MNIST and ResNet-50 (tests/gpu/memory_check.py; MEMORY_PARTS picks parts)
    log memory
    timeout 560 python3 tests/gpu/memory_check.py --gpuprof build/bin/gpuprof --out "$RES/memory" \
      --reps "${MEMORY_REPS:-3}" ${MEMORY_PARTS:+--parts "$MEMORY_PARTS"} 2>&1 | tee "$RES/memory.txt" ;;
  matrix)     log matrix; BUDGET_S=${MATRIX_BUDGET_S:-480} timeout $(( ${MATRIX_BUDGET_S:-480} + 80 )) bash scripts/matrix.sh 2>&1 | tee "$RES/matrix.txt" ;;  # issue #18: options x third-party jobs
  bench)      log bench;      timeout 560 bash bench/overhead/run.sh 2>&1 | tee "$RES/bench.txt" ;;
  crosscheck) log crosscheck; timeout 400 python3 tests/gpu/crosscheck.py --out "$RES" 2>&1 | tee "$RES/crosscheck.txt" ;;
  steps)      # issue 20: MNIST, ResNet-50, transformer each traced with NVTX step ranges and with --no-nvtx,
              # and run under torch.profiler --profiler-steps: step detection without NVTX finds the same
              # steps (boundary offsets printed), per-step GPU time = ProfilerStep#'s within 2 %; prints the
              # tables for docs/STEPS.md (also in $RES/steps/report.md; gpuprof stats JSON per run kept there)
    log steps
    timeout 560 python3 tests/gpu/steps_check.py --out "$RES" ${STEPS_WORKLOADS:+--workloads $STEPS_WORKLOADS} \
      2>&1 | tee "$RES/steps.txt" ;;
  layers-bwd) # issue 43 item 3: backward kernels per layer with gpuprof run --layers (HF GPT-2, timm
              # resnet18) against the same jobs under emit_nvtx; the loss unchanged (tests/gpu/layers_check.py)
    log layers-bwd
    for j in gpt2 resnet18; do   # the module alone, per autograd node, and its CPU cost without the tracer
      echo "--- $j plain"; timeout 120 python3 tests/gpu/layers_nodes_check.py $j 2>&1 | grep -a '^LOSSES\|^STEP_MS'
      echo "--- $j --layers' module"; PYTHONPATH=$PWD/build/lib/gpuprof-python GPUPROF_LAYERS=1 \
        timeout 120 python3 tests/gpu/layers_nodes_check.py $j 2>&1 | grep -av '^\[transformers\]'
    done 2>&1 | tee "$RES/layers-nodes.txt"
    timeout 300 python3 tests/gpu/layers_check.py --gpuprof build/bin/gpuprof --out "$RES" \
      ${LAYERS_JOBS:+--jobs "$LAYERS_JOBS"} 2>&1 | tee "$RES/layers-bwd.txt" ;;
  layers-cost) # issue 43 item 3: what gpuprof run --layers costs, MNIST and ResNet-50, interleaved reps
    log layers-cost
    RESULTS_DIR=$RES/layerscost WORKLOADS="mnist resnet50" MNIST_REPS=${MNIST_REPS:-4} HEAVY_REPS=${HEAVY_REPS:-2} \
      CONFIGS="${LAYERS_COST_CONFIGS:-bare gpuprof gpuprof-layers gpuprof-stacks gpuprof-stacks-layers}" \
      BUDGET_S=${LAYERS_COST_BUDGET_S:-420} timeout $(( ${LAYERS_COST_BUDGET_S:-420} + 60 )) bash bench/overhead/run.sh 2>&1 \
      | tee "$RES/layers-cost.txt"
    cat "$RES/layerscost/bench/summary.md" 2>/dev/null | tee -a "$RES/layers-cost.txt" ;;
  sites)      # issue 24: HF Trainer GPT-2, timm resnet18, torch.compile reduce-overhead traced with --stacks
              # (GPUPROF_STACKS=all) and separately under torch.profiler(with_modules): per-layer kernel time
              # and count vs the profiler's module hierarchy, layer self times = all kernel time; the tables
              # for docs/STACKS.md (also in $RES/sites/report.md)
    log sites
    timeout 400 python3 tests/gpu/sites_check.py --gpuprof build/bin/gpuprof --out "$RES" \
      ${SITES_JOBS:+--jobs "$SITES_JOBS"} ${SITES_EMIT_NVTX:+--emit-nvtx} 2>&1 | tee "$RES/sites.txt" ;;
  polish)     # issue 21 on real CUDA: no trace for a process that never made a CUDA context-creating call,
              # gpuprof run's last line after os._exit() and SIGKILL names the file, and the trace has the kernels
    log polish
    ( G=build/bin/gpuprof; P=$RES/polish; rm -rf "$P"; mkdir -p "$P"
      echo "--- 1. torch.cuda.device_count() only: expect no trace file"
      $G run -o "$P/count-%p.gpuprof" -- python3 -c "import torch;print('RESULT devices', torch.cuda.device_count())"
      echo "rc=$? files: $(ls "$P" | grep -c '^count-')"
      echo "--- 2. 200 kernels then os._exit(0): expect the last line to name the (truncated) file, 200 kernels in it"
      $G run -o "$P/exit-%p.gpuprof" -- python3 -c "
import torch, os
x = torch.ones(1024, device='cuda')
for _ in range(200): x.add_(1)
torch.cuda.synchronize(); print('RESULT', x[0].item(), flush=True); os._exit(0)"
      echo "rc=$?"; for f in "$P"/exit-*.gpuprof; do ls -la "$f"; $G info "$f" | grep -i 'kernel\|integrity\|truncat'; done
      echo "--- 3. SIGKILL mid-run: expect 'killed by signal 9' and the file's name, not the pattern"
      $G run -o "$P/kill-%p.gpuprof" -- python3 -c "
import torch, os, signal
x = torch.ones(1024, device='cuda')
for _ in range(100): x.add_(1)
torch.cuda.synchronize(); os.kill(os.getpid(), signal.SIGKILL)"
      echo "rc=$?"; ls -la "$P"/kill-* 2>&1
      echo "--- 4. Lightning fit (orted child) and torch.compile (compile workers): one trace each, from the CUDA process"
      $G run -o "$P/lf-%p.gpuprof" -- python3 examples/thirdparty/lightning_fit.py 2>&1 | grep -a 'RESULT\|^gpuprof'
      echo "lightning files: $(ls "$P" | grep -c '^lf-')"
      $G run -o "$P/cg-%p.gpuprof" -- python3 examples/thirdparty/compile_graphs.py 2>&1 | grep -a 'RESULT\|^gpuprof'
      echo "compile files: $(ls "$P" | grep -c '^cg-')"
      for f in "$P"/lf-*.gpuprof "$P"/cg-*.gpuprof; do $G info "$f" | grep -i 'command\|kernel' | head -3; done
      echo "--- 5. info on a fresh MNIST lists devices; sync dump has no 4294967295 stream"
      $G run --activity=default,sync -o "$P/mn.gpuprof" -- python3 examples/train_mnist.py --steps 30 --warmup 5 2>&1 | grep -a '^gpuprof\|RESULT'
      $G info "$P/mn.gpuprof" | grep -i -A3 'device'
      echo "sync records: $($G dump --type sync "$P/mn.gpuprof" | wc -l), with 4294967295: $($G dump --type sync "$P/mn.gpuprof" | grep -c 4294967295)"
      $G stats --report kernels,memops "$P/mn.gpuprof" | head -30
      rm -f "$P"/*.gpuprof
    ) 2>&1 | tee "$RES/polish.txt" ;;
  widths)     # issue #40: every command that prints tables fits 120 and 80 columns on fresh real traces (a
    # --stacks --layers MNIST run, its diff against the committed H200 one); one WIDTHS PASS|FAIL line each
    log widths
    ( t=$RES/w-mnist.gpuprof
      timeout 120 build/bin/gpuprof run --stacks --layers -o "$t" -- python3 examples/train_mnist.py --steps 30 --warmup 5
      all=$(build/bin/gpuprof help --words stats --report | tr '\n' ,)
      for w in 120 80; do
        for args in "info $t" "stats $t" "stats --report ${all%,} $t" "steps --per-step $t" "memory $t" "advise --all $t" \
                    "diff $t examples/mnist-h200.gpuprof"; do
          COLUMNS=$w build/bin/gpuprof $args >"$RES/w.out" 2>"$RES/w.err"
          awk -v w=$w -v a="$args" 'length($0) > w { n++; if (length($0) > m) m = length($0) }
            END { printf "WIDTHS %s width %d: %s: %d lines longer (longest %d)\n", n ? "FAIL" : "PASS", w, a, n, m }' "$RES/w.out"
        done
      done
      COLUMNS=120 build/bin/gpuprof stats --report layers,launch_sites "$t" | head -40
      COLUMNS=120 build/bin/gpuprof diff "$t" examples/mnist-h200.gpuprof | head -60
    ) 2>&1 | tee "$RES/widths.txt"
    ;;
  csv)        # issue #41's new export format: a fresh --stacks MNIST trace exported as CSV, every table
    # cell by cell against its SQLite export (tests/tools/test_csv.py, 'ok' or FAIL lines); a 10-step
    # window of a generated CSV_N-event trace (default 1e8, seed 7) timed as CSV WINDOW, beside Perfetto's
    log csv
    ( t=$RES/csv-mnist.gpuprof T=$RES/big.gpuprof
      timeout 120 build/bin/gpuprof run --stacks -o "$t" -- python3 examples/train_mnist.py --steps 30 --warmup 5
      timeout 120 python3 tests/tools/test_csv.py build "$t"
      timeout 150 build/bench/gen_bigtrace --seed 7 "${CSV_N:-1e8}" "$T" >/dev/null
      for f in csv perfetto; do
        s=$EPOCHREALTIME
        timeout 60 build/bin/gpuprof export --threads 16 --format $f --steps 20000:20010 "$T" -o "$RES/win-$f"
        rc=$? e=$EPOCHREALTIME
        awk -v f=$f -v s="$s" -v e="$e" -v rc=$rc 'BEGIN { printf "CSV WINDOW %s: %.2f s, exit %d\n", f, e - s, rc }'
      done
      wc -l "$RES/win-csv/CUPTI_ACTIVITY_KIND_KERNEL.csv"; rm -rf "$T" "$RES/win-csv" "$RES/win-perfetto"
    ) 2>&1 | tee "$RES/csv.txt"
    ;;
  stacktable) # issue #41 (branch lstack): the reports that read call stacks share the stats context's one
    # table (ctx->stacks); a fresh MNIST trace with stacks and memory records, launch_sites, layers,
    # memory_steps (table and JSON), export folded (both rules) at --threads 1 and 16: this build against
    # OLD_GPUPROF's, 'STACKTABLE SAME' or 'STACKTABLE DIFFER' a line
    log stacktable
    ( t=$RES/st-mnist.gpuprof G=build/bin/gpuprof O=${OLD_GPUPROF:-build/bin/gpuprof}
      timeout 120 $G run --stacks --activity=default,memory -o "$t" -- python3 examples/train_mnist.py --steps 30 --warmup 5
      for c in "stats --report launch_sites,layers,memory_steps" "stats --format json --report launch_sites,layers,memory_steps" \
               "stats --report launch_sites --site inner" "export --format folded -o -" "export --format folded --site layer -o -"; do
        for n in 1 16; do
          a=$($G $c --threads $n "$t" 2>&1 | md5sum) b=$($O $c --threads $n "$t" 2>&1 | md5sum)
          [ "$a" = "$b" ] && echo "STACKTABLE SAME: $c --threads $n" || echo "STACKTABLE DIFFER: $c --threads $n"
        done
      done; rm -f "$t"
    ) 2>&1 | tee "$RES/stacktable.txt" ;;
  *) echo "unknown phase $ph" ;;
  esac
  cp "$RES"/*.txt "$OUT"/ 2>/dev/null
  tar -C /tmp -czf "$OUT/results.tgz" gpuprof-results 2>/dev/null
done
# $OUT brings back at most 8 files: the logs plain, everything else in one tarball.
cp "$RES"/*.txt "$OUT"/ 2>/dev/null
tar -C /tmp -czf "$OUT/results.tgz" gpuprof-results 2>/dev/null
ls -la "$OUT"
