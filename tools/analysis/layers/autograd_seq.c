/* autograd_seq.c — see autograd_seq.h.
 *
 * fwd[range id - fwd_lo]: what the launches inside a range say, ST_NONE (none seen),
 * ST_UNKNOWN (a launch without a known path), or ST_PATH + k (the common
 * prefix of their paths, path k).  Paths are interned by content, so equal
 * paths have equal ids. */
#include "analysis/layers/autograd_seq.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

enum { ST_NONE = 0, ST_UNKNOWN = 1, ST_PATH = 2 };

struct seq_path {
	const char **names;
	uint32_t n;
};

struct autograd_seq {
	const struct attribution *a;
	uint32_t *fwd;                  /* ranges fwd_lo .. fwd_lo + nfwd (the ids touched: all of
					 * them on one thread, a slice's in a time shard) */
	size_t fwd_lo, nfwd;
	struct seq_path *paths; size_t npaths, cpaths;
	strmap path_idx;                /* names joined by \x01 -> path index */
	struct layer_bwd_table bwd;     /* by range id */
	uint32_t *buf; size_t cbuf;     /* attribution_open_on's answers */
};

/* The N of ", seq = N" in a range's text (followed by its end or ','); -1
 * none. */
static int64_t seq_of(const char *name)
{
	static const char key[] = ", seq = ";
	for (const char *p = strstr(name, key); p; p = strstr(p + 1, key)) {
		const char *d = p + sizeof(key) - 1;
		if (*d < '0' || *d > '9') continue;
		int64_t v = 0;
		for (; *d >= '0' && *d <= '9'; d++) {
			if (v > (INT64_MAX - 9) / 10) return -1;
			v = v * 10 + (*d - '0');
		}
		if (*d == 0 || *d == ',') return v;
	}
	return -1;
}

struct autograd_seq *autograd_seq_new(const struct attribution *a)
{
	struct autograd_seq *s = xcalloc(1, sizeof(*s));
	s->a = a;
	strmap_init(&s->path_idx);
	return s;
}

void autograd_seq_free(struct autograd_seq *s)
{
	if (!s) return;
	for (size_t i = 0; i < s->npaths; i++) free(s->paths[i].names);
	free(s->paths);
	strmap_free(&s->path_idx);
	layer_bwd_free(&s->bwd);
	free(s->fwd);
	free(s->buf);
	free(s);
}

static uint32_t fwd_get(const struct autograd_seq *s, size_t id)
{
	return id >= s->fwd_lo && id - s->fwd_lo < s->nfwd ? s->fwd[id - s->fwd_lo] : ST_NONE;
}

/* fwd's slot of range id: the window grows to hold it (by as much again
 * as it holds, within the ranges' ids) */
static uint32_t *fwd_slot(struct autograd_seq *s, size_t id)
{
	if (!s->nfwd || id < s->fwd_lo || id - s->fwd_lo >= s->nfwd) {
		size_t nr = attribution_nranges(s->a), lo = s->nfwd ? s->fwd_lo : id, hi = s->nfwd ? s->fwd_lo + s->nfwd : id + 1;
		size_t more = s->nfwd > 1024 ? s->nfwd : 1024;
		if (id < lo) lo = id > more ? id - more : 0;
		if (id >= hi) hi = id + 1 + more < nr ? id + 1 + more : nr;
		uint32_t *v = xcalloc(hi - lo, sizeof(*v));
		if (s->nfwd) memcpy(v + (s->fwd_lo - lo), s->fwd, s->nfwd * sizeof(*v));
		free(s->fwd);
		s->fwd = v;
		s->fwd_lo = lo;
		s->nfwd = hi - lo;
	}
	return &s->fwd[id - s->fwd_lo];
}

