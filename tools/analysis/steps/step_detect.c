/* step_detect.c — see step_detect.h.  The trace method's rules (the
 * signatures, the 60 % and 50 % tests, sub-loops, the shortest period and
 * the phase by evidence: the input copy, else the longest median GPU idle
 * gap before it, else the earliest) are docs/STEPS.md "Step detection"'s;
 * the comments below say where each is made. */
#include "analysis/steps/step_detect.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/join/opjoin.h"
#include "common/tool.h"
#include "common/util.h"

#define SAMPLE_MAX (1u << 20) /* GPU operations kept per process for the trace method */

struct sample { uint64_t s, e, sig, q; }; /* q: the stream (step_stream_key) */

struct dproc {
	uint32_t pid;
	struct sample *v; size_t n, cap;
	struct step_plan plan;
};

struct step_detect {
	gp_reader *r;
	int want;
	char *range_name;
	u64map pid2p;
	struct dproc *p; size_t np, cp;
};

/* A kernel's signature is its name id (< 2^32); a memcpy's or memset's has
 * bit 63 set, its kind in bits 56..62, the copy kind in 48..55, the size
 * (modulo 2^48) below. */
#define SIG_OP (1ull << 63)
#define SIG_BYTES ((1ull << 48) - 1)

uint64_t step_sig(int op_kind, uint32_t name_id, uint32_t copy_kind, uint64_t bytes)
{
	if (op_kind == OP_KERNEL) return name_id;
	return SIG_OP | (uint64_t)(op_kind & 0x7f) << 56 | (uint64_t)(copy_kind & 0xff) << 48 | (bytes & SIG_BYTES);
}

const char *step_method_name(int m)
{
	return m == STEP_NVTX ? "nvtx" : m == STEP_TRACE ? "trace" : "none";
}

uint64_t step_stream_key(uint32_t device, uint32_t stream) { return (uint64_t)device << 32 | stream; }

int step_sig_is_marker(uint64_t sig) { return (sig & SIG_OP) != 0; }

uint64_t step_sig_sizeless(uint64_t sig) { return sig & SIG_OP ? sig & ~SIG_BYTES : sig; }

uint64_t *step_stream_last(struct step_stream_last **v, size_t *n, size_t *cap, uint64_t q)
{
	size_t k = 0;
	while (k < *n && (*v)[k].q != q) k++;
	if (k == *n) {
		struct step_stream_last new_stream = { q, 0 };
		VEC_PUSH(*v, *n, *cap, new_stream);
	}
	return &(*v)[k].sig;
}

static int sig_kind(uint64_t sig) { return sig & SIG_OP ? (int)(sig >> 56 & 0x7f) : OP_KERNEL; }
static int sig_htod(uint64_t sig) { return sig_kind(sig) == OP_MEMCPY && (sig >> 48 & 0xff) == GP_COPY_HTOD; }

/* Splits a range name into its group and number: "step 12" -> "step", 12;
 * "ProfilerStep#7" -> "ProfilerStep", 7; "train_step" -> "train_step", -1.
 * Writes the group into buf (n bytes). */
static int64_t step_name_split(const char *name, char *buf, size_t n)
{
	size_t len = strlen(name), d = len;
	while (d > 0 && isdigit((unsigned char)name[d - 1])) d--;
	int64_t number = -1;
	size_t cut = len;
	if (d < len && len - d <= 18) {
		number = strtoll(name + d, NULL, 10);
		cut = d;
		while (cut > 0 && strchr(" #_:-.", name[cut - 1])) cut--;
		if (cut == 0) { cut = len; number = -1; } /* a bare number is its own name */
	}
	if (cut >= n) cut = n - 1;
	memcpy(buf, name, cut);
	buf[cut] = 0;
	return number;
}

char *step_name_pattern(const char *name)
{
	char grp[8];
	if (step_name_split(name, grp, sizeof(grp)) < 0) return NULL;
	size_t d = strlen(name);
	while (d && isdigit((unsigned char)name[d - 1])) d--;
	char *p = xmalloc(d + 2);
	memcpy(p, name, d);
	strcpy(p + d, "*");
	return p;
}

/* Whether a group name looks like a step (after any "domain:"). */
static int steplike(const char *group)
{
	static const char *const names[] = {
		"step", "steps", "iteration", "iter", "train_step", "training_step", "train step", "training step",
		"train_iter", "train_iteration", "train iteration", "profilerstep",
	};
	const char *colon = strrchr(group, ':');
	const char *g = colon ? colon + 1 : group;
	while (*g == ' ') g++;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(g, names[i])) return 1;
	return 0;
}

struct step_detect *step_detect_new(gp_reader *r, const struct step_detect_opts *opts)
{
	struct step_detect *d = xcalloc(1, sizeof(*d));
	d->r = r;
	d->want = opts ? opts->want : STEP_WANT_AUTO;
	d->range_name = opts && opts->range_name ? xstrdup(opts->range_name) : NULL;
	u64map_init(&d->pid2p);
	return d;
}

