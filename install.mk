# `make install PREFIX=/usr/local DESTDIR=` and `make uninstall`: the binary,
# the shim and the Python module of `gpuprof run --layers`, the man pages
# (built into $(B)/man), the bash and zsh completions and the docs.
# The layout is fixed where gpuprof looks: `gpuprof run` finds the shim at
# ../lib/libgpuprof.so next to its own binary (/proc/self/exe;
# tools/cmd/cmd_run.c), and the --layers module in lib/gpuprof-python/ next
# to the shim, so bin/ and lib/ are siblings under PREFIX.
PREFIX  ?= /usr/local
DESTDIR ?=
I_BIN  := $(DESTDIR)$(PREFIX)/bin
I_LIB  := $(DESTDIR)$(PREFIX)/lib
I_MAN  := $(DESTDIR)$(PREFIX)/share/man/man1
I_BASH := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
I_ZSH  := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
I_DOC  := $(DESTDIR)$(PREFIX)/share/doc/gpuprof

.PHONY: install uninstall
install: all
	install -d $(I_BIN) $(I_LIB)/gpuprof-python $(I_MAN) $(I_BASH) $(I_ZSH) $(I_DOC)
	install -m 755 $(GPUPROF_BIN) $(I_BIN)/gpuprof
	install -m 755 $(SHIM_SO) $(I_LIB)/libgpuprof.so
	install -m 644 $(SHIM_PY) $(I_LIB)/gpuprof-python/sitecustomize.py
	install -m 644 $(MAN_DIR)/*.1 $(I_MAN)/
	install -m 644 completion/gpuprof.bash $(I_BASH)/gpuprof
	install -m 644 completion/_gpuprof $(I_ZSH)/_gpuprof
	install -m 644 README.md docs/*.md $(I_DOC)/

# What install put there, by name (the man pages by their prefix: a command
# removed since is still removed).
uninstall:
	rm -f $(I_BIN)/gpuprof $(I_LIB)/libgpuprof.so $(I_LIB)/gpuprof-python/sitecustomize.py
	-rmdir $(I_LIB)/gpuprof-python 2>/dev/null
	rm -f $(I_MAN)/gpuprof.1 $(I_MAN)/gpuprof-*.1 $(I_BASH)/gpuprof $(I_ZSH)/_gpuprof
	rm -rf $(I_DOC)