static uint32_t intern(struct autograd_seq *s, const char *const *names, uint32_t n)
{
	size_t len = 1;
	for (uint32_t i = 0; i < n; i++) len += strlen(names[i]) + 1;
	char *key = xmalloc(len), *p = key;
	for (uint32_t i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		memcpy(p, names[i], l);
		p += l;
		*p++ = '\x01';
	}
	*p = 0;
	int is_new;
	size_t *slot = strmap_get(&s->path_idx, key, &is_new);
	free(key);
	if (is_new) {
		struct seq_path sp = { xmalloc((n ? n : 1) * sizeof(char *)), n };
		for (uint32_t i = 0; i < n; i++) sp.names[i] = names[i];
		*slot = s->npaths;
		VEC_PUSH(s->paths, s->npaths, s->cpaths, sp);
	}
	return ST_PATH + (uint32_t)*slot;
}

/* the state of a range that had state a and a launch with state b */
static uint32_t merge(struct autograd_seq *s, uint32_t a, uint32_t b)
{
	if (a == ST_NONE || a == b) return b;
	if (a == ST_UNKNOWN || b == ST_UNKNOWN) return ST_UNKNOWN;
	const struct seq_path *x = &s->paths[a - ST_PATH], *y = &s->paths[b - ST_PATH];
	uint32_t k = 0;
	while (k < x->n && k < y->n && !strcmp(x->names[k], y->names[k])) k++;
	return intern(s, (const char *const *)x->names, k);
}

void autograd_seq_merge(struct autograd_seq *s, const struct autograd_seq *src, struct stacks *stk)
{
	/* src's paths as s's */
	uint32_t *as = xcalloc(src->npaths ? src->npaths : 1, sizeof(*as));
	for (size_t k = 0; k < src->npaths; k++) {
		const struct seq_path *p = &src->paths[k];
		const char **names = xcalloc(p->n ? p->n : 1, sizeof(*names));
		for (uint32_t i = 0; i < p->n; i++) names[i] = stacks_intern(stk, p->names[i]);
		as[k] = intern(s, names, p->n);
		free(names);
	}
	for (size_t i = 0; i < src->nfwd; i++) {
		uint32_t st = src->fwd[i];
		if (st == ST_NONE) continue;
		uint32_t *slot = fwd_slot(s, src->fwd_lo + i);
		*slot = merge(s, *slot, st >= ST_PATH ? as[st - ST_PATH] : st);
	}
	free(as);
	layer_bwd_merge(&s->bwd, &src->bwd);
}

static int64_t range_seq(const struct autograd_seq *s, uint32_t id)
{
	return seq_of(attribution_name(s->a, attribution_range(s->a, id).name));
}

void autograd_seq_forward(struct autograd_seq *s, uint32_t pid, uint32_t tid, uint64_t t, const char *const *path,
			  uint32_t n)
{
	size_t m = layers_open_on(s->a, pid, tid, t, &s->buf, &s->cbuf);
	if (!m) return;
	uint32_t st = ST_NONE;
	for (size_t i = 0; i < m; i++) {
		uint32_t id = s->buf[i];
		if (range_seq(s, id) < 0) continue;
		if (st == ST_NONE) st = path ? intern(s, path, n) : ST_UNKNOWN;
		uint32_t *slot = fwd_slot(s, id);
		*slot = merge(s, *slot, st);
	}
}

int autograd_seq_backward(struct autograd_seq *s, uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns)
{
	size_t m = layers_open_on(s->a, pid, tid, t, &s->buf, &s->cbuf);
	uint32_t best = UINT32_MAX, depth = UINT32_MAX;
	for (size_t i = 0; i < m; i++) {
		const struct attr_range r = attribution_range(s->a, s->buf[i]);
		if (r.depth < depth && range_seq(s, s->buf[i]) >= 0) {
			best = s->buf[i];
			depth = r.depth;
		}
	}
	if (best == UINT32_MAX) return 0;
	layer_bwd_add(&s->bwd, best, ns, 1);
	return 1;
}

