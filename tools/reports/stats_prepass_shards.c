/* stats_prepass_shards.c — see stats_prepass_shards.h. */
#include "reports/stats_prepass_shards.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/spill.h"
#include "common/tool.h"
#include "reports/stats_prepass_prefix.h"
#include "analysis/core/slices.h"

/* An NVTX range as attribution_add_range takes it (name: the slice's). */
struct pp_range {
	struct pp_key k;
	uint64_t s, e;
	uint32_t pid, tid, name;
	uint16_t depth;
	uint8_t kind;
};

/* A slice's ranges in key order, encoded: varints, the key's pmax as the
 * rise from the one before, the start from pmax and the end from the
 * start (~20 bytes a range, against 56 as a struct), in a spill of bytes
 * (common/spill.h): the trace's every range is held here until the replay,
 * so past PP_MEM_CAP a slice's go to disk.  A merge keeps the slices' lists
 * apart (merged into one copy, they were the pre-pass's peak: every range
 * twice at once), each with the map of its names to the merged slice's;
 * the replay takes them in key order. */
#define PP_MEM_CAP ((size_t)2 << 20)
#define PP_FIELDS 11             /* the varints of a range */

struct pp_ranges {
	struct spill *b;         /* NULL: none yet */
	size_t n;
	uint64_t pmax;           /* the last one's (encoding) */
	uint32_t *nmap; size_t nnmap; /* merged: its names' indices in the slice it is in (NULL: its own) */
};

static void ranges_put(struct pp_ranges *l, const struct pp_range *x)
{
	/* the key's pmax rises in a list that is kept (a wrap decodes too) */
	const uint64_t v[PP_FIELDS] = { x->k.pmax - l->pmax, x->k.src, x->k.chunk, x->k.at,
					zigzag_enc((int64_t)(x->s - x->k.pmax)), zigzag_enc((int64_t)(x->e - x->s)),
					x->pid, x->tid, x->depth, x->kind, x->name };
	uint8_t buf[PP_FIELDS * 10], *p = buf;
	for (int i = 0; i < PP_FIELDS; i++) p += varint_enc(p, v[i]);
	if (!l->b) l->b = spill_new(1, PP_MEM_CAP);
	spill_write(l->b, buf, (size_t)(p - buf));
	l->pmax = x->k.pmax;
	l->n++;
}

/* Reading a list: a window of its bytes (buf[at, len), those from off on
 * not read yet), the pmax before, how many ranges read. */
struct pp_cursor { uint8_t buf[4096]; size_t at, len, off; uint64_t pmax; size_t i; };

static void ranges_get(struct pp_ranges *l, struct pp_cursor *c, struct pp_range *x)
{
	if (c->len - c->at < PP_FIELDS * 10) {
		memmove(c->buf, c->buf + c->at, c->len - c->at);
		c->len -= c->at;
		c->at = 0;
		size_t got = spill_read(l->b, c->off, c->buf + c->len, sizeof(c->buf) - c->len);
		c->off += got;
		c->len += got;
	}
	const uint8_t *p = c->buf + c->at;
	uint64_t v[PP_FIELDS];
	for (int i = 0; i < PP_FIELDS; i++) v[i] = varint_dec(&p);
	c->at = (size_t)(p - c->buf);
	c->i++;
	const uint64_t pmax = c->pmax += v[0], s = pmax + (uint64_t)zigzag_dec(v[4]);
	*x = (struct pp_range){ .k = { .pmax = pmax, .src = (uint32_t)v[1], .chunk = (uint32_t)v[2], .at = (uint32_t)v[3] },
				.s = s, .e = s + (uint64_t)zigzag_dec(v[5]), .pid = (uint32_t)v[6], .tid = (uint32_t)v[7],
				.depth = (uint16_t)v[8], .kind = (uint8_t)v[9],
				.name = l->nmap ? l->nmap[v[10]] : (uint32_t)v[10] };
}

static void ranges_free(struct pp_ranges *l)
{
	spill_free(l->b);
	free(l->nmap);
	memset(l, 0, sizeof(*l));
}