void step_detect_free(struct step_detect *d)
{
	if (!d) return;
	for (size_t i = 0; i < d->np; i++) {
		free(d->p[i].v);
		free(d->p[i].plan.group);
		free(d->p[i].plan.range_ids);
	}
	free(d->p);
	free(d->range_name);
	u64map_free(&d->pid2p);
	free(d);
}

static struct dproc *proc_get(struct step_detect *d, uint32_t pid)
{
	static const struct dproc zero;
	struct dproc *p = VEC_KEYED(&d->pid2p, pid, d->p, d->np, d->cp, &zero);
	p->pid = pid;
	return p;
}

void step_detect_gpu(struct step_detect *d, uint32_t pid, const gp_record *rec)
{
	struct gpu_op op;
	if (!gpu_op_of(rec, pid, &op)) return;
	struct sample sm = { op.s, op.e, step_sig(op.kind, op.name_id, op.copy_kind, op.bytes),
			     step_stream_key(op.device, op.stream) };
	struct dproc *p = proc_get(d, pid);
	if (p->n < SAMPLE_MAX) VEC_PUSH(p->v, p->n, p->cap, sm);
}

/* ------------------------------------------------------------ NVTX */
struct group {
	char *name;
	uint32_t *ids; size_t n, cap;
	uint64_t first;
};

static const struct attribution *sort_attr;
static int cmp_range_start(const void *x, const void *y)
{
	const struct attr_range a = attribution_range(sort_attr, *(const uint32_t *)x);
	const struct attr_range b = attribution_range(sort_attr, *(const uint32_t *)y);
	if (a.s != b.s) return a.s < b.s ? -1 : 1;
	if (a.e != b.e) return a.e > b.e ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Whether most of g's ranges lie inside some range of h (both sorted).
 * lo, h's first range that starts after g's, only rises: found by a walk
 * rather than a binary search, as the index reads best (in time order). */
static int inside(const struct attribution *a, const struct group *g, const struct group *h)
{
	size_t in = 0, lo = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct attr_range x = attribution_range(a, g->ids[i]);
		while (lo < h->n && attribution_range(a, h->ids[lo]).s <= x.s) lo++;
		for (size_t k = lo; k-- > 0;) {
			const struct attr_range y = attribution_range(a, h->ids[k]);
			if (h->ids[k] == g->ids[i]) continue;
			if (y.e >= x.e && (y.s < x.s || y.e > x.e || h->ids[k] < g->ids[i])) { in++; break; }
			if (lo - k > 64) break; /* ranges of one group rarely nest deeper */
		}
	}
	return in * 2 > g->n;
}

static int name_wanted(const char *want, const char *name, const char *group)
{
	return !strcmp(name, want) || !strcasecmp(group, want);
}

