/* util.c — see util.h. */
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "gp_trace.h"

/* p, or the message and exit 2 when the allocation of n bytes failed */
static void *alloc_or_exit(void *p, size_t n)
{
	if (!p) {
		fprintf(stderr, "gpuprof: out of memory (%zu bytes)\n", n);
		exit(2);
	}
	return p;
}

void *xmalloc(size_t n) { return alloc_or_exit(malloc(n ? n : 1), n); }
void *xcalloc(size_t n, size_t sz) { return alloc_or_exit(calloc(n ? n : 1, sz ? sz : 1), n * sz); }
void *xrealloc(void *p, size_t n) { return alloc_or_exit(realloc(p, n ? n : 1), n); }

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = xmalloc(n);
	memcpy(d, s, n);
	return d;
}

void vec_reserve(void **arr, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return;
	size_t nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	*arr = xrealloc(*arr, nc * esz);
	*cap = nc;
}

void vec_reserve_zeroed(void **arr, size_t *cap, size_t need, size_t esz)
{
	size_t had = *cap;
	vec_reserve(arr, cap, need, esz);
	memset((char *)*arr + had * esz, 0, (*cap - had) * esz);
}

/* An element that insert_tail moves fits this (the largest sorted so:
 * the steps' operations, ~150 bytes) */
#define INSERT_ESZ_MAX 512

/* Insertion of v[from, n) into the sorted v[0, from): each element moved
 * back past those greater than it (stable), while the elements passed in
 * all stay within budget.  Where it stopped: n, all sorted; else v[0, i)
 * is sorted and v[i, n) as it was. */
static size_t insert_tail(char *a, size_t from, size_t n, size_t esz, int (*cmp)(const void *, const void *),
			  size_t budget)
{
	char x[INSERT_ESZ_MAX];
	for (size_t i = from ? from : 1; i < n; i++) {
		char *p = a + i * esz;
		if (cmp(p - esz, p) <= 0) continue;
		size_t j = i - 1;
		while (j > 0 && i - j <= budget && cmp(a + (j - 1) * esz, p) > 0) j--;
		if (i - j > budget) return i;
		budget -= i - j;
		memcpy(x, p, esz);
		memmove(a + (j + 1) * esz, a + j * esz, (i - j) * esz);
		memcpy(a + j * esz, x, esz);
	}
	return n;
}

void sort_tail(void *v, size_t sorted, size_t n, size_t esz, int (*cmp)(const void *, const void *), void **tmp,
	       size_t *ctmp)
{
	char *a = v;
	/* What a stream gives is mostly in order already (a few operations
	 * out of place, a few places back): insertion costs the elements it
	 * passes (a sort costs log n a element), so it goes first, with room
	 * for 8 a element on average; past that, the rest is sorted and
	 * merged.  Insertion keeps equal elements in their order, as the
	 * sort and merge do with a stable qsort (glibc's msort). */
	if (esz <= INSERT_ESZ_MAX && n > sorted) sorted = insert_tail(a, sorted, n, esz, cmp, 8 * (n - sorted));
	if (sorted >= n) return;
	if (n - sorted > 1) qsort(a + sorted * esz, n - sorted, esz, cmp);
	if (!sorted || cmp(a + (sorted - 1) * esz, a + sorted * esz) <= 0) return;
	vec_reserve(tmp, ctmp, sorted, esz);
	char *t = *tmp;
	memcpy(t, a, sorted * esz);
	size_t i = 0, j = sorted, o = 0;
	while (i < sorted && j < n) {
		if (cmp(a + j * esz, t + i * esz) < 0) memcpy(a + o++ * esz, a + j++ * esz, esz);
		else memcpy(a + o++ * esz, t + i++ * esz, esz);
	}
	memcpy(a + o * esz, t + i * esz, (sorted - i) * esz);
}

void bytes_put(struct bytes *b, const void *p, size_t n)
{
	vec_reserve((void **)&b->v, &b->cap, b->n + n, 1);
	if (n) memcpy(b->v + b->n, p, n);
	b->n += n;
}

void bytes_u64(struct bytes *b, uint64_t x) { bytes_put(b, &x, sizeof(x)); }

size_t varint_enc(uint8_t out[10], uint64_t x)
{
	size_t n = 0;
	while (x >= 0x80) {
		out[n++] = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	out[n++] = (uint8_t)x;
	return n;
}

uint64_t varint_dec(const uint8_t **p)
{
	uint64_t x = 0;
	for (int sh = 0;; sh += 7) {
		x |= (uint64_t)(**p & 0x7f) << sh;
		if (!(*(*p)++ & 0x80)) return x;
	}
}

void bytes_varint(struct bytes *b, uint64_t x)
{
	vec_reserve((void **)&b->v, &b->cap, b->n + 10, 1);
	b->n += varint_enc(b->v + b->n, x);
}

void bytes_free(struct bytes *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

int bytes_equal(const struct bytes *a, const struct bytes *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->v, b->v, a->n));
}

int starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

int has_ci(const char *s, const char *sub)
{
	size_t n = strlen(sub);
	for (; *s; s++)
		if (!strncasecmp(s, sub, n)) return 1;
	return 0;
}

/* ------------------------------------------------------------ u32map */
/* The slot of key, or the empty one where it would go (m->cap > 0): the
 * hash's top 32 bits scaled to the capacity (Lemire's fastrange). */
static uint32_t *u32map_slot(const struct u32map *m, uint32_t key)
{
	size_t i = (size_t)(((mix64(key) >> 32) * m->cap) >> 32);
	while (m->kv[2 * i] && m->kv[2 * i] != key + 1) i = i + 1 == m->cap ? 0 : i + 1;
	return &m->kv[2 * i];
}

void u32map_reserve(struct u32map *m, size_t n)
{
	if (n * 4 <= m->cap * 3) return;
	struct u32map o = *m;
	m->cap = n * 4 / 3 + 1;
	m->kv = xcalloc(m->cap, 2 * sizeof(*m->kv));
	for (size_t i = 0; i < o.cap; i++)
		if (o.kv[2 * i]) memcpy(u32map_slot(m, o.kv[2 * i] - 1), &o.kv[2 * i], 2 * sizeof(*o.kv));
	free(o.kv);
}

void u32map_put(struct u32map *m, uint32_t key, uint32_t val)
{
	if ((m->n + 1) * 4 > m->cap * 3) u32map_reserve(m, 2 * m->n + 48); /* grown to 3/8 full */
	uint32_t *s = u32map_slot(m, key);
	m->n += !s[0];
	s[0] = key + 1;
	s[1] = val;
}

uint64_t u32map_find(const struct u32map *m, uint32_t key)
{
	const uint32_t *s = m->cap ? u32map_slot(m, key) : NULL;
	return s && s[0] ? (uint64_t)s[1] + 1 : 0;
}

void u32map_free(struct u32map *m) { free(m->kv); *m = (struct u32map){ 0 }; }

/* ------------------------------------------------------------ u64map */
void u64map_init(u64map *m) { memset(m, 0, sizeof(*m)); }

void u64map_free(u64map *m)
{
	free(m->slot); free(m->used);
	memset(m, 0, sizeof(*m));
}

static void u64map_grow(u64map *m)
{
	u64map o = *m;
	m->cap = o.cap ? o.cap * 2 : 64;
	m->slot = xcalloc(m->cap, sizeof(*m->slot));
	m->used = xcalloc(m->cap, 1);
	m->n = 0;
	for (size_t i = 0; i < o.cap; i++)
		if (o.used[i])
			*u64map_get(m, o.slot[i].key, MAP_INSERT) = o.slot[i].val;
	free(o.slot); free(o.used);
}

/* The slot of key, or the empty one where it would go (m->cap > 0). */
static size_t u64map_slot(const u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = mix64(key) & mask;
	while (m->used[i] && m->slot[i].key != key)
		i = (i + 1) & mask;
	return i;
}

uint64_t *u64map_get(u64map *m, uint64_t key, enum map_mode mode)
{
	if (!m->cap) {
		if (mode == MAP_FIND)
			return NULL;
		u64map_grow(m);
	}
	size_t i = u64map_slot(m, key);
	if (m->used[i])
		return &m->slot[i].val;
	if (mode == MAP_FIND)
		return NULL;
	if ((m->n + 1) * 2 > m->cap) {
		u64map_grow(m);
		return u64map_get(m, key, MAP_INSERT);
	}
	m->used[i] = 1; m->slot[i].key = key; m->slot[i].val = 0; m->n++;
	return &m->slot[i].val;
}

int u64map_del(u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = m->cap ? u64map_slot(m, key) : 0;
	if (!m->cap || !m->used[i])
		return 0;
	/* backward-shift deletion keeps probe chains intact without tombstones */
	m->used[i] = 0; m->n--;
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!m->used[j])
			break;
		size_t h = mix64(m->slot[j].key) & mask;
		/* move j to i when h is not cyclically in (i, j] */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			m->slot[i].key = m->slot[j].key; m->slot[i].val = m->slot[j].val; m->used[i] = 1;
			m->used[j] = 0;
			i = j;
		}
	}
	return 1;
}

