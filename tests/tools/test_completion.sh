#!/bin/sh
# issue #40: the bash and zsh completions (completion/) load and complete
# commands, options, report names and trace files, asking the gpuprof
# binary they complete for (`gpuprof help --words`).  zsh: skipped when it
# is not installed (said on the output).
B=${1:-build}
G=$(cd "$B/bin" && pwd)/gpuprof
C=$(cd "$(dirname "$0")/../../completion" && pwd)
fail=0
bad() { echo "FAIL: $*"; fail=1; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
mkdir "$d/w" "$d/w/sub" && touch "$d/w/a.gpuprof" "$d/w/b.gpuprof" "$d/w/notes.txt"

# bash: complete WORDS... (the last one the word being completed) -> COMPREPLY, one per line
bcomp() {
	(cd "$d/w" && bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuprof; printf "%s\n" "${COMPREPLY[@]}"' \
		sh "$C/gpuprof.bash" "$G" "$@") | sort
}
[ "$(bcomp st | tr '\n' ' ')" = "stats steps " ] || bad "bash: 'st': $(bcomp st | tr '\n' ' ')"
bcomp stats --report "" >"$d/r"
for r in api kernels nvtx steps step_rows layers; do grep -qx "$r" "$d/r" || bad "bash: stats --report lacks $r: $(tr '\n' ' ' <"$d/r")"; done
[ "$(bcomp stats --report ker)" = kernels ] || bad "bash: --report ker: $(bcomp stats --report ker)"
[ "$(bcomp steps --report api,ker)" = api,kernels ] || bad "bash: --report api,ker: $(bcomp steps --report api,ker)"
[ "$(bcomp stats --report = ker)" = kernels ] || bad "bash: --report=ker: $(bcomp stats --report = ker)"
[ "$(bcomp export --format par)" = parquet ] || bad "bash: export --format par"
bcomp stats --per >"$d/o"
grep -qx -- --per-step "$d/o" || bad "bash: stats --per: $(cat "$d/o")"
[ "$(bcomp stats "" | tr '\n' ' ')" = "a.gpuprof b.gpuprof sub/ " ] || bad "bash: trace files: $(bcomp stats "" | tr '\n' ' ')"
[ "$(bcomp help ad)" = advise ] || bad "bash: help ad"
# the table options of every command that prints tables (main takes them)
for c in info stats steps memory advise diff; do
	bcomp $c --wid | grep -qx -- --width || bad "bash: $c --wid: $(bcomp $c --wid)"
done
[ "$(bcomp advise --names f)" = full ] || bad "bash: advise --names f: $(bcomp advise --names f)"

if command -v zsh >/dev/null 2>&1; then
	# zsh: the function with compadd and _files stubbed to print what they get
	zcomp() {
		(cd "$d/w" && zsh -fc 'compadd() { while [[ $1 == -* && $1 != -- ]]; do [[ $1 == -p ]] && { p=$2; shift; }; shift; done; shift; for w; print -r -- "$p$w"; }
			_files() { print -r -- "FILES $*"; }
			words=("$@"); CURRENT=$#; source "$0"' "$C/_gpuprof" "$G" "$@")
	}
	zcomp stats --report "" >"$d/zr"
	for r in api kernels nvtx steps step_rows; do grep -qx "$r" "$d/zr" || bad "zsh: stats --report lacks $r: $(tr '\n' ' ' <"$d/zr")"; done
	zcomp stats --report api,k | grep -qx "api,kernels" || bad "zsh: --report api,k: $(zcomp stats --report api,k | tr '\n' ' ')"
	zcomp "" | grep -qx advise || bad "zsh: commands: $(zcomp "" | tr '\n' ' ')"
	zcomp stats --w | grep -qx -- --width || bad "zsh: stats --w"
	[ "$(zcomp stats x)" = "FILES -g *.gpuprof" ] || bad "zsh: trace files: $(zcomp stats x)"
else
	echo "note: zsh not installed: its completion not tested"
fi
[ $fail -eq 0 ] && echo ok
exit $fail
