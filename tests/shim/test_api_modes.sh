#!/bin/sh
# GPUPROF_API=all|none, GPUPROF_API_MODE=activity|callback, GPUPROF_API_DRIVER,
# GPUPROF_ACTIVITY, and the
# clock fallback when CUPTI refuses the timestamp callback.
. "$(dirname "$0")/lib.sh"
summ() { # env... -> summary of the parent trace in $T/s
  rm -f "$T"/trace-*
  env "$@" GPUPROF_QUIET=1 GPUPROF_OUTPUT="$T/trace-%p.gpuprof" GPUPROF_CUPTI="$FAKE_CUPTI" \
    LD_PRELOAD="$SHIM" timeout 60 "$WORKLOAD" >/dev/null 2>"$T/e" || fail "exit status with $*"
  best=""; bn=0
  for f in "$T"/trace-*.gpuprof; do
    n=$(stat -c %s "$f"); [ "$n" -gt "$bn" ] && { bn=$n; best=$f; }
  done
  "$CHECK" summary "$best" >"$T/s" || fail "summary with $*"
}
val() { awk -v k="$1" '$1==k {print $2}' "$T/s"; }
summ GPUPROF_API=all
[ "$(val api.cuLaunchKernel)" = 83 ] || fail "api=all: cuLaunchKernel $(val api.cuLaunchKernel), want 83"
[ "$(val api.cudaGetDeviceCount)" = 1 ] || fail "api=all: cudaGetDeviceCount missing"
[ "$(val api.cudaLaunchKernel)" = 83 ] || fail "api=all: cudaLaunchKernel $(val api.cudaLaunchKernel)"
summ GPUPROF_API=none
[ -z "$(val api)" ] || fail "api=none: $(val api) API records"
[ "$(val kernel)" = 83 ] || fail "api=none: kernels $(val kernel)"
# activity mode: the default set in both domains; the driver calls the fake
# runtime makes underneath its calls are dropped when decoding, the direct
# cuCtxSynchronize stays (as in callback mode)
summ GPUPROF_API_MODE=activity
[ "$(val api.cudaLaunchKernel)" = 83 ] || fail "activity mode: cudaLaunchKernel $(val api.cudaLaunchKernel)"
[ "$(val api_domain.runtime)" = 104 ] || fail "activity mode: $(val api_domain.runtime) runtime records, want 104"
[ "$(val api_domain.driver)" = 1 ] && [ "$(val api.cuCtxSynchronize)" = 1 ] \
  || fail "activity mode: $(val api_domain.driver) driver records, want only the direct cuCtxSynchronize"
summ GPUPROF_API_MODE=activity GPUPROF_API_DRIVER=0
[ "$(val api_domain.runtime)" = 104 ] && [ "$(val api_domain.driver)" = 0 ] \
  || fail "activity mode, API_DRIVER=0: runtime $(val api_domain.runtime) driver $(val api_domain.driver), want 104/0"
# callback mode (explicit), and without the driver domain
summ GPUPROF_API_MODE=callback
[ "$(val api_domain.runtime)" = 104 ] && [ "$(val api_domain.driver)" = 1 ] \
  || fail "callback mode: runtime $(val api_domain.runtime) driver $(val api_domain.driver), want 104/1"
summ GPUPROF_API_DRIVER=0
[ "$(val api_domain.runtime)" = 104 ] && [ "$(val api_domain.driver)" = 0 ] \
  || fail "API_DRIVER=0: runtime $(val api_domain.runtime) driver $(val api_domain.driver), want 104/0"
summ GPUPROF_API=all GPUPROF_API_DRIVER=0
[ "$(val api_domain.driver)" = 0 ] && [ "$(val api.cudaGetDeviceCount)" = 1 ] \
  || fail "api=all, API_DRIVER=0: driver $(val api_domain.driver) (want 0), cudaGetDeviceCount $(val api.cudaGetDeviceCount)"
summ GPUPROF_ACTIVITY=kernel
[ "$(val kernel)" = 83 ] && [ -z "$(val memcpy)" ] && [ -z "$(val memset)" ] || fail "activity=kernel: $(tr '\n' ' ' <"$T/s")"
summ FAKE_CUPTI_NO_TSCB=1
[ "$(val clock_id)" = 3 ] || fail "no timestamp callback: clock_id $(val clock_id), want 3 (CUPTI)"
[ "$(val kernel)" = 83 ] || fail "no timestamp callback: kernels $(val kernel)"
finish
