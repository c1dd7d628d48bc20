# libprof bench (owner: libprof).  Included from bench/build.mk.
BENCH_LIBPROF := $(B)/bench/bench_libprof
$(BENCH_LIBPROF): bench/libprof/bench_libprof.c $(LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof $< $(LIBPROF_A) $(LIBPROF_LIBS) -o $@
.PHONY: bench-libprof
bench-libprof: $(BENCH_LIBPROF)
	$(BENCH_LIBPROF)
bench: bench-libprof
