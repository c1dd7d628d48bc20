#!/bin/sh
# The CPython frame layout the shim reads (shim/features/gps_py_layout.h)
# against the real headers: tests/shim/py_offsets.c compiled for each
# interpreter given in GPUPROF_TEST_PYTHONS (space-separated; default:
# python3) whose headers are installed.  Skips, saying why, when no CPython 3.11-3.13 headers are found.
set -u
B=${1:?usage: $0 BUILD_DIR}
T=$(mktemp -d /tmp/gpuprof-pyoff.XXXXXX)
trap 'rm -rf "$T"' EXIT
ran=0; failed=0
for py in ${GPUPROF_TEST_PYTHONS:-python3}; do
  inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null) || continue
  [ -f "$inc/Python.h" ] && [ -f "$inc/internal/pycore_frame.h" ] || { echo "$py: no headers in $inc"; continue; }
  ${CC:-cc} -std=gnu11 -I"$inc" -I"$inc/internal" -Ishim -o "$T/off" tests/shim/py_offsets.c 2>"$T/cc.err" \
    || { echo "FAIL: py_offsets.c does not compile for $py:"; cat "$T/cc.err"; failed=1; continue; }
  "$T/off"; rc=$?
  case $rc in 0) ran=$((ran+1));; 77) ;; *) failed=1;; esac
done
[ $failed -eq 0 ] || exit 1
[ $ran -gt 0 ] || { echo "skip: no CPython 3.11-3.13 headers found (GPUPROF_TEST_PYTHONS='${GPUPROF_TEST_PYTHONS:-python3}')"; exit 77; }
echo ok
