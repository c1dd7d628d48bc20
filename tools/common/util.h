/* util.h — small helpers shared by the gpuprof subcommands: allocation that
 * exits on OOM (an offline tool has nothing better to do), growable arrays,
 * three hash maps, JSON string escaping, number/time formatting and the names
 * of the trace's enums.  Nothing here knows about the reader. */
#ifndef GPUPROF_COMMON_UTIL_H
#define GPUPROF_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Grow *arr (element size esz) so that index `need` fits; *cap updated. */
void vec_reserve(void **arr, size_t *cap, size_t need, size_t esz);
/* The same, the new elements zeroed: an array indexed below *cap. */
void vec_reserve_zeroed(void **arr, size_t *cap, size_t need, size_t esz);
#define VEC_PUSH(arr, n, cap, val) do { \
	vec_reserve((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))); \
	(arr)[(n)++] = (val); } while (0)

/* Sorts v[0 .. n) (elements of esz bytes) by cmp where v[0 .. sorted) is
 * in order already (what a stream's consumer left sorted last time): the
 * tail sorted, then merged with the prefix (equal keys: the prefix's
 * first, as a stable sort of the whole would); *tmp (*ctmp elements) is
 * its scratch space, grown as needed (free() it). */
void sort_tail(void *v, size_t sorted, size_t n, size_t esz, int (*cmp)(const void *, const void *), void **tmp,
	       size_t *ctmp);

/* A growable byte string: the canonical form of a state, compared byte
 * for byte (the steps' engines at a cut, analysis/steps/steps_slice.h), the
 * Parquet writer's pages and footer. */
struct bytes { uint8_t *v; size_t n, cap; };
void bytes_put(struct bytes *b, const void *p, size_t n);
void bytes_u64(struct bytes *b, uint64_t x);
void bytes_free(struct bytes *b);
/* Whether a and b hold the same bytes. */
int bytes_equal(const struct bytes *a, const struct bytes *b);

/* Unsigned LEB128 varints (7 bits a byte, low first: libprof's and
 * Thrift's) and zigzag for signed values.  varint_enc writes at most 10
 * bytes to out and returns how many; varint_dec reads one at *p and moves
 * *p past it; bytes_varint appends one to b. */