/* Picks the step group of process p among its NVTX ranges. */
static void plan_nvtx(struct step_detect *d, const struct attribution *a, struct dproc *p)
{
	strmap idx;
	strmap_init(&idx);
	struct group *g = NULL; size_t ng = 0, cg = 0;
	char grp[256];
	/* per name of the index, what its ranges give (a trace has far fewer
	 * names than ranges): NAME_UNSEEN, NAME_NOT_STEP, NAME_STEP (its
	 * group not made yet: made at its first range that is not empty), or
	 * the group */
	enum { NAME_UNSEEN = -3, NAME_NOT_STEP = -2, NAME_STEP = -1 };
	size_t nn = attribution_nnames(a);
	long *gof = xmalloc((nn ? nn : 1) * sizeof(*gof));
	for (size_t i = 0; i < nn; i++) gof[i] = NAME_UNSEEN;
	size_t nr = attribution_nranges(a);
	for (uint32_t id = 0; id < nr; id++) {
		const struct attr_range x = attribution_range(a, id);
		if (x.pid != p->pid) continue;
		long *gx = &gof[x.name];
		if (*gx == NAME_NOT_STEP) continue;
		if (*gx < 0) {
			const char *name = attribution_name(a, x.name);
			step_name_split(name, grp, sizeof(grp));
			if (*gx == NAME_UNSEEN) {
				*gx = (d->range_name ? name_wanted(d->range_name, name, grp) : steplike(grp))
					      ? NAME_STEP : NAME_NOT_STEP;
				if (*gx == NAME_NOT_STEP) continue;
			}
			if (x.e <= x.s) continue;
			int is_new;
			size_t *slot = strmap_get(&idx, grp, &is_new);
			if (is_new) {
				struct group ng0 = { .name = xstrdup(grp), .first = x.s };
				*slot = ng;
				VEC_PUSH(g, ng, cg, ng0);
			}
			*gx = (long)*slot;
		} else if (x.e <= x.s) {
			continue;
		}
		struct group *G = &g[*gx];
		VEC_PUSH(G->ids, G->n, G->cap, id);
		if (x.s < G->first) G->first = x.s;
	}
	free(gof);
	sort_attr = a;
	for (size_t i = 0; i < ng; i++) {
		/* most groups are in start order already (one depth's push/pop
		 * ranges pop in it): a pass in id order, reading the index in
		 * order, costs less than the sort's reads in no order */
		size_t k = 1;
		while (k < g[i].n && cmp_range_start(&g[i].ids[k - 1], &g[i].ids[k]) < 0) k++;
		if (k < g[i].n) qsort(g[i].ids, g[i].n, sizeof(uint32_t), cmp_range_start);
	}
	/* the outermost repeating group; ties: more ranges, then the earliest */
	long best = -1;
	for (size_t i = 0; i < ng; i++) {
		if (g[i].n < 2 && !d->range_name) continue;
		int in = 0;
		for (size_t k = 0; k < ng && !in; k++)
			if (k != i && g[k].n >= 2 && inside(a, &g[i], &g[k])) in = 1;
		if (in) continue;
		if (best < 0 || g[i].n > g[best].n || (g[i].n == g[best].n && g[i].first < g[best].first))
			best = (long)i;
	}
	if (best >= 0) {
		struct group *G = &g[best];
		struct step_plan *pl = &p->plan;
		pl->method = STEP_NVTX;
		pl->group = xstrdup(G->name);
		pl->a = a;
		uint64_t last_e = 0;
		for (size_t i = 0; i < G->n; i++) { /* the group's ids become the steps' */
			const struct attr_range x = attribution_range(a, G->ids[i]);
			if (pl->nsteps && x.s < last_e) { pl->overlapping++; continue; }
			G->ids[pl->nsteps++] = G->ids[i];
			last_e = x.e;
		}
		pl->range_ids = xrealloc(G->ids, pl->nsteps * sizeof(uint32_t));
		G->ids = NULL;
		const struct attr_range x0 = attribution_range(a, pl->range_ids[0]);
		int numbered = step_name_split(attribution_name(a, x0.name), grp, sizeof(grp)) >= 0;
		snprintf(pl->what, sizeof(pl->what), "NVTX %s ranges '%.160s%s' (%zu%s)",
			 x0.kind == GP_NVTX_STARTEND ? "start/end" : "push/pop", G->name, numbered ? " <N>" : "",
			 pl->nsteps, d->range_name ? ", named with --step-range" : ", outermost repeating step-like range");
	}
	for (size_t i = 0; i < ng; i++) { free(g[i].name); free(g[i].ids); }
	free(g);
	strmap_free(&idx);
}

/* ------------------------------------------------------------ trace */
static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	if (a->s != b->s) return a->s < b->s ? -1 : 1;
	if (a->e != b->e) return a->e < b->e ? -1 : 1;
	return a->sig < b->sig ? -1 : a->sig > b->sig;
}

