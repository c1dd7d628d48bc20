# --- overhead bench ---
# libcupti_floor.so: the CUPTI activity floor (bench/overhead/cupti_floor.c).
# Needs only the CUDA headers (libcupti is dlopen'ed at run time); built with
# `all` when the headers are there, so the carried build/ has it.
CUPTI_FLOOR_SO := $(B)/lib/libcupti_floor.so

all: $(if $(CUPTI_INC),$(CUPTI_FLOOR_SO))
bench: check-cuda $(CUPTI_FLOOR_SO)

# shim/nvidia/gps_cbid.c: CUPTI_FLOOR_API enables gpuprof's default API set by name.
$(CUPTI_FLOOR_SO): bench/overhead/cupti_floor.c shim/nvidia/gps_cbid.c | $(B)/lib/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(CUDA_CFLAGS) -Ilibprof -Ishim -shared -o $@ $^ -ldl -lpthread

# --- libprof bench (owner: libprof): rules in bench/libprof/build.mk ---
include bench/libprof/build.mk

# --- shim bench (owner: shim): rules in bench/shim/build.mk ---
include bench/shim/build.mk

# --- benchmark trace generator: rules in bench/bigtrace/build.mk ---
include bench/bigtrace/build.mk
