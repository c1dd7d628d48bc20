# --- shim tests ---
# Fake CUPTI/CUDA (tests/fake/) and the shim's tests (tests/shim/).  The fake
# libcupti.so.13 is built from the REAL cupti.h; its cbid->name tables are
# generated from cupti_runtime_cbid.h / cupti_driver_cbid.h.  Script tests are
# run through generated wrappers that pass the build dir.
FAKE_DIR := $(B)/tests/fake
SHIMT_DIR := $(B)/tests/shim
FAKE_CFLAGS := $(CUDA_CFLAGS) $(CUPTI_C_COMPAT) -Itests/fake -I$(FAKE_DIR) -pthread
FAKE_CUPTI := $(FAKE_DIR)/libcupti.so.13
FAKE_CUDART := $(FAKE_DIR)/libcudart.so.13
FAKE_WORKLOAD := $(FAKE_DIR)/workload
SHIM_CHECK := $(SHIMT_DIR)/check_trace
SHIM_UNIT := $(SHIMT_DIR)/test_shim_unit
SHIM_SETTINGS := $(SHIMT_DIR)/test_settings
SHIM_SCRIPT_TESTS := test_workload test_install test_no_cupti test_disabled test_injection_once \
	test_other_subscriber test_sigterm test_unwritable test_follow_exec test_api_modes \
	test_sigkill test_fork_stress test_gpu_window test_gpu_metrics test_status \
	test_pm_sampling test_clock_tsc test_run_summary test_no_cuda_trace
FAKE_NVML := $(FAKE_DIR)/libnvidia-ml.so.1
# Python script tests (GPUPROF_STACKS; they read traces with bin/gpuprof)
SHIM_PY_TESTS := test_memory_shim test_stacks test_stacks_python test_stacks_layers test_stacks_graphs test_capture_range test_flight test_flight_rules test_flight_check test_flight_api test_layers_py test_flight_steps test_flight_drop test_flight_analyse test_coexist
# the CPython layout the shim reads, against the installed Python headers
SHIM_SCRIPT_TESTS += test_py_offsets

$(FAKE_DIR)/fake_cbid_runtime.h: | $(FAKE_DIR)/ check-cuda
	sed -n 's/^[[:space:]]*CUPTI_RUNTIME_TRACE_CBID_\([A-Za-z0-9_]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\),.*/X(\2, "\1")/p' \
	  $(CUPTI_INC)/cupti_runtime_cbid.h | grep -v '"INVALID"\|"SIZE"' > $@.tmp && mv $@.tmp $@
$(FAKE_DIR)/fake_cbid_driver.h: | $(FAKE_DIR)/ check-cuda
	sed -n 's/^[[:space:]]*CUPTI_DRIVER_TRACE_CBID_\([A-Za-z0-9_]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\),.*/X(\2, "\1")/p' \
	  $(CUPTI_INC)/cupti_driver_cbid.h | grep -v '"INVALID"\|"SIZE"' > $@.tmp && mv $@.tmp $@

$(FAKE_CUPTI): tests/fake/fake_cupti.c tests/fake/fake_api.h $(FAKE_DIR)/fake_cbid_runtime.h $(FAKE_DIR)/fake_cbid_driver.h | $(FAKE_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FAKE_CFLAGS) -shared -Wl,-soname,libcupti.so.13 -o $@ $<

# the same without the PM sampling API (a CUPTI older than 12.6)
FAKE_CUPTI_NOPM := $(FAKE_DIR)/nopm/libcupti.so.13
$(FAKE_CUPTI_NOPM): tests/fake/fake_cupti.c tests/fake/fake_api.h $(FAKE_DIR)/fake_cbid_runtime.h $(FAKE_DIR)/fake_cbid_driver.h | $(FAKE_DIR)/nopm/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FAKE_CFLAGS) -DFAKE_NO_PM -shared -Wl,-soname,libcupti.so.13 -o $@ $<

# scripted NVML for GPUPROF_GPU_METRICS (declares its own types: no nvml.h)
$(FAKE_NVML): tests/fake/fake_nvml.c tests/fake/fake_api.h | $(FAKE_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -pthread -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(FAKE_CUDART): tests/fake/fake_cudart.c tests/fake/fake_api.h | $(FAKE_DIR)/ check-cuda
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FAKE_CFLAGS) -shared -Wl,-soname,libcudart.so.13 -o $@ $< -ldl