struct occ { uint64_t sig; size_t pos; };
static int cmp_occ(const void *x, const void *y)
{
	const struct occ *a = x, *b = y;
	if (a->sig != b->sig) return a->sig < b->sig ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* o[0, n), in rising pos, sorted by signature then pos: a counting sort
 * over the signatures (a sample has a few thousand at most, in a million
 * operations; one lookup each); id, when not NULL: id[pos] = its
 * signature's rank.  The number of signatures. */
static uint32_t occ_sort(struct occ *o, size_t n, uint32_t *id)
{
	u64map seen; /* a signature -> its index in sig + 1 (VEC_KEYED) */
	u64map_init(&seen);
	struct occ *sig = NULL; /* each signature once, in the order first seen; pos: how many */
	size_t ns = 0, cs = 0;
	/* o[i]'s index in sig (in id, where there is one: made its rank at the end) */
	uint32_t *of = id ? NULL : xmalloc((n ? n : 1) * sizeof(*of));
	for (size_t i = 0; i < n; i++) {
		const struct occ first = { o[i].sig, 0 };
		struct occ *e = VEC_KEYED(&seen, o[i].sig, sig, ns, cs, &first);
		*(id ? &id[o[i].pos] : &of[i]) = (uint32_t)(e - sig);
		e->pos++;
	}
	u64map_free(&seen);
	/* by value: each one's rank and where its occurrences start */
	struct occ *by = xmalloc((ns ? ns : 1) * sizeof(*by));
	for (size_t k = 0; k < ns; k++) by[k] = (struct occ){ sig[k].sig, k };
	qsort(by, ns, sizeof(*by), cmp_occ);
	size_t *at = xmalloc((ns ? ns : 1) * sizeof(*at));
	uint32_t *rank = xmalloc((ns ? ns : 1) * sizeof(*rank));
	for (size_t r = 0, next = 0; r < ns; r++) {
		at[by[r].pos] = next;
		rank[by[r].pos] = (uint32_t)r;
		next += sig[by[r].pos].pos;
	}
	struct occ *v = xmalloc((n ? n : 1) * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		uint32_t k = id ? id[o[i].pos] : of[i];
		v[at[k]++] = o[i];
		if (id) id[o[i].pos] = rank[k];
	}
	memcpy(o, v, n * sizeof(*v));
	free(v); free(at); free(rank); free(by); free(sig); free(of);
	return (uint32_t)ns;
}

struct seg { uint64_t h; size_t len, a; }; /* a: where it starts */
/* segments alike (content hash and length): how many (0: a free slot of
 * try_group's table), the first one's start */
struct seg_kind { uint64_t h; size_t len, m, a; };

/* A signature that cuts the sample into repeating segments: an
 * operation's, or (ctx != 0) a copy's or memset's told apart by the one
 * before it on its stream (ctx: that one's signature). */
struct cand {
	uint64_t sig, ctx;
	const struct occ *ov;    /* the occurrence array it indexes */
	size_t o0, c;            /* its occurrences: ov[o0 .. o0 + c) */
	size_t len, m;           /* the most common segment: length, how many */
	uint64_t hash;           /* ... and content hash */
	uint64_t gap;            /* median GPU idle gap before it */
	uint64_t htod_back;      /* median operations since the previous host-to-device copy */
};

/* Where a step starts, among candidates of one period (the phase: the
 * input copy, else the longest median gap, else the earliest). */
static int phase_better(const struct cand *c, const struct cand *b)
{
	int cc = sig_htod(c->sig), bc = sig_htod(b->sig);
	if (cc != bc) return cc;
	if (cc && c->htod_back != b->htod_back) return c->htod_back > b->htod_back;
	if (!cc && c->gap != b->gap) return c->gap > b->gap;
	return c->ov[c->o0].pos < b->ov[b->o0].pos;
}

static int cmp_cand_len(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->len != b->len) return a->len < b->len ? -1 : 1;
	return a->ov[a->o0].pos < b->ov[b->o0].pos ? -1 : a->ov[a->o0].pos > b->ov[b->o0].pos;
}

/* The context of the sub-loop test: the sample's signatures as dense ids,
 * their order-free prefix hash, and a count array. */
struct subloop {
	const uint32_t *id;
	const uint64_t *pre;
	int32_t *cnt;            /* the common segment's counts minus the segment's */
};

/* How far segment [a, b) is from the content of [ra, ra + len) (the common
 * segment): the size of the multisets' symmetric difference, or more than
 * `thr` (then any value > thr). */
static size_t seg_distance(struct subloop *sl, size_t ra, size_t len, size_t a, size_t b, size_t thr)
{
	size_t l = b - a;
	if (l > len + thr || len > l + thr) return thr + 1;
	for (size_t i = ra; i < ra + len; i++) sl->cnt[sl->id[i]]++;
	size_t dist = len;
	for (size_t i = a; i < b; i++) {
		if (sl->cnt[sl->id[i]]-- > 0) dist--;
		else dist++;
	}
	for (size_t i = ra; i < ra + len; i++) sl->cnt[sl->id[i]] = 0;
	for (size_t i = a; i < b; i++) sl->cnt[sl->id[i]] = 0;
	return dist;
}

/* Whether candidate c marks a sub-loop of the step (a layer) rather than
 * the step: the segments unlike the common one (their contents differ by
 * more than max(2, 10 %) operations) recur every k >= 2 segments in at
 * least 60 % of their spacings, after the leading ones (warm-up). */
static int is_subloop(struct subloop *sl, const struct cand *c)
{
	const struct occ *o = c->ov;
	size_t thr = c->len / 10 > 2 ? c->len / 10 : 2, ref = SIZE_MAX;
	for (size_t k = 0; k + 1 < c->c && ref == SIZE_MAX; k++) {
		size_t a = o[c->o0 + k].pos, b = o[c->o0 + k + 1].pos;
		if (b - a == c->len && sl->pre[b] - sl->pre[a] == c->hash) ref = a;
	}
	if (ref == SIZE_MAX) return 0;
	uint64_t *un = xmalloc(c->c * sizeof(*un)); /* the unlike segments' places, then their spacings */
	size_t nun = 0;
	int lead = 1;
	for (size_t k = 0; k + 1 < c->c; k++) {
		size_t a = o[c->o0 + k].pos, b = o[c->o0 + k + 1].pos;
		int like = (b - a == c->len && sl->pre[b] - sl->pre[a] == c->hash) ||
			   seg_distance(sl, ref, c->len, a, b, thr) <= thr;
		if (like) lead = 0;
		else if (!lead) un[nun++] = k;
	}
	int sub = 0;
	if (nun >= 3) {
		size_t ns = nun - 1, best = 0;
		uint64_t bestk = 0;
		for (size_t i = 0; i < ns; i++) un[i] = un[i + 1] - un[i];
		qsort(un, ns, sizeof(*un), cmp_u64);
		for (size_t i = 0; i < ns;) {
			size_t j = i;
			while (j < ns && un[j] == un[i]) j++;
			if (j - i > best) { best = j - i; bestk = un[i]; }
			i = j;
		}
		sub = bestk >= 2 && best * 10 >= ns * 6;
	}
	free(un);
	return sub;
}

