# --- libprof tests (owner: libprof): rules in tests/libprof/build.mk ---
include tests/libprof/build.mk
# --- end libprof tests ---

# --- tools tests (owner: tools): rules in tests/tools/build.mk ---
include tests/tools/build.mk
# --- end tools tests ---
