# tools tests: the gpuprof CLI on a generated deterministic trace (no GPU).
# Script tests run through generated wrappers that pass the build dir.
TOOLST_DIR := $(B)/tests/tools
GEN_TRACE := $(TOOLST_DIR)/gen_trace
FAKE_SHIM_SO := $(TOOLST_DIR)/fake_shim.so
TOOLS_SH_TESTS := test_cli test_cli_help test_completion test_golden test_run test_golden_workload
TOOLS_PY_TESTS := test_stats test_dump_json test_perfetto test_sqlite test_merge test_bad_input test_real_traces \
	test_windows test_occupancy test_top test_stacks test_stacks_workload test_speedscope test_flamegraph test_util_table \
	test_comm test_matrix_table test_steps test_steps_detect test_steps_mnist test_steps_padded test_advise_nohint test_select test_scale test_names test_machine_output test_memops test_merged_stats test_report test_diff test_advise test_advise_mnist test_advise_check \
	test_layers test_stats_threads test_window_read test_parquet test_csv test_captures test_advise_verdicts test_memory \
	test_widths test_views_threads test_spill_views test_stats_estimates test_testenv test_step_index

$(GEN_TRACE): tests/tools/gen_trace.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# per-rank communication (test_comm.py): two rank traces with NCCL kernels
GEN_RANKS := $(TOOLST_DIR)/gen_ranks
$(GEN_RANKS): tests/tools/gen_ranks.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# the steps analysis (test_steps.py): idle categories, warm-up, outliers
GEN_MEMORY := $(TOOLST_DIR)/gen_memory
$(GEN_MEMORY): tests/tools/gen_memory.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

GEN_STEPS := $(TOOLST_DIR)/gen_steps
$(GEN_STEPS): tests/tools/gen_steps.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# the pre-pass of stats --threads in slices (test_stats_threads.py): NVTX
# ranges across the cuts
GEN_CUTS := $(TOOLST_DIR)/gen_cuts
$(GEN_CUTS): tests/tools/gen_cuts.c tests/tools/gen_common.h tests/tools/splitmix.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itests/tools -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# gpuprof diff and report (test_diff.py, test_report.py): step traces with known differences
GEN_DIFF := $(TOOLST_DIR)/gen_diff
$(GEN_DIFF): tests/tools/gen_diff.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# gpuprof advise (test_advise.py): one trace per cause, and one without it
GEN_ADVISE := $(TOOLST_DIR)/gen_advise
$(GEN_ADVISE): tests/tools/gen_advise.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# time-window reads of export and dump (test_window_read.py): a trace of the
# in-process recorder, metadata before the window, a source out of order
GEN_WINDOW := $(TOOLST_DIR)/gen_window
$(GEN_WINDOW): tests/tools/gen_window.c libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# edge values for the SQLite, Parquet and CSV exports (test_parquet.py, test_csv.py)
GEN_EDGE := $(TOOLST_DIR)/gen_edge
$(GEN_EDGE): tests/tools/gen_edge.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# call stacks (test_stacks.py): symbols come from this program's own ELF file
GEN_STACKS := $(TOOLST_DIR)/gen_stacks
$(GEN_STACKS): tests/tools/gen_stacks.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -O0 -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS) -ldl

# model layers and --site rules (test_layers.py): Python stacks with forward frames
GEN_LAYERS := $(TOOLST_DIR)/gen_layers
$(GEN_LAYERS): tests/tools/gen_layers.c tests/tools/gen_common.h libprof/gp_trace.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# libprof/gp_launch against the toolkit's callback ids (the fake CUPTI's lists)
TEST_GP_LAUNCH := $(TOOLST_DIR)/test_gp_launch
$(TEST_GP_LAUNCH): tests/tools/test_gp_launch.c tests/tools/cbid_check.h libprof/gp_launch.h $(FAKE_DIR)/fake_cbid_runtime.h \
		$(FAKE_DIR)/fake_cbid_driver.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -I$(FAKE_DIR) -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# libprof/gp_alloc against the toolkit's callback ids (the fake CUPTI's lists)