/* The trace method's working arrays over one process's sample. */
struct tscan {
	size_t n;
	const uint64_t *pre, *gap, *back;
	struct subloop *near;    /* not NULL: count segments like the common one as alike (the third look) */
	struct seg *sg; size_t csg;
	struct seg_kind *kind; size_t ckind;
	uint64_t *gv; size_t cgv;
	struct cand *cv; size_t ncv, ccv;
};

/* The median of by[] at occurrences o[i .. i + c) */
static uint64_t median_at(struct tscan *t, const struct occ *o, size_t i, size_t c, const uint64_t *by)
{
	vec_reserve((void **)&t->gv, &t->cgv, c, sizeof(*t->gv));
	for (size_t k = 0; k < c; k++)
		t->gv[k] = by[o[i + k].pos];
	qsort(t->gv, c, sizeof(*t->gv), cmp_u64);
	return t->gv[c / 2];
}

/* The slot of kind (h, len) in a table of cap slots: its own, or the
 * free one where it goes */
static struct seg_kind *seg_kind_at(struct seg_kind *kind, size_t cap, uint64_t h, size_t len)
{
	size_t x = (size_t)mix64(h ^ mix64(len)) & (cap - 1);
	while (kind[x].m && (kind[x].h != h || kind[x].len != len)) x = (x + 1) & (cap - 1);
	return &kind[x];
}

/* t's table of segment kinds twice as large (cap 0: a new one), its
 * kinds in it again: the new cap. */
static size_t seg_kinds_grow(struct tscan *t, size_t cap)
{
	size_t ncap = cap ? 2 * cap : 64;
	struct seg_kind *old = cap ? xmalloc(cap * sizeof(*old)) : NULL;
	if (cap) memcpy(old, t->kind, cap * sizeof(*old));
	vec_reserve((void **)&t->kind, &t->ckind, ncap, sizeof(*t->kind));
	memset(t->kind, 0, ncap * sizeof(*t->kind));
	for (size_t x = 0; x < cap; x++)
		if (old[x].m) *seg_kind_at(t->kind, ncap, old[x].h, old[x].len) = old[x];
	free(old);
	return ncap;
}

/* Occurrences o[i .. j) of one signature (in sample order): a candidate
 * when they cut the sample into repeating segments (the tests above). */
static void try_group(struct tscan *t, const struct occ *o, size_t i, size_t j, uint64_t sig, uint64_t ctx)
{
	size_t c = j - i, n = t->n;
	/* repeats, and across at least half of the sample (not a kernel of the first step only) */
	if (c < 3 || (o[j - 1].pos - o[i].pos) * 2 < n) return;
	size_t nseg = c - 1, cap = 0, nkind = 0;
	vec_reserve((void **)&t->sg, &t->csg, nseg, sizeof(*t->sg));
	/* the segments counted by kind in a table (open addressing, at most
	 * half full: a step's segments are mostly of one kind or a few) */
	for (size_t k = 0; k < nseg; k++) {
		size_t a = o[i + k].pos, b = o[i + k + 1].pos;
		struct seg *g = &t->sg[k];
		*g = (struct seg){ t->pre[b] - t->pre[a], b - a, a };
		if (2 * (nkind + 1) > cap) cap = seg_kinds_grow(t, cap);
		struct seg_kind *q = seg_kind_at(t->kind, cap, g->h, g->len);
		if (!q->m) {
			*q = (struct seg_kind){ g->h, g->len, 0, a };
			nkind++;
		}
		q->m++;
	}
	const struct seg_kind *kind = t->kind;
	/* the common segment: the most of one kind; ties: the shortest, then
	 * the smallest hash (any rule that picks one would do: this is the
	 * one of a sort by hash and length) */
	size_t m = 0, len = 0, ref = 0;
	uint64_t h = 0;
	for (size_t x = 0; x < cap; x++) {
		const struct seg_kind *q = &kind[x];
		if (!q->m || q->m < m) continue;
		if (q->m > m || q->len < len || (q->len == len && q->h < h)) {
			m = q->m; len = q->len; h = q->h; ref = q->a;
		}
	}
	if (t->near && m >= 2 && m * 10 < nseg * 6) {
		/* the third look: a segment like the common one (is_subloop's
		 * test) is alike; given up once more than 40 % are not */
		size_t thr = len / 10 > 2 ? len / 10 : 2, unlike = 0, near_len = 0;
		for (size_t k = 0; k < nseg; k++) /* (a like segment is as long, to thr: a cheap bound first) */
			near_len += t->sg[k].len + thr >= len && t->sg[k].len <= len + thr;
		m = 0;
		for (size_t k = 0; k < nseg && unlike * 10 <= nseg * 4 && near_len * 10 >= nseg * 6; k++) {
			const struct seg *g = &t->sg[k];
			if ((g->h == h && g->len == len) || seg_distance(t->near, ref, len, g->a, g->a + g->len, thr) <= thr) m++;
			else unlike++;
		}
	}
	size_t span = o[j - 1].pos - o[i].pos;
	if (m < 2 || m * 10 < nseg * 6 || m * len * 2 < span) return;
	struct cand cd;
	cd.gap = median_at(t, o, i, c, t->gap);
	cd.htod_back = median_at(t, o, i, c, t->back);
	cd.sig = sig; cd.ctx = ctx; cd.ov = o; cd.o0 = i; cd.c = c; cd.len = len; cd.m = m; cd.hash = h;
	VEC_PUSH(t->cv, t->ncv, t->ccv, cd);
}

