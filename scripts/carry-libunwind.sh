#!/bin/sh
# carry-libunwind.sh DIR — copies this machine's libunwind.so.8 (the library
# itself, not the symlink) into DIR, next to a libgpuprof.so that will run on
# a machine without libunwind (the GPU image): with GPUPROF_STACKS the shim
# dlopens DIR/libunwind.so.8 first.  Any libunwind-* library it needs
# (readelf -d NEEDED) is copied too; the others (libc, liblzma.so.5) are
# expected on the target and listed.  Without it there the shim falls back to
# glibc's backtrace() and says so on one gpuprof: line.
#   scripts/carry-libunwind.sh .carry/build/lib
set -eu
DIR=${1:?usage: $0 DIR}
SRC=${LIBUNWIND:-/usr/lib/x86_64-linux-gnu/libunwind.so.8}
[ -e "$SRC" ] || { echo "carry-libunwind: $SRC not found (apt-get install libunwind8, or set LIBUNWIND=)" >&2; exit 1; }
[ -d "$DIR" ] || { echo "carry-libunwind: $DIR is not a directory" >&2; exit 1; }
command -v readelf >/dev/null || { echo "carry-libunwind: readelf (binutils) needed" >&2; exit 1; }
cp -L "$SRC" "$DIR/libunwind.so.8"
echo "copied $(readlink -f "$SRC") -> $DIR/libunwind.so.8"
srcdir=$(dirname "$(readlink -f "$SRC")")
for lib in $(readelf -d "$SRC" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case $lib in
  libunwind*)
    cp -L "$srcdir/$lib" "$DIR/$lib"
    echo "copied $srcdir/$lib -> $DIR/$lib" ;;
  *) echo "needs $lib on the target (not copied)" ;;
  esac
done