/* A list merged into another slice: its names (those of the slice it was
 * in, name[i] in the slice it goes to) renamed through name. */
static void ranges_rename(struct pp_ranges *l, const uint32_t *name, size_t nname)
{
	if (!l->nmap) {
		l->nmap = xmalloc((nname ? nname : 1) * sizeof(*l->nmap));
		memcpy(l->nmap, name, nname * sizeof(*name));
		l->nnmap = nname;
	} else {
		for (size_t i = 0; i < l->nnmap; i++) l->nmap[i] = name[l->nmap[i]];
	}
}

struct pp_win {
	struct pp_key k;
	uint32_t pid;
	uint64_t s, e;
};

/* A process's GPU operations in a slice: how many, and the first's key. */
struct pp_proc {
	uint32_t pid;
	struct pp_key first;
	uint64_t n;
};

/* A source as the slice's reader gives it: its largest time so far, the
 * chunk of its last record and that record's place in it; its process
 * (tool_pid of its ranges, windows and GPU operations: the source's, the
 * slice's reader knows every source) and that process's pv index + 1 once
 * the source had a GPU operation. */
struct pp_src {
	uint64_t pmax;
	int64_t chunk;
	uint32_t at;
	uint32_t pid;
	size_t proc;
	size_t pfx;              /* its process's in the slice's prefix (pp_prefix_proc; 0: not yet) */
};

/* Slice ix of the runner's, its records timed in [from, to). */
struct pp_slice {
	const char *path;
	int want_ranges, want_gpu, no_graphs;
	int ok;                  /* read whole, keys rising, nothing not cut */
	struct pp_ranges rv;     /* its own ranges */
	struct pp_ranges *rparts; size_t nrparts, crparts; /* the merged slices' */
	struct pp_win *wv; size_t nw, cw;
	struct pp_proc *pv; size_t np, cp;
	u64map pidx;             /* pid -> pv index + 1 */
	strmap name_idx; char **names; size_t nnames, cnames;
	struct pp_src *sv; size_t ns, cs;
	u64map sidx;             /* source id -> sv index + 1 */
	int want_prefix;         /* the steps' prefix (ctx->steps_prefix) */
	struct pp_prefix pfx;
	const struct stats_pre_hook *hook; /* the caller's consumer, and its state of the slice */
	void *hook_st;
};

static void slice_free(struct pp_slice *s)
{
	ranges_free(&s->rv);
	for (size_t i = 0; i < s->nrparts; i++) ranges_free(&s->rparts[i]);
	free(s->rparts);
	free(s->wv);
	free(s->pv);
	u64map_free(&s->pidx);
	for (size_t i = 0; i < s->nnames; i++) free(s->names[i]);
	free(s->names);
	strmap_free(&s->name_idx);
	free(s->sv);
	u64map_free(&s->sidx);
	pp_prefix_free(&s->pfx);
	if (s->hook_st) s->hook->free(s->hook_st);
}

static struct pp_src *src_of(struct pp_slice *s, gp_reader *r, const gp_record *rec)
{
	uint64_t *slot = u64map_get(&s->sidx, rec->source_id, MAP_INSERT);
	if (!*slot) {
		gp_record probe = *rec;
		probe.type = GP_REC_KERNEL; /* a record that has its source's pid */
		struct pp_src x = { 0, -1, 0, tool_pid(r, &probe), 0, 0 };
		VEC_PUSH(s->sv, s->ns, s->cs, x);
		*slot = s->ns;
	}
	return &s->sv[*slot - 1];
}

static uint32_t name_of(struct pp_slice *s, char *name)
{
	int is_new;
	size_t *slot = strmap_get(&s->name_idx, name, &is_new);
	if (is_new) {
		*slot = s->nnames;
		VEC_PUSH(s->names, s->nnames, s->cnames, name);
	} else {
		free(name);
	}
	return (uint32_t)*slot;
}