/* try_group over each signature's occurrences of o[0 .. n) (sorted by
 * occ_sort; ctx: per sample place, a copy's or memset's context, NULL:
 * none), those candidates then in cmp_cand_len order. */
static void try_groups(struct tscan *t, const struct occ *o, size_t n, const struct sample *v, const uint64_t *ctx)
{
	size_t n0 = t->ncv;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && o[j].sig == o[i].sig; j++) ;
		try_group(t, o, i, j, v[o[i].pos].sig, ctx ? ctx[o[i].pos] : 0);
	}
	if (t->ncv > n0 + 1) qsort(t->cv + n0, t->ncv - n0, sizeof(*t->cv), cmp_cand_len);
}

/* The shortest period that is not a sub-loop (from candidate k0 on, in
 * cmp_cand_len order); its candidates all cut the same steps, at different
 * places (the phase).  only_htod: host-to-device copies only, of period
 * `period` when it is not 0. */
static const struct cand *pick(struct tscan *t, size_t k0, struct subloop *sl, size_t period, int only_htod,
			       size_t *subloops)
{
	const struct cand *best = NULL;
	for (size_t k = k0; k < t->ncv; k++) {
		const struct cand *c = &t->cv[k];
		if (only_htod && !sig_htod(c->sig)) continue;
		if (period && c->len != period) {
			if (c->len > period) break;
			continue;
		}
		if (is_subloop(sl, c)) { (*subloops)++; continue; }
		period = c->len;
		if (!best || phase_better(c, best)) best = c;
	}
	return best;
}

/* plan_trace_sample's arrays over a sample of n operations, made once for
 * all its looks (made afresh, their page faults were a third of a look) */
struct plan_work {
	uint64_t *pre, *gap, *back;
	struct occ *o;
	uint32_t *id;
};

static void plan_work_init(struct plan_work *w, size_t n)
{
	w->pre = xmalloc((n + 1) * sizeof(*w->pre));
	w->gap = xmalloc((n ? n : 1) * sizeof(*w->gap));
	w->back = xmalloc((n ? n : 1) * sizeof(*w->back));
	w->o = xmalloc((n ? n : 1) * sizeof(*w->o));
	w->id = xmalloc((n ? n : 1) * sizeof(*w->id));
}

static void plan_work_free(struct plan_work *w)
{
	free(w->pre); free(w->gap); free(w->back); free(w->o); free(w->id);
}

/* The looks plan_trace takes, each after the one before found nothing */
enum trace_look { LOOK_EXACT, LOOK_SIZELESS, LOOK_NEAR };

