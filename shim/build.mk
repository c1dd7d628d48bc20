# shim: libgpuprof.so — the preloaded / injected tracer.  CUPTI is dlopen'ed at
# run time (never linked); libprof.a is linked in statically and hidden.
# Layers (shim/README.md, shim/layers.txt): core/, features/, nvidia/ and
# gps_lifecycle.c; includes name their layer ("core/gps_core.h"), so -Ishim.
SHIM_SRCS := $(wildcard shim/*.c shim/*/*.c)
SHIM_OBJS := $(SHIM_SRCS:%.c=$(B)/obj/%.o)
SHIM_SO   := $(B)/lib/libgpuprof.so
# -idirafter shim/nvidia/c-compat: cupti_profiler_host.h includes <string>
# (see the file there); the fake CUPTI (tests/build.mk) needs it too.
CUPTI_C_COMPAT := -idirafter shim/nvidia/c-compat
SHIM_CFLAGS := -Ilibprof -Ishim -pthread
# Only nvidia/ sees the CUDA headers: code elsewhere that includes one does
# not compile (nvidia/'s headers for the other layers include none).
SHIM_CUDA_CFLAGS := $(CUDA_CFLAGS) $(CUPTI_C_COMPAT) $(SHIM_CFLAGS)
SHIM_HDRS := $(wildcard shim/*/*.h) libprof/gp_trace.h libprof/gp_settings.h libprof/gp_control.h

all: $(SHIM_SO)

# gpuprof run --layers' Python module: next to the library, where gpuprof run
# looks for it (lib/gpuprof-python/)
SHIM_PY := $(B)/lib/gpuprof-python/sitecustomize.py
all: $(SHIM_PY)
$(SHIM_PY): shim/python/sitecustomize.py | $(B)/lib/gpuprof-python/
	cp $< $@

$(B)/obj/shim/nvidia/%.o: shim/nvidia/%.c $(SHIM_HDRS) shim/nvidia/c-compat/string $(DEP_MISSING) | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) $(SHIM_CUDA_CFLAGS) -c $< -o $@
$(B)/obj/shim/%.o: shim/%.c $(SHIM_HDRS) $(DEP_MISSING)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) $(SHIM_CFLAGS) -c $< -o $@

# -z nodelete: CUDA may dlclose an injection library while our threads or
# atexit handler still point into it.
$(SHIM_SO): $(SHIM_OBJS) $(LIBPROF_A) shim/exports.map | $(B)/lib/
	$(CC) -shared -o $@ $(SHIM_OBJS) $(LIBPROF_A) -Wl,--exclude-libs,ALL \
	  -Wl,--version-script=shim/exports.map -Wl,-z,nodelete -Wl,-z,defs \
	  $(LDFLAGS) -ldl -lzstd -pthread
