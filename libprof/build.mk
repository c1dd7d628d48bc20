# libprof: trace format, rings, writer, reader.  No CUDA.  One folder per
# layer (libprof/README.md, libprof/layers.txt); -Ilibprof is the include root.
LIBPROF_SRCS := $(wildcard libprof/*.c libprof/*/*.c)
LIBPROF_OBJS := $(LIBPROF_SRCS:%.c=$(B)/obj/%.o)
LIBPROF_A    := $(B)/lib/libprof.a
LIBPROF_LIBS := -lzstd -lpthread

all: $(LIBPROF_A)

# Header dependencies: $(DEPFLAGS) and $(DEP_MISSING) (see the Makefile).
$(B)/obj/libprof/%.o: libprof/%.c $(DEP_MISSING) | $$(@D)/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -Ilibprof -c $< -o $@

$(LIBPROF_A): $(LIBPROF_OBJS) | $(B)/lib/
	rm -f $@; ar rcs $@ $^

# order-only directory targets are intermediate: keep make from trying to rm them
.PRECIOUS: $(B)/obj/libprof/ $(B)/obj/libprof/%/ $(B)/lib/