static void plan_trace_sample(struct step_detect *d, struct dproc *p, enum trace_look look, struct plan_work *w)
{
	int sizeless = look != LOOK_EXACT;
	struct step_plan *pl = &p->plan;
	size_t n = p->n;
	if (n < 6) {
		snprintf(pl->what, sizeof(pl->what), "no steps: %zu GPU operations, too few to find a period", n);
		return;
	}
	void *tmp = NULL;
	size_t ctmp = 0;
	sort_tail(p->v, 0, n, sizeof(*p->v), cmp_sample, &tmp, &ctmp); /* in read order: nearly sorted */
	free(tmp);
	/* order-free content hash: prefix sums of a hash of each signature */
	/* back: operations since the previous host-to-device copy */
	uint64_t *pre = w->pre, *gap = w->gap, *back = w->back;
	struct occ *o = w->o;
	uint32_t *id = w->id;
	pre[0] = 0;
	uint64_t maxe = 0;
	size_t last_htod = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		pre[i + 1] = pre[i] + mix64(p->v[i].sig + 0x9e3779b97f4a7c15ull);
		gap[i] = i && p->v[i].s > maxe ? p->v[i].s - maxe : 0;
		if (p->v[i].e > maxe) maxe = p->v[i].e;
		back[i] = last_htod == SIZE_MAX ? i + 1 : i - last_htod;
		if (sig_htod(p->v[i].sig)) last_htod = i;
		o[i].sig = p->v[i].sig; o[i].pos = i;
	}
	uint32_t nid = occ_sort(o, n, id);
	struct subloop sl = { id, pre, xcalloc(nid, sizeof(int32_t)) };
	struct tscan t = { .n = n, .pre = pre, .gap = gap, .back = back, .near = look == LOOK_NEAR ? &sl : NULL };
	try_groups(&t, o, n, p->v, NULL);
	size_t subloops = 0;
	const struct cand *best = pick(&t, 0, &sl, 0, 0, &subloops);
	/* No input copy starts a step by itself: each told apart by the copy
	 * or memset before it on its stream (the Hugging Face Trainer's two
	 * 8,192-byte batches). */
	struct occ *oc = NULL;
	uint64_t *ctx = NULL;
	if (!best || !sig_htod(best->sig)) {
		size_t period = best ? best->len : 0, nplain = t.ncv, nc = 0;
		oc = xmalloc(n * sizeof(*oc));
		ctx = xmalloc(n * sizeof(*ctx));
		struct step_stream_last *last = NULL;
		size_t nlast = 0, clast = 0;
		for (size_t i = 0; i < n; i++) {
			if (!step_sig_is_marker(p->v[i].sig)) continue;
			uint64_t *before = step_stream_last(&last, &nlast, &clast, p->v[i].q);
			if (*before && sig_htod(p->v[i].sig)) { /* 0: the stream's first */
				ctx[i] = *before;
				oc[nc].sig = mix64(p->v[i].sig ^ mix64(ctx[i])); oc[nc].pos = i;
				nc++;
			}
			*before = p->v[i].sig;
		}
		free(last);
		occ_sort(oc, nc, NULL);
		try_groups(&t, oc, nc, p->v, ctx);
		size_t ignored = 0;
		const struct cand *bc = pick(&t, nplain, &sl, period, 1, &ignored);
		if (bc) best = bc;
	}
	int by_copy = best && sig_htod(best->sig);
	struct cand found = best ? *best : (struct cand){ 0 };
	free(sl.cnt);
	free(t.sg); free(t.kind); free(t.gv); free(t.cv);
	free(oc); free(ctx);
	if (!best) {
		snprintf(pl->what, sizeof(pl->what),
			 "no steps: no GPU operation starts a repeating sequence (first %zu operations looked at%s)", n,
			 subloops ? "; only sub-loops repeat" : "");
		return;
	}
	if (found.len < 2) {
		/* one operation over and over (a job's last kernels before it ran
		 * out of memory): a repeat, not a training step */
		snprintf(pl->what, sizeof(pl->what),
			 "no steps: the only repeat is one GPU operation (%zu times): no step structure", found.c);
		return;
	}
	pl->method = STEP_TRACE;
	pl->marker = found.sig;
	pl->marker_after = found.ctx;
	pl->period_ops = found.len;
	pl->sizeless = sizeless;
	pl->input_copy = by_copy;
	char what[96], after[80] = "", size[40] = " of any size";
	char *dn = NULL, *sn = NULL;
	int kind = sig_kind(found.sig);
	if (!sizeless) snprintf(size, sizeof(size), " of %llu bytes", (unsigned long long)(found.sig & SIG_BYTES));
	if (kind == OP_MEMCPY)
		snprintf(what, sizeof(what), "a %s copy%s",
			 by_copy ? "host-to-device" : copy_kind_name((uint32_t)(found.sig >> 48 & 0xff)), size);
	else if (kind == OP_MEMSET)
		snprintf(what, sizeof(what), "a memset%s", size);
	else {
		dn = demangle(tool_str(d->r, (uint32_t)found.sig));
		sn = short_name(dn);
		snprintf(what, sizeof(what), "kernel '%.80s'", sn);
	}
	char csize[32] = "";
	if (found.ctx && !sizeless) snprintf(csize, sizeof(csize), " %llu-byte", (unsigned long long)(found.ctx & SIG_BYTES));
	if (found.ctx && sig_kind(found.ctx) == OP_MEMCPY)
		snprintf(after, sizeof(after), " after a%s %s copy", csize, copy_kind_name((uint32_t)(found.ctx >> 48 & 0xff)));
	else if (found.ctx)
		snprintf(after, sizeof(after), " after a%s memset", csize);
	char line[400];
	snprintf(line, sizeof(line),
		 "trace: each step starts at the launch of %s%s (period %zu GPU operations, %zu of %zu repeats alike%s%s%s)",
		 what, after, found.len, found.m, found.c - 1, look == LOOK_NEAR ? " within max(2, 10 %) operations" : "",
		 sizeless ? " with copy and memset sizes left out" : "", by_copy ? "; the input copy" : "");
	snprintf(pl->what, sizeof(pl->what), "%.255s", line);
	free(dn); free(sn);
}

