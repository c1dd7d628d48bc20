#!/bin/sh
# Exec'd children: followed by default (LD_PRELOAD kept, the CUDA/NVTX
# injection variables point at us); GPUPROF_FOLLOW_EXEC=0 takes libgpuprof.so
# out of LD_PRELOAD (other entries kept) so children are not traced.
. "$(dirname "$0")/lib.sh"
ENVBIN=$(command -v env)
other=/lib/x86_64-linux-gnu/libm.so.6
[ -e $other ] || other=$(ls /lib*/libm.so.6 /usr/lib*/libm.so.6 2>/dev/null | head -1)
GPUPROF_QUIET=1 GPUPROF_OUTPUT=$T/t-%p.gpuprof LD_PRELOAD="$SHIM:$other" "$ENVBIN" >"$T/follow.env" 2>"$T/e1"
grep -q "^LD_PRELOAD=$SHIM:$other\$" "$T/follow.env" || { fail "follow: LD_PRELOAD changed:"; grep LD_PRELOAD "$T/follow.env"; }
grep -q "^CUDA_INJECTION64_PATH=$SHIM\$" "$T/follow.env" || fail "follow: CUDA_INJECTION64_PATH not ours"
grep -q "^NVTX_INJECTION64_PATH=$SHIM\$" "$T/follow.env" || fail "follow: NVTX_INJECTION64_PATH not ours"
ls "$T"/t-* >/dev/null 2>&1 && fail "a process that never used CUDA/NVTX wrote a trace"
GPUPROF_QUIET=1 GPUPROF_FOLLOW_EXEC=0 GPUPROF_CUPTI=$FAKE_CUPTI GPUPROF_OUTPUT=$T/t-%p.gpuprof \
  LD_PRELOAD="$SHIM:$other" "$ENVBIN" >"$T/nofollow.env" 2>"$T/e2"
grep -q "^LD_PRELOAD=$other\$" "$T/nofollow.env" || { fail "no-follow: LD_PRELOAD not stripped:"; grep LD_PRELOAD "$T/nofollow.env"; }
grep -q "^CUDA_INJECTION64_PATH=" "$T/nofollow.env" && fail "no-follow: CUDA_INJECTION64_PATH exported"
GPUPROF_QUIET=1 GPUPROF_FOLLOW_EXEC=0 LD_PRELOAD="$SHIM" "$ENVBIN" >"$T/only.env" 2>"$T/e3"
grep -q "^LD_PRELOAD=" "$T/only.env" && fail "no-follow: LD_PRELOAD with only us not removed"
[ "$(count_lines "$T/e1")" -eq 0 ] && [ "$(count_lines "$T/e2")" -eq 0 ] || { fail "stderr:"; cat "$T/e1" "$T/e2"; }
finish
