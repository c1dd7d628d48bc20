# tools: the `gpuprof` CLI (run, info, dump, stats, export, merge).
# Links libprof.a statically; sqlite3 for `export --format sqlite`, zlib for
# gzip output (`export -o X.json.gz`), libstdc++
# for __cxa_demangle, libm for the stddev in `stats`.
# One folder per layer (tools/README.md has the map and the rules); every .c
# of each folder is compiled.  Includes name their folder ("common/util.h"),
# hence -Itools; header dependencies come from the compiler ($(DEPFLAGS), the
# top Makefile reads every .d file).
TOOLS_DIRS := cli cmd reports export common \
	$(addprefix analysis/,core gpu join stacks layers steps memory advise diff)
TOOLS_SRCS := $(foreach d,$(TOOLS_DIRS),$(wildcard tools/$(d)/*.c))
TOOLS_OBJS := $(TOOLS_SRCS:%.c=$(B)/obj/%.o)
GPUPROF_BIN := $(B)/bin/gpuprof
TOOLS_LIBS := -lsqlite3 -lz -lstdc++ -lm

all: $(GPUPROF_BIN)

$(B)/obj/tools/%.o: tools/%.c $(DEP_MISSING)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -Ilibprof -Itools -I$(B)/gen -c $< -o $@

# `gpuprof report`'s page (export/report_html.c): its own script and style,
# and uPlot once `make deps` installed it (scripts/setup-uplot.sh, pinned in
# scripts/uplot.pin), embedded at build time.  The generator runs every
# build but rewrites the header only when its content changes, so
# installing uPlot later is picked up and nothing else rebuilds.
REPORT_ASSETS_H := $(B)/gen/report_assets.h
UPLOT_PKG := $(B)/npm/node_modules/uplot
$(REPORT_ASSETS_H): FORCE | $(B)/gen/
	@scripts/embed-report-assets.sh $@ tools/export $(UPLOT_PKG) scripts/uplot.pin
$(B)/obj/tools/export/report_html.o: $(REPORT_ASSETS_H)


$(GPUPROF_BIN): $(TOOLS_OBJS) $(LIBPROF_A) | $(B)/bin/
	$(CC) -o $@ $(TOOLS_OBJS) $(LIBPROF_A) $(LDFLAGS) $(TOOLS_LIBS) $(LIBPROF_LIBS)

# `make demo`: trace the MNIST example on a GPU when there is one; otherwise
# analyse the committed H200 trace (skipped with a message if not there yet).
# The headline first (scripts/demo-headline.sh: steps, findings, the HTML
# report and the Perfetto file); `make demo-full`: every table of stats.
DEMO_TRACE := examples/mnist-h200.gpuprof
demo: all
	@if nvidia-smi -L >/dev/null 2>&1 && nvidia-smi -L | grep -q GPU; then \
	  echo "demo: GPU found: tracing examples/train_mnist.py --steps 200"; \
	  rm -f $(B)/demo.gpuprof; \
	  $(GPUPROF_BIN) run -o $(B)/demo.gpuprof -- python3 examples/train_mnist.py --steps 200 && \
	  scripts/demo-headline.sh $(GPUPROF_BIN) $(B)/demo.gpuprof $(B); \
	elif [ -f $(DEMO_TRACE) ]; then \
	  echo "demo: no GPU found; analysing the recorded H200 trace $(DEMO_TRACE)"; \
	  scripts/demo-headline.sh $(GPUPROF_BIN) $(DEMO_TRACE) $(B); \
	else \
	  echo "demo: no GPU found and $(DEMO_TRACE) is not there yet; skipping"; \
	fi
demo-full: all
	@t=$(B)/demo.gpuprof; [ -f $$t ] || t=$(DEMO_TRACE); $(GPUPROF_BIN) info $$t && $(GPUPROF_BIN) stats $$t

# Man pages, gpuprof(1) and gpuprof-CMD(1), made by the binary from its
# table of commands (tools/cli/commands.c, `gpuprof help --man [CMD]`): the
# same text as --help, one page per command it lists.
MAN_DIR := $(B)/man
MAN_STAMP := $(MAN_DIR)/.stamp
all: $(MAN_STAMP)
$(MAN_STAMP): $(GPUPROF_BIN)
	@rm -rf $(MAN_DIR) && mkdir -p $(MAN_DIR)
	$(GPUPROF_BIN) help --man >$(MAN_DIR)/gpuprof.1
	@for c in $$($(GPUPROF_BIN) help --words); do \
	  $(GPUPROF_BIN) help --man $$c >$(MAN_DIR)/gpuprof-$$c.1 || exit 1; done
	@touch $@