TEST_GP_ALLOC := $(TOOLST_DIR)/test_gp_alloc
$(TEST_GP_ALLOC): tests/tools/test_gp_alloc.c tests/tools/cbid_check.h libprof/gp_alloc.h $(FAKE_DIR)/fake_cbid_runtime.h \
		$(FAKE_DIR)/fake_cbid_driver.h $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -I$(FAKE_DIR) -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# tools/analysis/join/opjoin + attribution: the one rule on a hand-made sequence
TEST_ATTRIBUTION := $(TOOLST_DIR)/test_attribution
TEST_ATTRIBUTION_OBJS := $(B)/obj/tools/analysis/join/attribution.o $(B)/obj/tools/analysis/join/opjoin.o \
	$(B)/obj/tools/common/spill.o $(B)/obj/tools/common/tool.o $(B)/obj/tools/common/util.o $(B)/obj/tools/common/demangle.o \
	$(B)/obj/tools/common/testenv.o
$(TEST_ATTRIBUTION): tests/tools/test_attribution.c tests/tools/gen_common.h $(TEST_ATTRIBUTION_OBJS) \
		$(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_ATTRIBUTION_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++

# tools/analysis/join/opjoin: the join in time slices, merged, against one join
TEST_OPJOIN_MERGE := $(TOOLST_DIR)/test_opjoin_merge
$(TEST_OPJOIN_MERGE): tests/tools/test_opjoin_merge.c tests/tools/gen_common.h tests/tools/splitmix.h \
		$(TEST_ATTRIBUTION_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_ATTRIBUTION_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lm

# tools/analysis/core/slices: the slice runner's cuts, threads and merges
TEST_SLICES := $(TOOLST_DIR)/test_slices
TEST_SLICES_OBJS := $(B)/obj/tools/analysis/core/slices.o $(TEST_ATTRIBUTION_OBJS)
$(TEST_SLICES): tests/tools/test_slices.c tests/tools/gen_common.h $(TEST_SLICES_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_SLICES_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lpthread

# tools/analysis/core/intervals: streaming unions cut into time slices and merged, against one
TEST_IVPAIR_MERGE := $(TOOLST_DIR)/test_ivpair_merge
TEST_IVPAIR_MERGE_OBJS := $(B)/obj/tools/analysis/core/intervals.o $(B)/obj/tools/common/util.o
$(TEST_IVPAIR_MERGE): tests/tools/test_ivpair_merge.c tests/tools/splitmix.h $(TEST_IVPAIR_MERGE_OBJS) \
		$(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_IVPAIR_MERGE_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lm

# tools/analysis/join/attribution: the compact index against brute force, and its bytes per range
TEST_ATTRIBUTION_INDEX := $(TOOLST_DIR)/test_attribution_index
TEST_ATTRIBUTION_INDEX_OBJS := $(B)/obj/tools/analysis/join/attribution.o $(B)/obj/tools/common/spill.o $(B)/obj/tools/common/testenv.o \
	$(B)/obj/tools/common/tool.o $(B)/obj/tools/common/util.o $(B)/obj/tools/common/demangle.o
$(TEST_ATTRIBUTION_INDEX): tests/tools/test_attribution_index.c tests/tools/splitmix.h $(TEST_ATTRIBUTION_INDEX_OBJS) \
		$(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_ATTRIBUTION_INDEX_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lm

# tools/analysis/gpu/counters: folded series against brute force, at any slice count, bounded
TEST_COUNTERS := $(TOOLST_DIR)/test_counters
TEST_COUNTERS_OBJS := $(B)/obj/tools/analysis/gpu/counters.o $(B)/obj/tools/common/util.o
$(TEST_COUNTERS): tests/tools/test_counters.c tests/tools/splitmix.h $(TEST_COUNTERS_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_COUNTERS_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lm

# tools/analysis/steps/step_detect, steps: NVTX plans of many steps read back, their bytes per step and the steps engine's
TEST_STEP_PLAN := $(TOOLST_DIR)/test_step_plan
TEST_STEP_PLAN_OBJS := $(B)/obj/tools/analysis/steps/step_detect.o $(B)/obj/tools/analysis/steps/steps.o \
	$(B)/obj/tools/analysis/core/intervals.o $(B)/obj/tools/analysis/core/quantile.o \
	$(B)/obj/tools/analysis/gpu/windows.o $(TEST_ATTRIBUTION_OBJS)
$(TEST_STEP_PLAN): tests/tools/test_step_plan.c $(TEST_STEP_PLAN_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_STEP_PLAN_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lm

# tools/reports/stats_comm: the comm report's bytes per step on many steps, and its rows
TEST_COMM_MEMORY := $(TOOLST_DIR)/test_comm_memory
TEST_COMM_MEMORY_OBJS := $(B)/obj/tools/reports/stats_comm.o $(B)/obj/tools/common/report.o \
	$(B)/obj/tools/analysis/core/intervals.o $(TEST_ATTRIBUTION_OBJS)
$(TEST_COMM_MEMORY): tests/tools/test_comm_memory.c $(TEST_COMM_MEMORY_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_COMM_MEMORY_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lm

# tools/analysis/gpu/gpu_activity: report's GPU intervals summed per bin, their bytes against the records
TEST_GPU_ACTIVITY_MEMORY := $(TOOLST_DIR)/test_gpu_activity_memory
TEST_GPU_ACTIVITY_MEMORY_OBJS := $(B)/obj/tools/analysis/gpu/gpu_activity.o $(B)/obj/tools/analysis/gpu/windows.o \
	$(B)/obj/tools/analysis/core/intervals.o $(B)/obj/tools/common/util.o
$(TEST_GPU_ACTIVITY_MEMORY): tests/tools/test_gpu_activity_memory.c tests/tools/splitmix.h $(TEST_GPU_ACTIVITY_MEMORY_OBJS) \
		$(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_GPU_ACTIVITY_MEMORY_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lm

# tools/common/report: encoded rows print as the cells set, and their bytes per row
TEST_REPORT_ROWS := $(TOOLST_DIR)/test_report_rows
TEST_REPORT_ROWS_OBJS := $(B)/obj/tools/common/report.o $(B)/obj/tools/common/spill.o $(B)/obj/tools/common/tool.o $(B)/obj/tools/common/util.o \
	$(B)/obj/tools/common/demangle.o $(B)/obj/tools/common/testenv.o
$(TEST_REPORT_ROWS): tests/tools/test_report_rows.c tests/tools/splitmix.h $(TEST_REPORT_ROWS_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_REPORT_ROWS_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lm

# tools/common/spill: records and bytes through the file and back, readers on threads, failures
TEST_SPILL := $(TOOLST_DIR)/test_spill
TEST_SPILL_OBJS := $(B)/obj/tools/common/spill.o $(B)/obj/tools/common/tool.o $(B)/obj/tools/common/util.o \
	$(B)/obj/tools/common/demangle.o $(B)/obj/tools/common/testenv.o
$(TEST_SPILL): tests/tools/test_spill.c tests/tools/splitmix.h $(TEST_SPILL_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_SPILL_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lm -lpthread

# tools/common/util: u32map against u64map on random keys, grown and sized at once
TEST_U32MAP := $(TOOLST_DIR)/test_u32map
TEST_U32MAP_OBJS := $(B)/obj/tools/common/util.o
$(TEST_U32MAP): tests/tools/test_u32map.c tests/tools/splitmix.h $(TEST_U32MAP_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_U32MAP_OBJS) $(LIBPROF_A) $(LIBPROF_LIBS) -lm

# tools/common/util: sort_tail against the sorted order, prefixes and tails of every shape
TEST_SORT_TAIL := $(TOOLST_DIR)/test_sort_tail
$(TEST_SORT_TAIL): tests/tools/test_sort_tail.c tests/tools/splitmix.h $(TEST_U32MAP_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_U32MAP_OBJS) $(LIBPROF_A) $(LIBPROF_LIBS) -lm

# common/report.c's fitting of a table to a width, demangle.c's name_fit
TEST_TABLE_FIT := $(TOOLST_DIR)/test_table_fit
$(TEST_TABLE_FIT): tests/tools/test_table_fit.c $(TEST_REPORT_ROWS_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_REPORT_ROWS_OBJS) \
		$(LIBPROF_A) $(LIBPROF_LIBS) -lstdc++ -lm

# tools/analysis/core/quantile and summary: the median sketch's error bound
TEST_QUANTILE := $(TOOLST_DIR)/test_quantile
TEST_QUANTILE_OBJS := $(B)/obj/tools/analysis/core/quantile.o $(B)/obj/tools/analysis/core/summary.o $(B)/obj/tools/common/util.o \
	$(B)/obj/tools/common/testenv.o
$(TEST_QUANTILE): tests/tools/test_quantile.c tests/tools/splitmix.h $(TEST_QUANTILE_OBJS) $(LIBPROF_A) | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Itools -Itests/tools -o $@ $< $(TEST_QUANTILE_OBJS) $(LIBPROF_A) $(LIBPROF_LIBS) -lm

$(FAKE_SHIM_SO): tests/tools/fake_shim.c | $(TOOLST_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -shared -o $@ $<

$(TOOLST_DIR)/run_%: tests/tools/%.sh | $(TOOLST_DIR)/
	printf '#!/bin/sh\nexec sh %s %s\n' '$<' '$(B)' > $@ && chmod +x $@

$(TOOLST_DIR)/run_%: tests/tools/%.py | $(TOOLST_DIR)/
	printf '#!/bin/sh\nexec python3 %s %s\n' '$<' '$(B)' > $@ && chmod +x $@

TOOLS_TEST_RUNNERS := $(TOOLS_SH_TESTS:%=$(TOOLST_DIR)/run_%) $(TOOLS_PY_TESTS:%=$(TOOLST_DIR)/run_%)
TEST_BINS += $(GPUPROF_BIN) $(GEN_TRACE) $(GEN_CUTS) $(GEN_EDGE) $(GEN_WINDOW) $(GEN_STACKS) $(GEN_LAYERS) $(GEN_RANKS) $(GEN_STEPS) $(GEN_DIFF) $(GEN_ADVISE) $(GEN_MEMORY) $(FAKE_SHIM_SO) $(TOOLS_TEST_RUNNERS) $(TEST_GP_LAUNCH) $(TEST_GP_ALLOC) \
	$(TEST_ATTRIBUTION) $(TEST_ATTRIBUTION_INDEX) $(TEST_STEP_PLAN) $(TEST_COMM_MEMORY) $(TEST_COUNTERS) $(TEST_REPORT_ROWS) $(TEST_SPILL) $(TEST_U32MAP) $(TEST_SORT_TAIL) $(TEST_TABLE_FIT) $(TEST_QUANTILE) $(TEST_OPJOIN_MERGE) $(TEST_IVPAIR_MERGE) $(TEST_SLICES) $(TEST_GPU_ACTIVITY_MEMORY)
TESTS += $(TOOLS_TEST_RUNNERS) $(TEST_GP_LAUNCH) $(TEST_GP_ALLOC) $(TEST_ATTRIBUTION) $(TEST_ATTRIBUTION_INDEX) $(TEST_STEP_PLAN) $(TEST_COMM_MEMORY) $(TEST_COUNTERS) $(TEST_REPORT_ROWS) $(TEST_SPILL) $(TEST_U32MAP) $(TEST_SORT_TAIL) $(TEST_TABLE_FIT) \
	$(TEST_QUANTILE) $(TEST_OPJOIN_MERGE) $(TEST_IVPAIR_MERGE) $(TEST_SLICES) $(TEST_GPU_ACTIVITY_MEMORY)

# `stats --threads` (the time shards, reports/stats_shards.c) under the
# sanitizers: gpuprof and the generators built with TSan, and with
# ASan+UBSan, each in a build dir of its own, run test_stats_threads.py.
STATS_SAN_BINS = $(GPUPROF_BIN) $(GEN_BIGTRACE) $(GEN_TRACE) $(GEN_CUTS) $(GEN_RANKS) $(GEN_STACKS) $(GEN_LAYERS) $(GEN_STEPS)
.PHONY: stats-tsan-test stats-asan-test
stats-tsan-test:
	$(MAKE) --no-print-directory B=$(B)/tsan-stats CFLAGS="$(SAN_TSAN)" LDFLAGS="-fsanitize=thread" \
	  $(subst $(B)/,$(B)/tsan-stats/,$(STATS_SAN_BINS))
	TSAN_OPTIONS=halt_on_error=1 python3 tests/tools/test_stats_threads.py $(B)/tsan-stats
stats-asan-test:
	$(MAKE) --no-print-directory B=$(B)/asan-stats CFLAGS="$(SAN_ASAN)" LDFLAGS="-fsanitize=address,undefined" \
	  $(subst $(B)/,$(B)/asan-stats/,$(STATS_SAN_BINS))
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  python3 tests/tools/test_stats_threads.py $(B)/asan-stats
