# libprof: trace format, rings, writer, reader.  No CUDA.
LIBPROF_SRCS := $(wildcard libprof/*.c)
LIBPROF_OBJS := $(LIBPROF_SRCS:%.c=$(B)/obj/%.o)
LIBPROF_A    := $(B)/lib/libprof.a
LIBPROF_LIBS := -lzstd -lpthread

all: $(LIBPROF_A)

$(B)/obj/libprof/%.o: libprof/%.c libprof/*.h | $(B)/obj/libprof/
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ilibprof -c $< -o $@

$(LIBPROF_A): $(LIBPROF_OBJS) | $(B)/lib/
	rm -f $@; ar rcs $@ $^

# order-only directory targets are intermediate: keep make from trying to rm them
.PRECIOUS: $(B)/obj/libprof/ $(B)/lib/