void *vec_keyed(u64map *m, uint64_t key, void **arr, size_t *n, size_t *cap, size_t esz, const void *init)
{
	uint64_t *slot = u64map_get(m, key, MAP_INSERT);
	if (!*slot) {
		vec_reserve(arr, cap, *n + 1, esz);
		memcpy((char *)*arr + *n * esz, init, esz);
		*slot = ++*n;
	}
	return (char *)*arr + (*slot - 1) * esz;
}

/* ------------------------------------------------------------ strmap */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ULL; }
	return h;
}

void strmap_init(strmap *m) { memset(m, 0, sizeof(*m)); }

void strmap_free(strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys); free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* The slot of key, or the empty one where it would go (m->cap > 0). */
static size_t strmap_slot(const strmap *m, const char *key)
{
	size_t mask = m->cap - 1, i = hash_str(key) & mask;
	while (m->keys[i] && strcmp(m->keys[i], key))
		i = (i + 1) & mask;
	return i;
}

static void strmap_grow(strmap *m)
{
	strmap o = *m;
	m->cap = o.cap ? o.cap * 2 : 64;
	m->keys = xcalloc(m->cap, sizeof(char *));
	m->vals = xcalloc(m->cap, sizeof(size_t));
	for (size_t i = 0; i < o.cap; i++) {
		if (!o.keys[i])
			continue;
		size_t j = strmap_slot(m, o.keys[i]);
		m->keys[j] = o.keys[i]; m->vals[j] = o.vals[i];
	}
	free(o.keys); free(o.vals);
}

size_t *strmap_get(strmap *m, const char *key, int *is_new)
{
	if ((m->n + 1) * 4 > m->cap * 3)
		strmap_grow(m);
	size_t i = strmap_slot(m, key);
	if (is_new)
		*is_new = !m->keys[i];
	if (!m->keys[i]) {
		m->keys[i] = xstrdup(key); m->vals[i] = 0; m->n++;
	}
	return &m->vals[i];
}

size_t *strmap_find(const strmap *m, const char *key)
{
	if (!m->cap) return NULL;
	size_t i = strmap_slot(m, key);
	return m->keys[i] ? &m->vals[i] : NULL;
}

/* ------------------------------------------------------------ escaping */
int utf8_seq_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0];
	int n; uint32_t cp;
	if (c < 0x80) return 1;
	if (c >= 0xc2 && c <= 0xdf) { n = 2; cp = c & 0x1f; }
	else if (c >= 0xe0 && c <= 0xef) { n = 3; cp = c & 0x0f; }
	else if (c >= 0xf0 && c <= 0xf4) { n = 4; cp = c & 0x07; }
	else return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	putc('"', f);
	while (*s) {
		unsigned c = *s;
		if (c == '"' || c == '\\') { putc('\\', f); putc(c, f); s++; continue; }
		if (c < 0x20) {
			switch (c) {
			case '\n': fputs("\\n", f); break;
			case '\t': fputs("\\t", f); break;
			case '\r': fputs("\\r", f); break;
			case '\b': fputs("\\b", f); break;
			case '\f': fputs("\\f", f); break;
			default: fprintf(f, "\\u%04x", c);
			}
			s++;
			continue;
		}
		if (c == 0x7f) { fputs("\\u007f", f); s++; continue; }
		int n = utf8_seq_len((const char *)s);
		if (!n) { fputs("\\ufffd", f); s++; continue; }
		fwrite(s, 1, n, f);
		s += n;
	}
	putc('"', f);
}

void csv_str(FILE *f, const char *s)
{
	if (!s) s = "";
	if (!strpbrk(s, ",\"\n\r")) { fputs(s, f); return; }
	putc('"', f);
	for (; *s; s++) {
		if (*s == '"') putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}

/* ------------------------------------------------------------ formatting */
size_t fmt_list(char *buf, size_t n, const char *const *names, size_t count)
{
	size_t l = 0;
	buf[0] = 0;
	for (size_t i = 0; i < count && l < n; i++)
		l += (size_t)snprintf(buf + l, n - l, "%s%s", i ? ", " : "", names[i]);
	return l < n ? l : n - 1;
}

void fmt_bytes(char *buf, size_t n, uint64_t b)
{
	if (b < 1000) snprintf(buf, n, "%" PRIu64 " B", b);
	else if (b < 1000000) snprintf(buf, n, "%.1f kB", b / 1e3);
	else if (b < 1000000000) snprintf(buf, n, "%.1f MB", b / 1e6);
	else snprintf(buf, n, "%.1f GB", b / 1e9);
}

void fmt_dur(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000) snprintf(buf, n, "%" PRIu64 " ns", ns);
	else if (ns < 1000000) snprintf(buf, n, "%.3f us", ns / 1e3);
	else if (ns < 1000000000) snprintf(buf, n, "%.3f ms", ns / 1e6);
	else snprintf(buf, n, "%.3f s", ns / 1e9);
}

