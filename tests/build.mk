# --- libprof tests (owner: libprof): rules in tests/libprof/build.mk ---
include tests/libprof/build.mk
# --- end libprof tests ---
