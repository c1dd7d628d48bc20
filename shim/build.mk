# shim: libgpuprof.so — the preloaded / injected tracer.  CUPTI is dlopen'ed at
# run time (never linked); libprof.a is linked in statically and hidden.
SHIM_SRCS := $(wildcard shim/*.c)
SHIM_OBJS := $(SHIM_SRCS:%.c=$(B)/obj/%.o)
SHIM_SO   := $(B)/lib/libgpuprof.so
# -idirafter shim/c-compat: cupti_profiler_host.h includes <string> (see the
# file there); the fake CUPTI (tests/build.mk) needs it too.
CUPTI_C_COMPAT := -idirafter shim/c-compat
SHIM_CFLAGS := $(CUDA_CFLAGS) $(CUPTI_C_COMPAT) -Ilibprof -Ishim -pthread

all: $(SHIM_SO)

$(B)/obj/shim/%.o: shim/%.c shim/*.h shim/c-compat/string libprof/gp_trace.h | $(B)/obj/shim/ check-cuda
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(SHIM_CFLAGS) -c $< -o $@

# -z nodelete: CUDA may dlclose an injection library while our threads or
# atexit handler still point into it.
$(SHIM_SO): $(SHIM_OBJS) $(LIBPROF_A) shim/exports.map | $(B)/lib/
	$(CC) -shared -o $@ $(SHIM_OBJS) $(LIBPROF_A) -Wl,--exclude-libs,ALL \
	  -Wl,--version-script=shim/exports.map -Wl,-z,nodelete -Wl,-z,defs \
	  $(LDFLAGS) -ldl -lzstd -pthread