static void proc_op(struct pp_slice *s, struct pp_src *src, const struct pp_key *k)
{
	if (!src->proc) {
		struct pp_proc p = { src->pid, *k, 0 };
		src->proc = (size_t)((struct pp_proc *)VEC_KEYED(&s->pidx, src->pid, s->pv, s->np, s->cp, &p) - s->pv) + 1;
	}
	s->pv[src->proc - 1].n++;
}

/* The slice's records: their keys, and those of its time kept. */
static void slice_read(void *arg, int ix, uint64_t from, uint64_t to)
{
	struct pp_slice *s = &((struct pp_slice *)arg)[ix];
	gp_reader *r = slices_open(s->path, from, to);
	if (!r) return;
	const gp_record *rec;
	struct pp_src *src = NULL;
	uint32_t src_id = UINT32_MAX;
	struct pp_key last = { 0, 0, 0, 0 };
	int any = 0, ok = 1, rc;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		int type = rec->type;
		if (type == GP_REC_GRAPH_NODE && s->no_graphs) ok = 0;
		int64_t ch = gp_reader_record_chunk(r);
		if (s->hook_st) {
			/* the metadata to slice 0's; a record without a time may be
			 * read by several slices (not cut) */
			uint64_t t = ch < 0 ? 0 : gp_record_time(rec);
			if (ch >= 0 && !t && ix > 0) ok = 0;
			else if (ch < 0 ? ix == 0 : t >= from && t < to) s->hook->add(s->hook_st, r, rec);
		}
		if (ch < 0) continue; /* the metadata, before the merge */
		if (rec->source_id != src_id) {
			src_id = rec->source_id;
			src = src_of(s, r, rec);
		}
		uint64_t t = gp_record_time(rec);
		if (src->chunk != ch) {
			src->chunk = ch;
			src->at = 0;
		} else {
			src->at++;
		}
		if (t > src->pmax) src->pmax = t;
		int gpu = type == GP_REC_KERNEL || type == GP_REC_MEMCPY || type == GP_REC_MEMSET;
		int kept = (type == GP_REC_NVTX_RANGE && s->want_ranges) || type == GP_REC_WINDOW || (gpu && s->want_gpu);
		int call = s->want_prefix && (gpu || type == GP_REC_API);
		if (!kept && !call) continue;
		/* a record without a time: its chunk may be no slice's */
		if (kept && !t && ix > 0) ok = 0;
		if (t < from || t >= to) continue;
		struct pp_key k = { src->pmax, src_id, (uint32_t)ch, src->at };
		if (call) {
			uint64_t dur = 0;
			if (gpu && !src->pfx) src->pfx = pp_prefix_proc(&s->pfx, src->pid);
			if (gpu) steps_prefix_op(rec, &dur);
			else if (rec->u.api.end_ns > rec->u.api.start_ns) dur = rec->u.api.end_ns - rec->u.api.start_ns;
			pp_prefix_add(&s->pfx, &k, gpu ? src->pfx : 0, dur);
		}
		if (!kept) continue;
		if (any && pp_key_cmp(&k, &last) <= 0) ok = 0;
		any = 1;
		last = k;
		uint32_t pid = src->pid;
		if (type == GP_REC_NVTX_RANGE) {
			const gp_rec_nvtx_range *n = &rec->u.nvtx_range;
			struct pp_range x = { k, n->start_ns, n->end_ns, pid, tool_rec_tid(r, rec),
					      name_of(s, tool_range_name(r, n)), n->depth, (uint8_t)n->kind };
			ranges_put(&s->rv, &x);
		} else if (type == GP_REC_WINDOW) {
			struct pp_win w = { k, pid, rec->u.window.start_ns, rec->u.window.end_ns };
			VEC_PUSH(s->wv, s->nw, s->cw, w);
		} else {
			proc_op(s, src, &k);
		}
	}
	s->ok = ok && slices_whole(r, rc);
	gp_reader_close(r);
}

/* The step detection's samples: the processes with GPU operations (the
 * slices' counts), and per process the operations its sample still takes. */
