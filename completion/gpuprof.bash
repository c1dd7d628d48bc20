# bash completion for gpuprof: commands, options, option values (report names
# of `stats --report`, formats, methods) and trace files (*.gpuprof).
# The words come from gpuprof itself (`gpuprof help --words [CMD [OPTION]]`,
# made from its table of commands), so they are those of the binary called.
# Installed to share/bash-completion/completions/gpuprof; in the tree:
#   source completion/gpuprof.bash
_gpuprof() {
	local g=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd vals pre
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$g" help --words 2>/dev/null) help" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	# --report=<TAB>: bash splits the word at '=' (COMP_WORDBREAKS)
	[ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 3 ] && prev=${COMP_WORDS[COMP_CWORD-2]}
	if [ "$cmd" = help ]; then
		COMPREPLY=($(compgen -W "--full $("$g" help --words 2>/dev/null)" -- "$cur"))
		return
	fi
	case $prev in
	--*)
		vals=$("$g" help --words "$cmd" "$prev" 2>/dev/null)
		if [ -n "$vals" ]; then
			# a comma-separated list (--report api,kernels): the word after the last comma
			pre=
			case $cur in *,*) pre=${cur%,*},; cur=${cur##*,} ;; esac
			COMPREPLY=($(compgen -P "$pre" -W "$vals" -- "$cur"))
			return
		fi
		;;
	esac
	case $cur in
	-*) COMPREPLY=($(compgen -W "$("$g" help --words "$cmd" 2>/dev/null)" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -f -X '!*.gpuprof' -- "$cur") $(compgen -d -S / -- "$cur")) ;;
	esac
}
complete -o filenames -F _gpuprof gpuprof