# process_vm_readv refused (EPERM): the Python frame reads' pipe fallback
FAKE_NOREADV := $(FAKE_DIR)/libnoreadv.so
$(FAKE_NOREADV): tests/fake/fake_noreadv.c | $(FAKE_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -shared -o $@ $<
$(SHIMT_DIR)/run_test_stacks_layers: | $(FAKE_NOREADV)

$(FAKE_WORKLOAD): tests/fake/workload.c tests/fake/fake_api.h $(FAKE_CUDART) | $(FAKE_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FAKE_CFLAGS) -fPIE -o $@ $< $(FAKE_CUDART) -Wl,-rpath,'$$ORIGIN' -ldl

$(SHIM_CHECK): tests/shim/check_trace.c $(LIBPROF_A) | $(SHIMT_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ $< $(LIBPROF_A) $(LIBPROF_LIBS)

# config, path patterns, cbid selection, steps and their rolling median: pure code, no CUPTI
SHIM_UNIT_SRCS := shim/core/gps_config.c shim/nvidia/gps_cbid.c shim/core/gps_log.c shim/core/gps_clock.c \
	shim/features/gps_rolling.c shim/features/gps_drop.c shim/features/gps_steps.c shim/features/gps_period.c shim/features/gps_stepfind.c \
	shim/features/gps_livemem.c libprof/gp_settings.c
$(SHIM_UNIT): tests/shim/test_shim_unit.c tests/shim/unit_check.h $(SHIM_UNIT_SRCS) $(SHIM_HDRS) | $(SHIMT_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -Ishim -o $@ tests/shim/test_shim_unit.c $(SHIM_UNIT_SRCS) -pthread
# the GPUPROF_* settings table and parsers the shim and `gpuprof run` share
$(SHIM_SETTINGS): tests/shim/test_settings.c tests/shim/unit_check.h libprof/gp_settings.c libprof/gp_settings.h | $(SHIMT_DIR)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -o $@ tests/shim/test_settings.c libprof/gp_settings.c

$(SHIMT_DIR)/run_%: tests/shim/%.sh | $(SHIMT_DIR)/
	printf '#!/bin/sh\nexec sh %s %s\n' '$<' '$(B)' > $@ && chmod +x $@
$(SHIMT_DIR)/run_%: tests/shim/%.py tests/shim/stackslib.py tests/shim/flightlib.py | $(SHIMT_DIR)/
	printf '#!/bin/sh\nexec python3 %s %s\n' '$<' '$(B)' > $@ && chmod +x $@
# the wrapper pulls in the fake NVML, so builds that list only the wrappers
# (the sanitizer runs, tests/faults/build.mk) have it too
$(SHIMT_DIR)/run_test_gpu_metrics: | $(FAKE_NVML)
$(SHIMT_DIR)/run_test_pm_sampling: | $(FAKE_CUPTI_NOPM)
$(SHIMT_DIR)/run_test_layers_py: | $(SHIM_PY)

TEST_BINS += $(FAKE_CUPTI) $(FAKE_NVML) $(FAKE_CUDART) $(FAKE_NOREADV) $(FAKE_WORKLOAD) $(SHIM_CHECK) $(SHIM_UNIT) $(SHIM_SETTINGS) $(SHIM_SO) \
	$(SHIM_SCRIPT_TESTS:%=$(SHIMT_DIR)/run_%) $(SHIM_PY_TESTS:%=$(SHIMT_DIR)/run_%)
TESTS += $(SHIM_UNIT) $(SHIM_SETTINGS) $(SHIM_SCRIPT_TESTS:%=$(SHIMT_DIR)/run_%) $(SHIM_PY_TESTS:%=$(SHIMT_DIR)/run_%)
# --- end shim tests ---

# --- build tests (owner: libprof): rules in tests/build/build.mk ---
include tests/build/build.mk
# --- end build tests ---

# --- libprof tests (owner: libprof): rules in tests/libprof/build.mk ---
include tests/libprof/build.mk
# --- end libprof tests ---

# --- tools tests (owner: tools): rules in tests/tools/build.mk ---
include tests/tools/build.mk
# --- end tools tests ---

# --- fault tests ---
include tests/faults/build.mk
# --- end fault tests ---