static void plan_trace(struct step_detect *d, struct dproc *p)
{
	struct plan_work w;
	plan_work_init(&w, p->n);
	plan_trace_sample(d, p, LOOK_EXACT, &w);
	if (p->plan.method != STEP_TRACE) {
		/* Nothing repeats alike: a copy or memset whose size changes
		 * from step to step (an input batch padded to its longest
		 * sequence) makes every step unlike the others.  Again with the
		 * sizes left out; then with steps alike when they are like (the
		 * shapes that change with the batch make cuBLAS pick another
		 * GEMM kernel now and then: an HF Trainer's padded batches run
		 * 11 kinds of step); the first answer's message where that
		 * finds nothing either. */
		char why[sizeof(p->plan.what)];
		memcpy(why, p->plan.what, sizeof(why));
		for (size_t i = 0; i < p->n; i++) p->v[i].sig = step_sig_sizeless(p->v[i].sig);
		plan_trace_sample(d, p, LOOK_SIZELESS, &w);
		if (p->plan.method != STEP_TRACE) plan_trace_sample(d, p, LOOK_NEAR, &w);
		if (p->plan.method != STEP_TRACE) memcpy(p->plan.what, why, sizeof(why));
	}
	plan_work_free(&w);
}

void step_detect_proc(struct step_detect *d, uint32_t pid)
{
	proc_get(d, pid);
}

void step_detect_plan_ranges(struct step_detect *d, const struct attribution *a)
{
	/* every process with NVTX ranges is a candidate too */
	size_t nr = attribution_nranges(a);
	for (size_t i = 0; i < nr; i++) proc_get(d, attribution_range(a, (uint32_t)i).pid);
	for (size_t pi = 0; pi < d->np; pi++) {
		struct dproc *p = &d->p[pi];
		p->plan.pid = p->pid;
		if (d->want != STEP_WANT_TRACE) plan_nvtx(d, a, p);
	}
}

/* Whether p's plan is made from its sample (after step_detect_plan_ranges). */
static int by_sample(const struct step_detect *d, const struct dproc *p)
{
	return p->plan.method != STEP_NVTX && d->want != STEP_WANT_NVTX && !d->range_name;
}

int step_detect_sample_wanted(const struct step_detect *d, uint32_t pid, size_t *room)
{
	uint64_t *s = u64map_get((u64map *)&d->pid2p, pid, 0);
	if (!s || !by_sample(d, &d->p[*s - 1])) return 0;
	*room = d->p[*s - 1].n < SAMPLE_MAX ? SAMPLE_MAX - d->p[*s - 1].n : 0;
	return 1;
}

int step_detect_plan_samples(struct step_detect *d, const char **err)
{
	int found_named = 0;
	for (size_t pi = 0; pi < d->np; pi++) {
		struct dproc *p = &d->p[pi];
		if (p->plan.method == STEP_NVTX)
			found_named = 1;
		else if (!by_sample(d, p))
			snprintf(p->plan.what, sizeof(p->plan.what), "no steps: no NVTX range %s%s%s",
				 d->range_name ? "named '" : "that looks like a step",
				 d->range_name ? d->range_name : "", d->range_name ? "'" : "");
		else
			plan_trace(d, p);
		/* the plan is made: the sample (up to SAMPLE_MAX operations, 24
		 * bytes each) is not needed by anything after this */
		free(p->v);
		p->v = NULL;
		p->n = p->cap = 0;
	}
	if (d->range_name && !found_named) {
		static char msg[512];
		snprintf(msg, sizeof(msg), "no NVTX range named '%.200s' (nor numbered '%.200s <N>') in the trace",
			 d->range_name, d->range_name);
		*err = msg;
		return -1;
	}
	return 0;
}

size_t step_detect_nplans(const struct step_detect *d) { return d->np; }
const struct step_plan *step_detect_plan(const struct step_detect *d, size_t i) { return &d->p[i].plan; }

struct step_def step_plan_step(const struct step_plan *pl, const struct attribution *a, size_t k)
{
	const struct attr_range x = attribution_range(a, pl->range_ids[k]);
	char grp[256];
	struct step_def sd = { x.s, x.e, pl->range_ids[k], step_name_split(attribution_name(a, x.name), grp, sizeof(grp)) };
	return sd;
}