struct pp_sample {
	const struct pp_proc *pv;
	size_t np;
	u64map left;             /* pid -> operations still to take */
	size_t nleft;            /* processes with some */
};

/* The samples (stats_ctx_pre_finish), from the caller's reader in
 * the order of a whole read (a sample is a process's first operations),
 * until each is full or has all of its process's. */
static void read_samples(struct stats_ctx *ctx, void *arg)
{
	struct pp_sample *sm = arg;
	for (size_t i = 0; i < sm->np; i++) {
		size_t room;
		if (!step_detect_sample_wanted(ctx->pipe.detect, sm->pv[i].pid, &room)) continue;
		uint64_t take = sm->pv[i].n < room ? sm->pv[i].n : room;
		if (!take) continue;
		*u64map_get(&sm->left, sm->pv[i].pid, MAP_INSERT) = take;
		sm->nleft++;
	}
	const gp_record *rec;
	if (!sm->nleft || gp_reader_rewind(ctx->r) < 0) return;
	while (sm->nleft && gp_reader_next_ordered(ctx->r, &rec) > 0) {
		if (rec->type != GP_REC_KERNEL && rec->type != GP_REC_MEMCPY && rec->type != GP_REC_MEMSET) continue;
		uint32_t pid = tool_pid(ctx->r, rec);
		uint64_t *left = u64map_get(&sm->left, pid, MAP_FIND);
		if (!left || !*left) continue;
		step_detect_gpu(ctx->pipe.detect, pid, rec);
		if (!--*left) sm->nleft--;
	}
}

/* Two lists in key order (each item starts with its struct pp_key) into
 * one, in a (freed) */
static void *merge_keyed(void *a, size_t na, const void *b, size_t nb, size_t size)
{
	char *v = xmalloc((na + nb ? na + nb : 1) * size), *o = v;
	const char *x = a, *y = b, *xe = x + na * size, *ye = y + nb * size;
	while (x < xe || y < ye) {
		const char **p = y == ye || (x < xe && pp_key_cmp((const void *)x, (const void *)y) < 0) ? &x : &y;
		memcpy(o, *p, size);
		o += size;
		*p += size;
	}
	free(a);
	return v;
}

/* Slice src into dst (the runner's tree of merges, slices.h): the ranges
 * (their names dst's) and windows in key order, the processes' counts
 * summed and their first operations' keys the smaller; the prefix parts
 * stay apart (pp_prefix_merge takes them all). */
static void slice_merge(void *arg, int dst, int src)
{
	struct pp_slice *d = &((struct pp_slice *)arg)[dst], *s = &((struct pp_slice *)arg)[src];
	if (!(d->ok &= s->ok)) return;
	if (d->hook_st && d->hook->merge(d->hook_st, s->hook_st) != 0) {
		d->ok = 0;
		return;
	}
	uint32_t *name = xmalloc((s->nnames ? s->nnames : 1) * sizeof(*name));
	size_t nname = s->nnames;
	for (size_t i = 0; i < s->nnames; i++) name[i] = name_of(d, s->names[i]);
	s->nnames = 0; /* its names are dst's now */
	ranges_rename(&s->rv, name, nname);
	for (size_t j = 0; j < s->nrparts; j++) ranges_rename(&s->rparts[j], name, nname);
	free(name);
	VEC_PUSH(d->rparts, d->nrparts, d->crparts, s->rv);
	for (size_t j = 0; j < s->nrparts; j++) VEC_PUSH(d->rparts, d->nrparts, d->crparts, s->rparts[j]);
	memset(&s->rv, 0, sizeof(s->rv));
	s->nrparts = 0;
	d->wv = merge_keyed(d->wv, d->nw, s->wv, s->nw, sizeof(*d->wv));
	d->cw = d->nw += s->nw;
	for (size_t j = 0; j < s->np; j++) {
		const struct pp_proc *p = &s->pv[j];
		size_t had = d->np;
		struct pp_proc *q = VEC_KEYED(&d->pidx, p->pid, d->pv, d->np, d->cp, p);
		if (d->np > had) continue; /* new: p itself */
		q->n += p->n;
		if (pp_key_cmp(&p->first, &q->first) < 0) q->first = p->first;
	}
}

