#!/bin/sh
# Installs the build dependencies gpuprof needs on Debian/Ubuntu, or prints the
# exact command when it cannot (not root).  Idempotent; quiet when all is there.
set -eu
need=""
have_hdr() { echo "#include <$1>" | ${CC:-cc} -E -x c - >/dev/null 2>&1; }
have_hdr zstd.h       || need="$need libzstd-dev"
have_hdr libunwind.h  || need="$need libunwind-dev"
have_hdr sqlite3.h    || need="$need libsqlite3-dev"
have_hdr zlib.h       || need="$need zlib1g-dev"
command -v python3 >/dev/null 2>&1 || need="$need python3"
command -v sqlite3 >/dev/null 2>&1 || need="$need sqlite3"
# call-stack tests: nm/readelf resolve frames; the CPython headers check the
# frame layout the shim reads (tests/shim/test_py_offsets.sh)
command -v readelf >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 || need="$need binutils"
# `make format-check` (scripts/format-check.sh): clang-format 14 exactly
command -v clang-format-14 >/dev/null 2>&1 || clang-format --version 2>/dev/null | grep -q 'version 14\.' ||
  need="$need clang-format-14"
# the man pages' test renders them (man -l, groff -man -ww); the completion
# test loads the zsh completion where zsh is (tests/tools/test_cli_help.sh,
# test_completion.sh)
command -v man >/dev/null 2>&1 || need="$need man-db"
command -v groff >/dev/null 2>&1 || need="$need groff-base"
command -v zsh >/dev/null 2>&1 || need="$need zsh"
pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || true)
[ -n "$pyinc" ] && [ -f "$pyinc/Python.h" ] || need="$need python3-dev"
[ -z "$need" ] && exit 0
cmd="apt-get install -y --no-install-recommends$need"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "gpuprof setup: installing$need" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive $cmd -qq) >&2
else
  echo "gpuprof setup: missing$need; run as root: apt-get update && $cmd" >&2
  exit 1
fi