size_t varint_enc(uint8_t out[10], uint64_t x);
uint64_t varint_dec(const uint8_t **p);
void bytes_varint(struct bytes *b, uint64_t x);
static inline uint64_t zigzag_enc(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t zigzag_dec(uint64_t u) { return (int64_t)((u >> 1) ^ (~(u & 1) + 1)); }

/* The 64-bit finalizer of MurmurHash3 (fmix64): every bit of x reaches
 * every bit of the result, for hash slots and for sums of hashed values. */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* uint64 -> uint64 open-addressing map (any key value allowed).  A key
 * and its value share a slot (one cache line per probe, not two); used[i]
 * says slot i holds one. */
struct u64slot { uint64_t key, val; };
typedef struct u64map {
	struct u64slot *slot;
	uint8_t *used;
	size_t cap, n;
} u64map;
void u64map_init(u64map *m);
void u64map_free(u64map *m);
/* How a lookup treats an absent key. */
enum map_mode { MAP_FIND, MAP_INSERT };
/* Returns a pointer to the value slot; an absent key is inserted (value 0)
 * with MAP_INSERT, and gives NULL with MAP_FIND. */
uint64_t *u64map_get(u64map *m, uint64_t key, enum map_mode mode);
int u64map_del(u64map *m, uint64_t key);
/* The element of the growable array arr (n used of cap) that key indexes
 * in m (which holds index + 1), appended as a copy of *init the first time.
 * Valid until arr grows. */
#define VEC_KEYED(m, key, arr, n, cap, init) vec_keyed((m), (key), (void **)&(arr), &(n), &(cap), sizeof(*(arr)), (init))
/* Binary search: the first i in [0, n) where `pred`, an expression of i
 * that is false and then true over the range, is true; n when none. */
#define FIRST_WHERE(i, n, pred)                                          \
	({                                                               \
		size_t i##_lo = 0, i##_hi = (n);                         \
		while (i##_lo < i##_hi) {                                \
			size_t i = i##_lo + (i##_hi - i##_lo) / 2;       \
			if (pred) i##_hi = i;                            \
			else i##_lo = i + 1;                             \
		}                                                        \
		i##_lo;                                                  \
	})
void *vec_keyed(u64map *m, uint64_t key, void **arr, size_t *n, size_t *cap, size_t esz, const void *init);

/* uint32 -> uint32 open-addressing map (a range id to its step: one key a
 * step), 8 bytes a slot (key + 1, then the value; 0: empty), at most 3/4
 * full; any capacity, so that one sized at once (u32map_reserve) takes
 * ~11 bytes a key.  Keys below UINT32_MAX; zeroed is empty. */
struct u32map { uint32_t *kv; size_t cap, n; };
/* Room for n keys in all without growing. */
void u32map_reserve(struct u32map *m, size_t n);
/* Sets key's value (inserted when absent). */
void u32map_put(struct u32map *m, uint32_t key, uint32_t val);
/* key's value + 1, 0 when absent. */
uint64_t u32map_find(const struct u32map *m, uint32_t key);
void u32map_free(struct u32map *m);

/* string -> index map; keys are copied. */
typedef struct strmap {
	char **keys;
	size_t *vals;
	size_t cap, n;
} strmap;
void strmap_init(strmap *m);
void strmap_free(strmap *m);
/* Returns the value slot; *is_new set when inserted (value 0). */
size_t *strmap_get(strmap *m, const char *key, int *is_new);
/* The value slot of key; NULL when absent (nothing inserted). */
size_t *strmap_find(const strmap *m, const char *key);

/* Whether s begins with prefix. */
int starts_with(const char *s, const char *prefix);
/* Whether s contains sub, ignoring ASCII case. */
int has_ci(const char *s, const char *sub);

/* Length (1..4) of the valid UTF-8 sequence s begins with, or 0 when it
 * begins none (a stray or overlong byte, a surrogate, past U+10FFFF); s is
 * NUL-terminated (the NUL ends a truncated sequence). */
int utf8_seq_len(const char *s);
/* JSON string literal (with quotes).  Control characters escaped, invalid
 * UTF-8 bytes become \ufffd, so the output is always valid JSON. */
void json_str(FILE *f, const char *s);
/* CSV field: quoted when it contains , " or a newline. */
void csv_str(FILE *f, const char *s);

/* "1.2 MB" style (decimal units). */
void fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* "12.345 ms" style for a duration in ns. */
void fmt_dur(char *buf, size_t n, uint64_t ns);
/* names[0 .. count) joined by ", " into buf (n > 0 bytes; cut to fit);
 * returns the length written (for the lists of names in help and errors). */
size_t fmt_list(char *buf, size_t n, const char *const *names, size_t count);
/* UTC ISO-8601 with ns: 2024-01-02T03:04:05.123456789Z */
void fmt_iso8601(char *buf, size_t n, uint64_t realtime_ns);
/* Prints ns as microseconds with ns precision ("12.345"), signed. */
void fprint_us(FILE *f, int64_t ns);

/* Parses "123", "1.5ms", "2s", "10us", "7ns" into ns.  0 ok, -1 bad. */
int parse_duration_ns(const char *s, uint64_t *out);

/* The memcpy kinds' short and long names ("HtoD", "Host-to-Device"), by
 * CUpti_ActivityMemcpyKind; past the table: those of 0, "unknown". */
enum { COPY_KIND_COUNT = 11 };
extern const char *const copy_kinds[COPY_KIND_COUNT][2];
const char *copy_kind_name(uint32_t kind);
const char *copy_kind_long(uint32_t kind);
const char *mem_kind_name(uint32_t kind);     /* "pageable", ... */
const char *drop_where_name(uint32_t where);  /* "ring", ... */
const char *sync_type_name(uint32_t type);    /* "stream_synchronize", ... */
const char *launch_type_name(uint32_t type);  /* "regular", ... */
/* A stream, event or context id CUPTI gives as "not applicable"
 * (CUPTI_SYNCHRONIZATION_INVALID_VALUE): a context synchronisation has no
 * stream, a stream synchronisation no event.  Shown as null / "-". */
#define TOOL_NO_ID 0xFFFFFFFFu
const char *source_kind_name(uint32_t kind);  /* "thread", ... */
const char *clock_name(uint32_t id);          /* "monotonic", ... */

/* Demangles a C++ symbol with libstdc++'s __cxa_demangle; returns a malloc'd
 * string, or a copy of the input when it is not a mangled name. */
char *demangle(const char *mangled);
/* nsys-style short name: demangled without return type, scope, template
 * arguments and parameters ("void ns::k<int>(float*)" -> "k"). malloc'd. */
char *short_name(const char *demangled);
/* Where the parameter list of a demangled name starts: its first '(' past
 * the first character and outside template brackets that does not open
 * "(anonymous namespace)"; strlen(demangled) when it has none.
 * "void at::native::(anonymous namespace)::k<float>(float*)" -> the '(' of
 * "(float*)". */
size_t name_params_at(const char *demangled);
/* The name forms of `gpuprof stats --names` for a mangled (or plain) symbol,
 * malloc'd.  full: demangled; a mangled name __cxa_demangle rejects is its
 * scope-qualified name read from the mangling's start, then the mangled name
 * in brackets ("cutlass::Kernel [_ZN7cutlass6KernelI...]").  base: as nsys
 * :base, the short_name of the demangled name; for a rejected name the last
 * component of that scope ("Kernel"). */
char *name_full(const char *mangled);
char *name_base(const char *mangled);
/* A name in at most w bytes, malloc'd (a table's name column narrower than
 * its names): s itself when it fits; a demangled C++ signature with its
 * parameters as "(...)", then its template arguments cut at depth 2, 1, 0
 * ("k<...>(...)"), then its short_name; what still does not fit, and any
 * other name, with "..." in the middle. */
char *name_fit(const char *s, size_t w);

/* Sorting helpers */
int cmp_u64(const void *a, const void *b);
int cmp_double(const void *a, const void *b);
/* The k-th smallest (from 0) of v[0 .. n), k < n: moved to v[k], the
 * smaller ones before it, the larger after (Hoare's selection, linear on
 * average); the value a sort would put at k. */
uint64_t u64_select(uint64_t *v, size_t n, size_t k);

/* Seconds on clock c: the monotonic clock (phase times for --verbose), the
 * CPU time the calling thread has used, the real time. */
double clock_s(clockid_t c);
static inline double mono_s(void) { return clock_s(CLOCK_MONOTONIC); }
static inline double thread_cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

#endif