void fmt_iso8601(char *buf, size_t n, uint64_t rt)
{
	time_t sec = (time_t)(rt / 1000000000ULL);
	struct tm tm;
	if (!gmtime_r(&sec, &tm)) { snprintf(buf, n, "?"); return; }
	char d[32];
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%09" PRIu64 "Z", d, (uint64_t)(rt % 1000000000ULL));
}

void fprint_us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	fprintf(f, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

int parse_duration_ns(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -1;
	double mul = 1;
	if (!*end || !strcmp(end, "ns")) mul = 1;
	else if (!strcmp(end, "us")) mul = 1e3;
	else if (!strcmp(end, "ms")) mul = 1e6;
	else if (!strcmp(end, "s")) mul = 1e9;
	else return -1;
	*out = (uint64_t)(v * mul + 0.5);
	return 0;
}

/* ------------------------------------------------------------ names */
/* CUpti_ActivityMemcpyKind */
const char *const copy_kinds[COPY_KIND_COUNT][2] = {
	{ "unknown", "Unknown" },        { "HtoD", "Host-to-Device" },  { "DtoH", "Device-to-Host" },
	{ "HtoA", "Host-to-Array" },     { "AtoH", "Array-to-Host" },   { "AtoA", "Array-to-Array" },
	{ "AtoD", "Array-to-Device" },   { "DtoA", "Device-to-Array" }, { "DtoD", "Device-to-Device" },
	{ "HtoH", "Host-to-Host" },      { "PtoP", "Peer-to-Peer" },
};

const char *copy_kind_name(uint32_t k) { return copy_kinds[k < COPY_KIND_COUNT ? k : 0][0]; }
const char *copy_kind_long(uint32_t k) { return copy_kinds[k < COPY_KIND_COUNT ? k : 0][1]; }

/* names[k], "unknown" past the list or where it has none */
#define NAME_OF(names, k) ((k) < sizeof(names) / sizeof(names[0]) && (names)[k] ? (names)[k] : "unknown")

const char *mem_kind_name(uint32_t k)
{
	static const char *const n[] = { "unknown", "pageable", "pinned", "device",
		"array", "managed", "device_static", "managed_static" };
	return NAME_OF(n, k);
}

const char *sync_type_name(uint32_t t)
{
	/* CUpti_ActivitySynchronizationType */
	static const char *const n[] = { "unknown", "event_synchronize", "stream_wait_event",
		"stream_synchronize", "context_synchronize" };
	return NAME_OF(n, t);
}

const char *launch_type_name(uint32_t t)
{
	/* CUpti_ActivityLaunchType */
	static const char *const n[] = { "regular", "cooperative_single_device", "cooperative_multi_device",
		"cbl_commandlist" };
	return NAME_OF(n, t);
}

const char *drop_where_name(uint32_t w)
{
	static const char *const n[] = { [GP_DROP_RING] = "ring", [GP_DROP_CUPTI] = "cupti",
		[GP_DROP_NO_RING] = "no_ring", [GP_DROP_WRITE] = "write" };
	return NAME_OF(n, w);
}

const char *source_kind_name(uint32_t k)
{
	static const char *const n[] = { [GP_SOURCE_META] = "meta", [GP_SOURCE_THREAD] = "thread",
		[GP_SOURCE_ACTIVITY] = "activity", [GP_SOURCE_TOOL] = "tool" };
	return NAME_OF(n, k);
}

const char *clock_name(uint32_t id)
{
	static const char *const n[] = { [GP_CLOCK_MONOTONIC] = "monotonic", [GP_CLOCK_REALTIME] = "realtime",
		[GP_CLOCK_CUPTI] = "cupti" };
	return NAME_OF(n, id);
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

uint64_t u64_select(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		uint64_t pv = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pv) i++;
			while (v[j] > pv) j--;
			if (i <= j) {
				uint64_t t = v[i]; v[i] = v[j]; v[j] = t;
				i++;
				if (j == 0) break;
				j--;
			}
		}
		/* [lo, j] <= pv, [i, hi] >= pv, and between them pv itself */
		if (k <= j) hi = j;
		else if (k >= i) lo = i;
		else break;
	}
	return v[k];
}

double clock_s(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