/* The merged slice's ranges into ctx's attribution, and its windows into
 * its set, in the order of a whole read (winset_add's order matters to the
 * windows only). */
static void replay(struct stats_ctx *ctx, struct pp_slice *s)
{
	/* its names' indices in the attribution + 1 (0: not yet): interned
	 * when first met here, so in one thread's order */
	uint32_t *gname = xcalloc(s->nnames ? s->nnames : 1, sizeof(*gname));
	/* the lists: its own and the merged slices', taken in key order, each
	 * freed once read */
	size_t np = 1 + s->nrparts;
	struct pp_ranges **L = xmalloc(np * sizeof(*L));
	struct pp_cursor *cur = xcalloc(np, sizeof(*cur));
	struct pp_range *head = xmalloc(np * sizeof(*head)); /* each list's next one */
	char *live = xcalloc(np, 1);                         /* it has a next one */
	L[0] = &s->rv;
	for (size_t j = 0; j < s->nrparts; j++) L[1 + j] = &s->rparts[j];
	for (size_t j = 0; j < np; j++)
		if ((live[j] = L[j]->n > 0)) ranges_get(L[j], &cur[j], &head[j]);
	for (;;) {
		size_t m = np;
		for (size_t j = 0; j < np; j++)
			if (live[j] && (m == np || pp_key_cmp(&head[j].k, &head[m].k) < 0)) m = j;
		if (m == np) break;
		const struct pp_range xm = head[m], *x = &xm;
		if ((live[m] = cur[m].i < L[m]->n)) ranges_get(L[m], &cur[m], &head[m]);
		else ranges_free(L[m]);
		const gp_rec_nvtx_range n = { .start_ns = x->s, .end_ns = x->e, .kind = x->kind, .depth = x->depth };
		uint32_t *g = &gname[x->name];
		if (!*g) *g = attribution_name_intern(ctx->pipe.attr, s->names[x->name]) + 1;
		attribution_add_range_named(ctx->pipe.attr, x->pid, x->tid, &n, *g - 1);
	}
	free(L);
	free(cur);
	free(head);
	free(live);
	free(gname);
	for (size_t i = 0; i < s->nw; i++) winset_add(&ctx->pipe.win, s->wv[i].pid, s->wv[i].s, s->wv[i].e);
}

