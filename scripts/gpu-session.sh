#!/usr/bin/env bash
# One device call: everything we run on the GPU machine, results under $OUT.
# Usage (on the GPU machine, repo root): scripts/gpu-session.sh [phase...]
#   phases: env smoke suite bench crosscheck  (default: env smoke suite)
# The build is made on the dev machine (glibc 2.36) and carried as .carry/build;
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
for ph in $phases; do
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
      build/bin/gpuprof stats "$RES/smoke-mnist.gpuprof" | head -80
    ) 2>&1 | tee "$RES/smoke.txt"
    ;;
  suite)      log suite;      timeout 400 bash tests/gpu/run.sh 2>&1 | tee "$RES/suite.txt" ;;
  bench)      log bench;      timeout 560 bash bench/overhead/run.sh 2>&1 | tee "$RES/bench.txt" ;;
  crosscheck) log crosscheck; timeout 400 python3 tests/gpu/crosscheck.py --out "$RES" 2>&1 | tee "$RES/crosscheck.txt" ;;
  *) echo "unknown phase $ph" ;;
  esac
done
# $OUT brings back at most 8 files: the logs plain, everything else in one tarball.
cp "$RES"/*.txt "$OUT"/ 2>/dev/null
tar -C /tmp -czf "$OUT/results.tgz" gpuprof-results 2>/dev/null
ls -la "$OUT"
