#!/bin/sh
# issue #40: `make install PREFIX=... DESTDIR=...` puts a working gpuprof
# there: the installed binary traces the fake CUDA job with the installed
# shim (found next to the binary, not in the build tree), its man pages
# render, its completions are there; `make uninstall` removes every file.
. "$(dirname "$0")/lib.sh"
# make as a user would call it, not as the make that runs the tests
MK="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s -C $ROOT B=${B#"$ROOT"/}"
P=/opt/gp
S=$T/stage
$MK install PREFIX=$P DESTDIR="$S" >"$T/inst.log" 2>&1 || fail "make install: $(tail -n 5 "$T/inst.log")"
I=$S$P
for f in bin/gpuprof lib/libgpuprof.so lib/gpuprof-python/sitecustomize.py share/man/man1/gpuprof.1 \
	share/man/man1/gpuprof-stats.1 share/man/man1/gpuprof-steps.1 share/bash-completion/completions/gpuprof \
	share/zsh/site-functions/_gpuprof share/doc/gpuprof/README.md share/doc/gpuprof/CLI.md; do
	[ -f "$I/$f" ] || fail "not installed: $f"
done
# moved elsewhere after the install, as a package manager's DESTDIR is: the
# shim is found relative to the binary
mv "$I" "$T/moved"
I=$T/moved
unset GPUPROF_LIB
GPUPROF_CUPTI=$FAKE_CUPTI "$I/bin/gpuprof" run -o "$T/inst-%p.gpuprof" -- "$WORKLOAD" loop 200 >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 0 ] || fail "installed gpuprof run: exit $rc: $(cat "$T/e")"
set -- "$T"/inst-*.gpuprof
[ -f "$1" ] || fail "installed gpuprof run wrote no trace: $(cat "$T/e")"
n=$("$I/bin/gpuprof" dump --type kernel "$1" 2>/dev/null | grep -c .)
[ "$n" -gt 0 ] || fail "the installed run's trace holds no kernels"
# it was the installed shim: without it, run says where it looked
mv "$I/lib/libgpuprof.so" "$T/gone.so"
GPUPROF_CUPTI=$FAKE_CUPTI "$I/bin/gpuprof" run -o "$T/x.gpuprof" -- "$WORKLOAD" loop 10 >/dev/null 2>"$T/e2" && fail "run without the installed shim exits 0"
grep -q "cannot find libgpuprof.so at $I/bin/../lib/libgpuprof.so" "$T/e2" || fail "run without the shim: $(cat "$T/e2")"
mv "$T/gone.so" "$I/lib/libgpuprof.so"
# the man pages, by man's own search path
MANPATH=$I/share/man MANWIDTH=100 man gpuprof-stats 2>/dev/null | grep -q "^SYNOPSIS" || fail "man gpuprof-stats from the prefix"
MANWIDTH=100 man -l "$I/share/man/man1/gpuprof.1" | grep -q "gpuprof-advise(1)" || fail "man -l gpuprof.1"
# the installed completion asks the installed binary
out=$(bash -c '. "$1"; COMP_WORDS=("$2" stats --report step_r); COMP_CWORD=3; _gpuprof; echo "${COMPREPLY[*]}"' sh \
	"$I/share/bash-completion/completions/gpuprof" "$I/bin/gpuprof")
[ "$out" = step_rows ] || fail "installed bash completion: '$out'"
# uninstall from where it was installed to: nothing of ours left
mv "$I" "$S$P"
$MK uninstall PREFIX=$P DESTDIR="$S" >"$T/un.log" 2>&1 || fail "make uninstall: $(tail -n 5 "$T/un.log")"
left=$(find "$S" -type f)
[ -z "$left" ] || fail "left after uninstall: $left"
finish
