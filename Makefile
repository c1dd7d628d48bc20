# gpuprof — top-level build.  `make` builds into build/, `make test` runs every
# test and ends with 'N passed, N failed'.  Each component keeps its rules in
# its own build.mk (one owner per file); this file holds what they share.

CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wno-unused-parameter
BASE_CFLAGS := -std=gnu11 -fPIC -fvisibility=hidden -D_GNU_SOURCE $(WARN) $(EXTRA_CFLAGS)
LDFLAGS  ?=
B        := build
# Header dependencies: every compile rule adds $(DEPFLAGS); the compiler
# writes a .d file next to each output (x.o -> x.d, a program -> prog.d)
# and the -include at the end of this file reads them all, so a header
# change rebuilds exactly what includes it.  -MP adds an empty rule per
# header, so deleting a header does not break the next build.
DEPFLAGS := -MMD -MP
# Put $(DEP_MISSING) among a compile rule's prerequisites: an output
# (object or program) without its .d file yet, e.g. built before the rule
# had $(DEPFLAGS), is rebuilt once rather than trusted against headers
# nobody recorded.  Uses .SECONDEXPANSION (below).
DEP_MISSING = $$(if $$(wildcard $$(basename $$@).d),,FORCE)

# CUDA toolkit headers (cupti.h, nvtx3): CUDA_HOME, else nvcc on PATH, else /usr/local/cuda.
CUDA_HOME ?= $(shell d=$$(dirname $$(dirname $$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc))); \
                [ -f $$d/include/cupti.h ] && echo $$d || echo /usr/local/cuda)
CUDA_INC  := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
CUPTI_INC := $(if $(CUDA_INC),$(dir $(CUDA_INC)),)
CUDA_CFLAGS := $(if $(CUPTI_INC),-I$(CUPTI_INC) -I$(CUDA_HOME)/include,)

.PHONY: all test clean demo demo-full deps check-cuda bench asan FORCE check-layers format-check format
all:
FORCE:
.SECONDEXPANSION:

check-cuda:
	@if [ -z "$(CUPTI_INC)" ]; then \
	  echo "error: CUDA toolkit headers not found (cupti.h). Set CUDA_HOME=/path/to/cuda, put nvcc on PATH, or install the toolkit in /usr/local/cuda." >&2; exit 1; fi

# Build dependencies (apt), then DuckDB for Node.js (npm, pinned: the reader
# test_parquet checks the Parquet export with; without it the test skips)
# and uPlot for `gpuprof report`'s charts (npm, pinned; without it the report
# has tables only).
deps:
	@./scripts/setup-deps.sh; rc=$$?; ./scripts/setup-duckdb.sh $(B); ./scripts/setup-uplot.sh $(B); exit $$rc

# Include rules between folders (COMPONENT/layers.txt; docs/ARCHITECTURE.md).
check-layers:
	@scripts/check-layers.sh

# C style (.clang-format, clang-format 14): the folders reformatted so far.
# The others (libprof shim tools tests bench examples in all) join the list
# as they are reformatted; `make format` rewrites the listed ones.
FORMAT_DIRS ?= libprof tests/libprof
format-check:
	@scripts/format-check.sh $(FORMAT_DIRS)
format:
	@scripts/format-check.sh --fix $(FORMAT_DIRS)

include libprof/build.mk
-include shim/build.mk
-include tools/build.mk
-include tests/build.mk
-include bench/build.mk
-include examples/build.mk
include install.mk

$(B)/%/:
	@mkdir -p $@

# The .d files of every earlier build under $(B) (the sanitizer builds'
# sub-directories included; their targets are their own paths).
-include $(shell find $(B) -name '*.d' 2>/dev/null)

# Nothing built is an intermediate to delete (make would try to rm the dirs).
.SECONDARY:

test: all $(TEST_BINS)
	@tests/run-tests.sh $(TESTS)

clean:
	rm -rf $(B)