/* A forward op range's state: its own launches', else its nearest
 * enclosing forward op range's that had launches; ST_UNKNOWN when a range
 * without a seq comes first or none had launches. */
static uint32_t forward_state(struct autograd_seq *s, uint32_t id)
{
	uint32_t st = fwd_get(s, id);
	if (st != ST_NONE) return st;
	const struct attr_range r = attribution_range(s->a, id);
	size_t m = layers_open_on(s->a, r.pid, r.tid, r.s, &s->buf, &s->cbuf);
	/* the enclosing ranges, innermost first: by depth, deepest first
	 * (push/pop ranges of one thread nest) */
	uint32_t below = r.depth;
	for (;;) {
		uint32_t next = UINT32_MAX, nd = 0;
		for (size_t i = 0; i < m; i++) {
			const struct attr_range x = attribution_range(s->a, s->buf[i]);
			if (x.depth < below && (next == UINT32_MAX || x.depth > nd)) {
				next = s->buf[i];
				nd = x.depth;
			}
		}
		if (next == UINT32_MAX || range_seq(s, next) < 0) return ST_UNKNOWN;
		st = fwd_get(s, next);
		if (st != ST_NONE) return st;
		below = nd;
	}
}

/* per process: seq -> the agreed state (ST_UNKNOWN once two disagree) */
struct seq_table {
	u64map pid_idx;   /* pid -> index in maps + 1 */
	u64map *maps; size_t n, cap;
};

static u64map *seq_map(struct seq_table *t, uint32_t pid, int insert)
{
	static const u64map empty;
	if (!insert && !u64map_get(&t->pid_idx, pid, MAP_FIND)) return NULL;
	return VEC_KEYED(&t->pid_idx, pid, t->maps, t->n, t->cap, &empty);
}

void autograd_seq_resolve(struct autograd_seq *s, struct stacks *stk, layers_backward_fn cb, void *ctx)
{
	struct seq_table t = { 0 };
	u64map_init(&t.pid_idx);
	size_t nr = attribution_nranges(s->a);
	/* two rounds, so the table holds only the seqs some forward op range
	 * with a layer has: the paths first, then whatever disagrees */
	for (int round = 0; round < 2 && s->bwd.n; round++) {
		for (size_t i = 0; i < nr; i++) {
			const struct attr_range r = attribution_range(s->a, (uint32_t)i);
			if (r.kind != GP_NVTX_PUSHPOP) continue;
			int64_t seq = range_seq(s, (uint32_t)i);
			if (seq < 0 || layers_autograd_thread(stacks_thread_name(stk, r.pid, r.tid))) continue;
			uint32_t st = forward_state(s, (uint32_t)i);
			int layer = st >= ST_PATH && s->paths[st - ST_PATH].n > 0;
			if (round == 0 && !layer) continue;
			u64map *m = seq_map(&t, r.pid, round == 0);
			uint64_t *v = m ? u64map_get(m, (uint64_t)seq, round == 0 ? MAP_INSERT : MAP_FIND) : NULL;
			if (!v) continue;
			if (!*v) *v = st;
			else if (*v != st) *v = ST_UNKNOWN;
		}
	}
	for (size_t i = 0; i < s->bwd.n; i++) {
		const struct layer_bwd *w = &s->bwd.v[i];
		const struct attr_range r = attribution_range(s->a, w->key);
		u64map *m = seq_map(&t, r.pid, 0);
		uint64_t *v = m ? u64map_get(m, (uint64_t)range_seq(s, w->key), MAP_FIND) : NULL;
		if (v && *v >= ST_PATH) {
			const struct seq_path *p = &s->paths[*v - ST_PATH];
			cb(ctx, (const char *const *)p->names, p->n, w->ns, w->kernels);
		} else {
			cb(ctx, NULL, 0, w->ns, w->kernels);
		}
	}
	for (size_t i = 0; i < t.n; i++) u64map_free(&t.maps[i]);
	free(t.maps);
	u64map_free(&t.pid_idx);
}