int stats_prepass_shards(struct stats_ctx *ctx, const char *path, int k, const struct stats_pre_hook *hook,
			 void *hook_st, struct stats_prepass_cpu *cpu, const char **err)
{
	const uint64_t *cut = NULL;
	/* the steps' prefix: in the steps' slices */
	if (ctx->steps_prefix) k = steps_prefix_cuts(ctx->steps_prefix, &cut);
	struct slices *cuts = k < 2 ? NULL : slices_new(ctx->r, k);
	if (!cuts) return 1;
	for (int i = 0; cut && i < k; i++) {
		uint64_t from, to;
		slices_bounds(cuts, i, &from, &to);
		/* a record timed 0 may be in no slice's chunks (not cut where
		 * it could reach a cut) */
		if (from != cut[i] || (i == 1 && !from)) {
			slices_free(cuts);
			return 1;
		}
	}
	struct pp_slice *sl = xcalloc((size_t)k, sizeof(*sl));
	for (int i = 0; i < k; i++) {
		struct pp_slice *s = &sl[i];
		*s = (struct pp_slice){ .path = path, .want_ranges = ctx->pipe.attr != NULL,
					.want_gpu = ctx->pipe.detect != NULL,
					.no_graphs = (ctx->needs & STATS_NEED_PREJOIN) != 0, .want_prefix = cut != NULL,
					.hook = hook };
		u64map_init(&s->pidx);
		u64map_init(&s->sidx);
		strmap_init(&s->name_idx);
		uint64_t from, to;
		slices_bounds(cuts, i, &from, &to);
		pp_prefix_init(&s->pfx, i, k, to);
		if (hook) s->hook_st = hook->new(hook->arg, from);
	}
	struct slice_pass pass = { sl, slice_read, slice_merge };
	slices_run(cuts, &pass);
	slices_cpu(cuts, &cpu->sum, &cpu->max);
	slices_free(cuts);
	cpu->k = k;
	int rc = 1;
	double c0 = thread_cpu_s();
	if (sl[0].ok && (!hook || hook->merge(hook_st, sl[0].hook_st) == 0)) {
		struct pp_proc *pv = sl[0].pv;
		/* the processes in the order their first GPU operation comes (few:
		 * insertion by key) */
		for (size_t i = 1; i < sl[0].np; i++)
			for (size_t j = i; j > 0 && pp_key_cmp(&pv[j].first, &pv[j - 1].first) < 0; j--) {
				struct pp_proc t = pv[j];
				pv[j] = pv[j - 1];
				pv[j - 1] = t;
			}
		struct pp_sample sm = { pv, sl[0].np, { 0 }, 0 };
		sl[0].pv = NULL;
		u64map_init(&sm.left);
		for (size_t i = 0; ctx->pipe.detect && i < sm.np; i++) step_detect_proc(ctx->pipe.detect, pv[i].pid);
		replay(ctx, &sl[0]);
		if (cut) {
			const struct pp_prefix **parts = xmalloc((size_t)k * sizeof(*parts));
			for (int i = 0; i < k; i++) parts[i] = &sl[i].pfx;
			pp_prefix_merge(parts, k, ctx->steps_prefix);
			free(parts);
		}
		/* STATS_NEED_PREJOIN: no graph node in the trace (else not cut),
		 * so no capture sites (ctx->graphs stays empty) */
		for (int i = 0; i < k; i++) slice_free(&sl[i]);
		rc = stats_ctx_pre_finish(ctx, read_samples, &sm, err) < 0 ? -1 : 0;
		free(pv);
		u64map_free(&sm.left);
		if (rc == 0 && gp_reader_rewind(ctx->r) < 0) {
			static char msg[] = "cannot read the trace again";
			*err = msg;
			rc = -1;
		}
	} else {
		for (int i = 0; i < k; i++) slice_free(&sl[i]);
	}
	free(sl);
	cpu->here = thread_cpu_s() - c0;
	return rc;
}

void stats_prepass_dump(const struct stats_ctx *ctx, FILE *f)
{
	const struct attribution *a = ctx->pipe.attr;
	for (size_t i = 0; a && i < attribution_nranges(a); i++) {
		struct attr_range x = attribution_range(a, (uint32_t)i);
		fprintf(f, "prepass range %zu pid %u tid %u %" PRIu64 "..%" PRIu64 " depth %u kind %u name %u %s\n", i,
			x.pid, x.tid, x.s, x.e, x.depth, x.kind, x.name, attribution_name(a, x.name));
	}
	for (size_t i = 0; i < ctx->pipe.win.n; i++)
		fprintf(f, "prepass window pid %u %" PRIu64 "..%" PRIu64 "\n", ctx->pipe.win.v[i].pid, ctx->pipe.win.v[i].s,
			ctx->pipe.win.v[i].e);
	for (size_t i = 0; ctx->pipe.detect && i < step_detect_nplans(ctx->pipe.detect); i++) {
		const struct step_plan *p = step_detect_plan(ctx->pipe.detect, i);
		fprintf(f, "prepass plan pid %u method %d marker %" PRIu64 " period %zu steps %zu overlapping %zu: %s\n",
			p->pid, p->method, p->marker, p->period_ops, p->nsteps, p->overlapping, p->what);
		for (size_t j = 0; j < p->nsteps; j++) {
			const struct step_def sd = step_plan_step(p, p->a, j);
			fprintf(f, "prepass step %" PRIu64 "..%" PRIu64 " range %u number %" PRId64 "\n", sd.s, sd.e,
				sd.range_id, sd.number);
		}
	}
	steps_prefix_print(ctx->steps_prefix, f);
}
