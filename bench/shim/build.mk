# bench/shim: per-launch cost of the shim's handler on the fake CUDA stack.
# Included from bench/build.mk: `make bench-shim`; bench/shim/run.sh runs it.
SHIM_BENCH := $(B)/bench/shim/bench_launch

bench-shim: $(SHIM_BENCH) $(FAKE_CUPTI) $(SHIM_SO)

$(SHIM_BENCH): bench/shim/bench_launch.c tests/fake/fake_api.h $(FAKE_CUDART) | $(B)/bench/shim/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FAKE_CFLAGS) -fPIE -o $@ $< $(FAKE_CUDART) -Wl,-rpath,'$$ORIGIN/../../tests/fake' -ldl

# clock_cost: what one timestamp costs (scripts/gpu-session.sh clock)
CLOCK_COST := $(B)/bench/shim/clock_cost
all: $(CLOCK_COST)
$(CLOCK_COST): bench/shim/clock_cost.c | $(B)/bench/shim/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -fPIE -o $@ $<
