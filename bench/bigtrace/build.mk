# Benchmark trace generator (bench/bigtrace/gen_bigtrace.c): a realistic
# training mix of N events for measuring the offline tool (bench/offline/).
#   make bigtrace N=10000000 OUT=/tmp/big.gpuprof [SEED=1] [GEN_FLAGS=--no-nvtx]
GEN_BIGTRACE := $(B)/bench/gen_bigtrace
$(GEN_BIGTRACE): bench/bigtrace/gen_bigtrace.c tests/tools/gen_common.h tests/tools/splitmix.h $(LIBPROF_A) $(DEP_MISSING)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -Ilibprof -Itests/tools -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS) -lm

all: $(GEN_BIGTRACE)

.PHONY: bigtrace
SEED ?= 1
GEN_FLAGS ?=
bigtrace: $(GEN_BIGTRACE)
	@if [ -z "$(N)" ] || [ -z "$(OUT)" ]; then \
	  echo "usage: make bigtrace N=EVENTS OUT=FILE [SEED=S] [GEN_FLAGS=...]" >&2; exit 1; fi
	$(GEN_BIGTRACE) --seed $(SEED) $(GEN_FLAGS) $(N) $(OUT)

# Reader throughput with 1..N decoding threads (bench/offline/bench_read.c).
BENCH_READ := $(B)/bench/bench_read
$(BENCH_READ): bench/offline/bench_read.c $(LIBPROF_A) $(DEP_MISSING)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

all: $(BENCH_READ)
