# libprof tests (owner: libprof).  Included from tests/build.mk.
LIBPROF_TEST_NAMES := test_roundtrip test_concurrency test_corrupt test_bad_files test_recorder_misc test_decoder test_ring \
	test_ring_unit test_intern test_fields test_reader_threads test_spool test_control test_window test_share
LIBPROF_TEST_BINS := $(LIBPROF_TEST_NAMES:%=$(B)/tests/libprof/%)
TEST_BINS += $(LIBPROF_TEST_BINS)
TESTS += $(LIBPROF_TEST_BINS)

$(B)/tests/libprof/%: tests/libprof/%.c $(LIBPROF_A) $(DEP_MISSING)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -Ilibprof $< $(LIBPROF_A) $(LIBPROF_LIBS) -o $@

.PHONY: libprof-test asan-test tsan-test fuzz-smoke regen-bad-data
libprof-test: $(LIBPROF_TEST_BINS)
	@tests/run-tests.sh $(LIBPROF_TEST_BINS)

SAN_ASAN := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_TSAN := -O1 -g -fsanitize=thread
# Sanitizer builds get their own build dirs; the recursive make overrides B.
asan-test:
	$(MAKE) --no-print-directory B=$(B)/asan CFLAGS="$(SAN_ASAN)" libprof-test
TSAN_TESTS := test_concurrency test_ring test_ring_unit test_intern test_reader_threads test_share
tsan-test:
	$(MAKE) --no-print-directory B=$(B)/tsan CFLAGS="$(SAN_TSAN)" $(TSAN_TESTS:%=$(B)/tsan/tests/libprof/%)
	TSAN_OPTIONS=halt_on_error=1 tests/run-tests.sh $(TSAN_TESTS:%=$(B)/tsan/tests/libprof/%)

# libFuzzer harness for the reader: clang, instrumented copy of libprof.
FUZZ_CC ?= clang
FUZZ_TIME ?= 30
$(B)/fuzz/fuzz_reader: tests/fuzz/fuzz_reader.c $(LIBPROF_SRCS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(DEPFLAGS) -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -Ilibprof tests/fuzz/fuzz_reader.c $(LIBPROF_SRCS) -lzstd -lpthread -o $@
fuzz-smoke: $(B)/fuzz/fuzz_reader
	rm -rf $(B)/fuzz/work && mkdir -p $(B)/fuzz/work
	$(B)/fuzz/fuzz_reader -max_total_time=$(FUZZ_TIME) -rss_limit_mb=2048 -print_final_stats=1 \
	  $(B)/fuzz/work tests/fuzz/corpus

# Regenerates tests/data/bad/ and tests/fuzz/corpus/ (after a format change).
$(B)/tests/libprof/mkbad: tests/libprof/mkbad.c $(LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -Ilibprof $< $(LIBPROF_A) $(LIBPROF_LIBS) -o $@
regen-bad-data: $(B)/tests/libprof/mkbad
	$(B)/tests/libprof/mkbad tests/data/bad tests/fuzz/corpus
