# examples: CUDA C programs built with nvcc (not part of `all`: nvcc is slow
# and only the GPU machine runs them).  `make gpu-examples` builds them into
# $(B)/gpu/; tests/gpu/run.sh and bench/overhead/run.sh build them the same
# way when they are missing.  The python examples need no build.
NVCC      ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc /usr/local/cuda/bin/nvcc) nvcc)
CUDA_ARCH ?= sm_90
NVCCFLAGS ?= -O2 -lineinfo

GPU_EXAMPLES := $(B)/gpu/vector_add $(B)/gpu/empty_kernel $(B)/gpu/util_microbench

.PHONY: gpu-examples
gpu-examples: $(GPU_EXAMPLES)

$(GPU_EXAMPLES): $(B)/gpu/%: examples/%.cu | $(B)/gpu/
	$(NVCC) $(NVCCFLAGS) -arch=$(CUDA_ARCH) -I$(CUDA_HOME)/include -o $@ $<

# CPU-only self-tests of the GPU scripts (their parsers and checks run on
# synthetic traces).  tests/gpu/ has no build.mk of its own.
TESTS += tests/gpu/test_scripts.py
