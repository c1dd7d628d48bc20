/* stats_comm.c — `stats --report comm`: per rank (process) of a merged
 * multi-process trace, NCCL (communication) and other (compute) kernel time,
 * their overlap and the collectives' waits; `comm_steps` the same per
 * top-level NVTX range.  The figures, the matching of collectives and of
 * steps across ranks, and which step a kernel belongs to (its launch call:
 * analysis/join/attribution.h): docs/MULTIGPU.md; its slices: docs/CLI.md
 * "Threads".
 *
 * Memory does not grow with the kernels: per rank, NCCL and other kernels
 * are an ivpair (lag COMM_LAG); a step keeps its kernels' intervals until
 * COMM_STEPS_OPEN newer steps of its rank got kernels, then sums them.
 * What grows: 40 bytes per NCCL kernel (the matching needs them all), 8 per
 * NCCL kernel in a step, 72 per step (struct cstep), each past a few MiB in
 * a file (common/spill.h); in memory ~20 bytes per step.  A state makes a
 * step when it first gets a kernel; the steps without kernels at the fill.
 * A slice's state logs the order in which its steps got their first kernel,
 * which the merge replays against the earlier slice's open steps (so a
 * step is summed where one pass sums it); a step summed too early (a
 * later kernel for it, or kernels in two slices) fails the merge (-1: the
 * driver reads the trace again on one thread). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/intervals.h"
#include "common/spill.h"
#include "common/tool.h"
#include "common/util.h"
#include "reports/stats_report.h"

enum {
	COMM_RANK, COMM_PID, COMM_NCCL_KERNELS, COMM_COMM, COMM_OTHER_KERNELS, COMM_COMPUTE, COMM_OVERLAP,
	COMM_OVERLAP_PCT, COMM_EXPOSED, COMM_WAIT, COMM_WAIT_PCT, COMM_MAX_WAIT,
	COMM_NCOLS
};
static const struct col comm_cols[COMM_NCOLS] = {
	[COMM_RANK] = { "Rank", "rank", COL_ID, COL_EVERYWHERE }, [COMM_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE },
	[COMM_NCCL_KERNELS] = { "NCCL Kernels", "nccl_kernels", COL_INT, COL_EVERYWHERE },
	[COMM_COMM] = { "Comm (ns)", "comm_ns", COL_INT, COL_EVERYWHERE },
	[COMM_OTHER_KERNELS] = { "Other Kernels", "compute_kernels", COL_INT, COL_EVERYWHERE },
	[COMM_COMPUTE] = { "Compute (ns)", "compute_ns", COL_INT, COL_EVERYWHERE },
	[COMM_OVERLAP] = { "Overlap (ns)", "overlap_ns", COL_INT, COL_EVERYWHERE },
	[COMM_OVERLAP_PCT] = { "Overlap (%)", "overlap_pct", COL_F1, COL_EVERYWHERE },
	[COMM_EXPOSED] = { "Exposed Comm (ns)", "exposed_comm_ns", COL_INT, COL_EVERYWHERE },
	[COMM_WAIT] = { "Wait (ns)", "wait_ns", COL_INT, COL_EVERYWHERE },
	[COMM_WAIT_PCT] = { "Wait (%)", "wait_pct", COL_F1, COL_EVERYWHERE },
	[COMM_MAX_WAIT] = { "Max Wait (ns)", "max_wait_ns", COL_INT, COL_EVERYWHERE },
};

enum {
	STEP_RANK, STEP_PID, STEP_N, STEP_START, STEP_LEN, STEP_KERNELS, STEP_COLLECTIVES, STEP_COMM,
	STEP_COMPUTE, STEP_OVERLAP, STEP_WAIT, STEP_RANGE,
	STEP_NCOLS
};
static const struct col comm_steps_cols[STEP_NCOLS] = {
	[STEP_RANK] = { "Rank", "rank", COL_ID, COL_EVERYWHERE }, [STEP_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE },
	[STEP_N] = { "N", "occurrence", COL_INT, COL_EVERYWHERE },
	[STEP_START] = { "Start (ns)", "start_ns", COL_INT, COL_EVERYWHERE }, [STEP_LEN] = { "Step (ns)", "step_ns", COL_INT, COL_EVERYWHERE },
	[STEP_KERNELS] = { "Kernels", "kernels", COL_INT, COL_EVERYWHERE },
	[STEP_COLLECTIVES] = { "Collectives", "collectives", COL_INT, COL_EVERYWHERE },
	[STEP_COMM] = { "Comm (ns)", "comm_ns", COL_INT, COL_EVERYWHERE }, [STEP_COMPUTE] = { "Compute (ns)", "compute_ns", COL_INT, COL_EVERYWHERE },
	[STEP_OVERLAP] = { "Overlap (ns)", "overlap_ns", COL_INT, COL_EVERYWHERE }, [STEP_WAIT] = { "Wait (ns)", "wait_ns", COL_INT, COL_EVERYWHERE },
	[STEP_RANGE] = { "Range", "range", COL_STR, COL_EVERYWHERE },
};

#define COMM_LAG 65536
#define COMM_STEPS_OPEN 256

/* A selected NCCL kernel, kept for the matching across ranks. */
struct ckern {
	uint64_t s, e;
	uint64_t wait;    /* at its collective (when matched) */
	uint64_t corr;
	uint32_t name_id;
	uint32_t ix;      /* index in its process's NCCL kernels as added */
};

/* comm, compute and overlap of a set of kernels */
struct split { uint64_t comm, compute, overlap; };

/* A step: a selected top-level push/pop range of the context's (72
 * bytes: its start, end, process and name are the range's, read from the
 * attribution index; a day's trace has millions of steps). */
struct cstep {
	uint32_t range;       /* its attribution range id */
	uint32_t last_seq;    /* its rank's log length when its last kernel came */
	uint64_t kernels, coll, wait;
	struct ivset *iv;     /* iv[0] its NCCL, iv[1] its other kernels' intervals, until summed */
	struct split sp;
	uint8_t open, summed; /* open: it got a kernel (entered its rank's ring) */
	uint8_t early;        /* summed by a slice's ring that may count old steps as new */
};

/* A selected NCCL kernel attributed to a step: the step, the kernel's index
 * in its process's NCCL kernels. */
struct cpair { uint32_t step, nccl_ix; };

struct cproc {
	uint32_t pid;
	int32_t rank;
	uint64_t nsel;                       /* selected kernels */
	struct spill *ks; size_t nnccl;     /* selected NCCL kernels as added (struct ckern) */
	struct ckern *nc;                    /* the fill's, ranks matched: ks by start */
	struct ivpair cc;                    /* selected kernels: set[0] NCCL, set[1] other */
	uint32_t *open; size_t nopen, copen; /* its steps not summed yet, by first kernel (a ring) */
	size_t open_head;
	uint32_t *log; size_t nlog, clog;    /* its steps in the order of their first kernel here */
	/* results */
	int matched;      /* took part in the matching, which succeeded */
	uint64_t comm, compute, overlap, wait, max_wait;
};

struct comm {
	gp_reader *r;
	u64map pid2proc;
	struct cproc *p; size_t np, cp;
	int wait_known;   /* collectives matched (or one rank) */
	const struct attribution *attr;  /* the context's ranges */
	struct spill *st;                /* struct cstep, past COMM_STEPS_MEM in a file */
	struct u32map range2step;        /* attribution range id -> step */
	struct spill *pairs;             /* struct cpair */
	uint32_t *ids; size_t cids;      /* attribution_op's buffer */
	uint64_t late_kernels;           /* attributed to a step already summed */
	int lost;                        /* shards: the figures can no longer be one pass's */
	const struct selection *sel;
	size_t lag;                      /* the ranks' unions' (COMM_LAG, or GPUPROF_UNION_LAG) */
	uint64_t from;                   /* a slice's: where its time starts (0: its rings see every step's
					  * first kernel, not a later slice's) */
	char note[2048], steps_note[1024];
};

/* Appends printf's format and arguments to note, a char array of c's. */
#define NOTE_ADD(note, ...) do { size_t l_ = strlen(note); snprintf((note) + l_, sizeof(note) - l_, __VA_ARGS__); } while (0)

/* c's steps held in memory; the rest go to a file (common/spill.h).  Its
 * kernels and pairs, written once and read back in order, keep only the
 * spill's cache (8 blocks of 64 KiB each: 17 states at --threads 16). */
#define COMM_STEPS_MEM (2u << 20)

static size_t nst(const struct comm *c) { return spill_count(c->st); }
/* Step i: valid as common/spill.h says */
static struct cstep *cs(const struct comm *c, size_t i) { return spill_at(c->st, i); }

/* Step nst(c) for range id. */
static uint32_t step_make(struct comm *c, uint32_t id)
{
	struct cstep *st = spill_push(c->st);
	st->range = id;
	u32map_put(&c->range2step, id, (uint32_t)(nst(c) - 1));
	return (uint32_t)(nst(c) - 1);
}

/* A step's kernels' intervals: made at its first kernel, freed when summed. */
static struct ivset *step_iv(struct cstep *st)
{
	if (!st->iv) st->iv = xcalloc(2, sizeof(*st->iv));
	return st->iv;
}

static void step_free_iv(struct cstep *st)
{
	if (!st->iv) return;
	free(st->iv[0].v); free(st->iv[1].v); free(st->iv);
	st->iv = NULL;
}

/* Whether range x is a step: a selected top-level push/pop range. */
static int is_step(const struct comm *c, const struct attr_range *x)
{
	return x->kind == GP_NVTX_PUSHPOP && x->depth == 0 && selection_has(c->sel, x->s);
}

/* The step of range id + 1, 0 for none, made when it gets its first
 * kernel (the ranges that are no step are asked again, not kept: ~30 a
 * step); the steps without kernels are made at the fill. */
static uint64_t step_of(struct comm *c, uint32_t id)
{
	uint64_t k = u32map_find(&c->range2step, id);
	if (k) return k;
	const struct attr_range x = attribution_range(c->attr, id);
	return is_step(c, &x) ? step_make(c, id) + 1 : 0;
}

/* What c takes of the context it is made with. */
static void comm_config(struct comm *c, const struct stats_ctx *ctx)
{
	c->r = ctx->r;
	c->attr = ctx->pipe.attr;
	c->sel = ctx->sel;
	c->lag = ctx->union_lag ? ctx->union_lag : COMM_LAG;
	c->from = ctx->join_from;
}

static void *comm_new(const struct stats_ctx *ctx)
{
	struct comm *c = xcalloc(1, sizeof(*c));
	comm_config(c, ctx);
	u64map_init(&c->pid2proc);
	c->st = spill_new(sizeof(struct cstep), COMM_STEPS_MEM);
	c->pairs = spill_new(sizeof(struct cpair), 0);
	return c;
}

static void comm_free(void *self)
{
	struct comm *c = self;
	if (!c) return;
	for (size_t i = 0; i < c->np; i++) {
		struct cproc *p = &c->p[i];
		spill_free(p->ks); free(p->nc); free(p->open); free(p->log);
		ivpair_free(&p->cc);
	}
	for (size_t i = 0; i < nst(c); i++) step_free_iv(cs(c, i));
	spill_free(c->st);
	spill_free(c->pairs);
	free(c->ids);
	free(c->p);
	u64map_free(&c->pid2proc);
	u32map_free(&c->range2step);
	free(c);
}

static struct cproc *proc_get(struct comm *c, uint32_t pid)
{
	static const struct cproc zero;
	size_t had = c->np;
	struct cproc *p = VEC_KEYED(&c->pid2proc, pid, c->p, c->np, c->cp, &zero);
	if (c->np > had) { p->pid = pid; p->cc.keep_head = c->from > 0; }
	return p;
}

static void kern_push(struct cproc *p, struct ckern k)
{
	if (!p->ks) p->ks = spill_new(sizeof(k), 0);
	*(struct ckern *)spill_push(p->ks) = k;
	p->nnccl++;
}

static void comm_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct comm *c = self;
	/* known, even with no kernels (its rank: the context's) */
	if (r->rec->type == GP_REC_PROCESS) proc_get(c, r->rec->u.process.pid);
}

static void step_sum(struct cstep *st)
{
	struct ivset none[2] = { { 0 }, { 0 } };
	struct ivset *iv = st->iv ? st->iv : none;
	st->sp.comm = ivset_union(&iv[0]).busy;
	st->sp.compute = ivset_union(&iv[1]).busy;
	st->sp.overlap = ivset_overlap(&iv[0], &iv[1]);
	step_free_iv(st);
	st->summed = 1;
}

/* Step i got its first kernel here: into p's log and ring; the oldest
 * step of a full ring is summed (early: by a ring that may have counted
 * steps an earlier slice saw), but by a later slice's a step that began
 * before its slice (the earlier slice may hold kernels of it: they are
 * summed together after the merge). */
static void step_enter(struct comm *c, struct cproc *p, uint32_t i)
{
	cs(c, i)->open = 1;
	VEC_PUSH(p->log, p->nlog, p->clog, i);
	if (p->nopen == COMM_STEPS_OPEN) {
		struct cstep *z = cs(c, p->open[p->open_head]);
		if (!z->summed && (!c->from || attribution_range(c->attr, z->range).s >= c->from)) {
			step_sum(z);
			z->early = c->from > 0;
		}
		p->open[p->open_head] = i;
		p->open_head = (p->open_head + 1) % COMM_STEPS_OPEN;
		return;
	}
	VEC_PUSH(p->open, p->nopen, p->copen, i);
}

/* A kernel of step i: counted; its interval kept until the step is summed
 * (when COMM_STEPS_OPEN newer steps of its process got kernels). */
static void step_kernel(struct comm *c, struct cproc *p, uint32_t i, const struct gpu_op *op, int nccl)
{
	struct cstep *st = cs(c, i);
	st->kernels++;
	st->coll += nccl;
	if (st->summed) {
		c->late_kernels++;
		if (st->early) c->lost = 1; /* one pass may still have held it open */
		return;
	}
	ivset_add(&step_iv(st)[nccl ? 0 : 1], op->s, op->e);
	if (!st->open) step_enter(c, p, i);
	cs(c, i)->last_seq = (uint32_t)p->nlog;
}

/* A kernel: into its rank's figures when it starts in the selection, and
 * into the selected steps it belongs to. */
static void comm_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	struct comm *c = self;
	if (op->kind != OP_KERNEL) return;
	int sel = stats_selected(ctx, op->s), nccl = op->cls == OPC_COMM, steps = 0;
	size_t n = attribution_op(c->attr, op, &c->ids, &c->cids);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = step_of(c, c->ids[i]);
		if (k) c->ids[steps++] = (uint32_t)(k - 1);
	}
	if (!sel && !steps) return;
	struct cproc *p = proc_get(c, op->pid);
	if (sel) {
		p->nsel++;
		uint64_t s = op->s, e = op->e;
		if (ivpair_admit(&p->cc, &s, &e)) ivpair_add(&p->cc, !nccl, s, e, c->lag);
	}
	if (sel && nccl) {
		kern_push(p, (struct ckern){ op->s, op->e, 0, op->corr, op->name_id, (uint32_t)p->nnccl });
	}
	for (int i = 0; i < steps; i++) {
		step_kernel(c, p, c->ids[i], op, nccl);
		/* only a selected NCCL kernel can have a wait */
		if (sel && nccl) {
			*(struct cpair *)spill_push(c->pairs) = (struct cpair){ c->ids[i], (uint32_t)(p->nnccl - 1) };
		}
	}
}

/* ------------------------------------------------------------ shards */

/* One process's steps of o merged into c's (sm: o's step -> c's, inv:
 * back; had[k]: c's step k had kernels before the merge): o's log replayed
 * against c's ring, as one pass would have met those first kernels. */
static void merge_log(struct comm *c, struct cproc *p, const struct comm *o, const struct cproc *q,
		      const uint32_t *sm, const uint32_t *inv, const char *had)
{
	/* o's log position -> c's log length then (for last_seq) */
	uint32_t *at = xmalloc((q->nlog + 1) * sizeof(*at));
	for (size_t j = 0; j < q->nlog; j++) {
		at[j] = (uint32_t)p->nlog;
		uint32_t k = sm[q->log[j]];
		if (had[k]) continue; /* c saw it first: no new step for one pass */
		/* a step of c's ring summed now must not have had kernels in o
		 * after this point (one pass would have found it summed) */
		if (p->nopen == COMM_STEPS_OPEN) {
			uint32_t z = inv[p->open[p->open_head]];
			if (z != UINT32_MAX && cs(o, z)->kernels && cs(o, z)->last_seq > j) c->lost = 1;
		}
		step_enter(c, p, k);
	}
	at[q->nlog] = (uint32_t)p->nlog;
	for (size_t t = 0; t < nst(o); t++)
		if (cs(o, t)->kernels && attribution_range(o->attr, cs(o, t)->range).pid == p->pid) cs(c, sm[t])->last_seq = at[cs(o, t)->last_seq];
	free(at);
}

/* Shards: o, the next slice's, into c (the head of this file). */
static int comm_merge(void *self, void *src, const struct stats_ctx *ctx)
{
	struct comm *c = self, *o = src;
	if (!nst(c) && !c->np && !spill_count(c->pairs) && !c->late_kernels) {
		/* c is new (the driver's, for the merged slices): it takes o's
		 * figures whole rather than a copy of every step beside o's */
		struct comm mine = *c;
		*c = *o;
		*o = mine;
		comm_config(c, ctx); /* ctx made c (o is freed after) */
		return c->lost ? -1 : 0;
	}
	c->lost |= o->lost;
	/* o's steps -> c's (by range) */
	uint32_t *sm = xmalloc((nst(o) ? nst(o) : 1) * sizeof(*sm));
	for (size_t t = 0; t < nst(o); t++) {
		uint64_t k = u32map_find(&c->range2step, cs(o, t)->range);
		sm[t] = k ? (uint32_t)(k - 1) : step_make(c, cs(o, t)->range);
	}
	char *had = xcalloc(nst(c) ? nst(c) : 1, 1);
	uint32_t *inv = xmalloc((nst(c) ? nst(c) : 1) * sizeof(*inv)); /* c's step -> o's */
	for (size_t k = 0; k < nst(c); k++) {
		had[k] = cs(c, k)->kernels > 0;
		inv[k] = UINT32_MAX;
	}
	for (size_t t = 0; t < nst(o); t++) inv[sm[t]] = (uint32_t)t;
	/* the steps' figures */
	for (size_t t = 0; t < nst(o); t++) {
		struct cstep *y = cs(o, t), *d = cs(c, sm[t]);
		if (!y->kernels) continue;
		d->kernels += y->kernels;
		d->coll += y->coll;
		if (y->summed) {
			if (had[sm[t]]) c->lost = 1; /* two parts summed apart */
			d->sp = y->sp;
			d->summed = 1;
			d->early = y->early;
		} else if (d->summed) {
			/* one pass had summed it before o's kernels came */
			if (d->early) c->lost = 1;
			c->late_kernels += y->kernels;
		} else if (y->iv) {
			struct ivset *iv = step_iv(d);
			ivset_append(&iv[0], &y->iv[0]);
			ivset_append(&iv[1], &y->iv[1]);
		}
	}
	c->late_kernels += o->late_kernels;
	/* the processes: NCCL kernels, unions, the steps' order */
	u64map nccl_off;
	u64map_init(&nccl_off);
	for (size_t i = 0; i < o->np && !c->lost; i++) {
		struct cproc *q = &o->p[i];
		uint32_t pid = q->pid;
		struct cproc *p = proc_get(c, pid);
		uint32_t off = (uint32_t)p->nnccl;
		*u64map_get(&nccl_off, pid, MAP_INSERT) = off;
		p->nsel += q->nsel;
		for (size_t j = 0; j < q->nnccl; j++) {
			struct ckern k = *(const struct ckern *)spill_get(q->ks, j);
			k.ix += off; /* as added: after c's */
			kern_push(p, k);
		}
		uint64_t x;
		if (ivpair_merge(&p->cc, &q->cc, c->lag, &x) == IVM_INEXACT) c->lost = 1;
		merge_log(c, p, o, q, sm, inv, had);
	}
	for (size_t i = 0; i < spill_count(o->pairs) && !c->lost; i++) {
		struct cpair pr = *(const struct cpair *)spill_get(o->pairs, i);
		uint64_t *off = u64map_get(&nccl_off, attribution_range(o->attr, cs(o, pr.step)->range).pid, MAP_FIND);
		pr.nccl_ix += off ? (uint32_t)*off : 0;
		pr.step = sm[pr.step];
		*(struct cpair *)spill_push(c->pairs) = pr;
	}
	u64map_free(&nccl_off);
	free(had);
	free(inv);
	free(sm);
	return c->lost ? -1 : 0;
}

static size_t nccl_count(const struct comm *c, int *procs_with_kernels)
{
	size_t n = 0;
	int pk = 0;
	for (size_t i = 0; i < c->np; i++) {
		n += c->p[i].nnccl;
		pk += c->p[i].nsel > 0;
	}
	*procs_with_kernels = pk;
	return n;
}

static int comm_in_default(void *self, const struct stats_ctx *ctx)
{
	const struct comm *c = self;
	int pk;
	size_t n = nccl_count(c, &pk);
	return n > 0 || pk > 1;
}

/* ------------------------------------------------------------ ordering */
static int cmp_kern_start(const void *a, const void *b)
{
	const struct ckern *x = a, *y = b;
	if (x->s != y->s) return x->s < y->s ? -1 : 1;
	if (x->e != y->e) return x->e < y->e ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* steps (indices into sort_comm's) by start, end, name; sort_s: their
 * starts, so that only ties read the ranges */
static const struct comm *sort_comm;
static const uint64_t *sort_s;
static int cmp_step(uint32_t i, uint32_t j)
{
	if (sort_s[i] != sort_s[j]) return sort_s[i] < sort_s[j] ? -1 : 1;
	const struct attr_range x = attribution_range(sort_comm->attr, cs(sort_comm, i)->range);
	const struct attr_range y = attribution_range(sort_comm->attr, cs(sort_comm, j)->range);
	if (x.e != y.e) return x.e < y.e ? -1 : 1;
	return strcmp(attribution_name(sort_comm->attr, x.name), attribution_name(sort_comm->attr, y.name));
}

/* a step (index into sort_comm's) of a process (index into the fill's
 * processes): by process, then as cmp_step, then as made */
struct pstep { uint32_t proc, st; };
static int cmp_pstep(const void *a, const void *b)
{
	const struct pstep *x = a, *y = b;
	if (x->proc != y->proc) return x->proc < y->proc ? -1 : 1;
	int c = cmp_step(x->st, y->st);
	return c ? c : x->st < y->st ? -1 : x->st > y->st;
}

/* ranks first in rank order, then processes without a rank by pid */
static int cmp_proc(const void *a, const void *b)
{
	const struct cproc *x = a, *y = b;
	if ((x->rank < 0) != (y->rank < 0)) return x->rank < 0 ? 1 : -1;
	if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void rank_str(char *buf, size_t n, const struct cproc *p)
{
	if (p->rank >= 0) snprintf(buf, n, "rank %d", p->rank);
	else snprintf(buf, n, "pid %u", p->pid);
}

/* ------------------------------------------------------------ matching */
/* The k-th NCCL kernels of every rank with kernels form collective k.  On a
 * mismatch (counts or names), says why in c->note / on stderr and leaves
 * every wait unknown.  With several ranks, each one's kernels are read
 * into memory (nc) in start order; one rank waits for no peer, its kernels
 * stay where they are. */
static void match_collectives(struct comm *c, struct cproc **ps, size_t nps)
{
	if (nps == 1) { /* every wait 0: its kernels are not read back */
		c->wait_known = 1;
		ps[0]->matched = 1;
		snprintf(c->note, sizeof(c->note),
			 " Wait: 0 - the trace has one rank, so there is no peer to wait for (merge the\n"
			 "   ranks' traces with `gpuprof merge` first).\n");
		return;
	}
	for (size_t i = 0; i < nps; i++) {
		struct cproc *p = ps[i];
		p->nc = xmalloc((p->nnccl ? p->nnccl : 1) * sizeof(*p->nc));
		for (size_t j = 0; j < p->nnccl; j++) p->nc[j] = *(const struct ckern *)spill_get(p->ks, j);
		qsort(p->nc, p->nnccl, sizeof(*p->nc), cmp_kern_start);
	}
	size_t n0 = ps[0]->nnccl;
	char why[512] = "", a[32], b[32]; /* a: ps[0]'s rank, b: the other's */
	rank_str(a, sizeof(a), ps[0]);
	for (size_t i = 1; i < nps && !*why; i++) {
		if (ps[i]->nnccl == n0) continue;
		rank_str(b, sizeof(b), ps[i]);
		snprintf(why, sizeof(why), "%s ran %zu NCCL kernels, %s ran %zu", a, n0, b, ps[i]->nnccl);
	}
	for (size_t k = 0; k < n0 && !*why; k++)
		for (size_t i = 1; i < nps && !*why; i++) {
			const char *x = tool_str(c->r, ps[0]->nc[k].name_id), *y = tool_str(c->r, ps[i]->nc[k].name_id);
			if (!strcmp(x, y)) continue;
			rank_str(b, sizeof(b), ps[i]);
			char *dx = demangle(x), *dy = demangle(y);
			snprintf(why, sizeof(why), "NCCL kernel #%zu is %.180s on %s but %.180s on %s", k + 1, dx, a, dy, b);
			free(dx); free(dy);
		}
	if (*why) {
		tool_warn("comm: collectives not matched across ranks (%s): no wait figures", why);
		snprintf(c->note, sizeof(c->note),
			 " Wait: not computed - collectives are matched across ranks by order, and %s.\n", why);
		return;
	}
	c->wait_known = 1;
	for (size_t i = 0; i < nps; i++) ps[i]->matched = 1;
	size_t capped = 0;
	for (size_t k = 0; k < n0; k++) {
		uint64_t latest = 0;
		for (size_t i = 0; i < nps; i++)
			if (ps[i]->nc[k].s > latest) latest = ps[i]->nc[k].s;
		for (size_t i = 0; i < nps; i++) {
			struct ckern *q = &ps[i]->nc[k];
			uint64_t w = latest - q->s;
			/* a kernel cannot wait longer than it ran: more means the
			 * ranks' clocks disagree */
			if (w > q->e - q->s) { w = q->e - q->s; capped++; }
			q->wait = w;
			ps[i]->wait += w;
			if (w > ps[i]->max_wait) ps[i]->max_wait = w;
		}
	}
	snprintf(c->note, sizeof(c->note),
		 " Wait: %zu collectives matched across %zu ranks by order; wait = latest start among the\n"
		 "   ranks - this rank's start, i.e. the time its NCCL kernel sat waiting for the peers.\n",
		 n0, nps);
	if (capped) {
		tool_warn("comm: %zu waits longer than the kernel itself (capped at its duration): the ranks' clocks disagree",
			  capped);
		NOTE_ADD(c->note,
			 " %zu waits were longer than the kernel itself and are capped at its duration: the\n"
			 "   ranks' clocks disagree (different hosts?), so the wait figures are doubtful.\n",
			 capped);
	}
}

/* ------------------------------------------------------------ steps */
/* a step of the table: a name's occurrence on the ranks, and the earliest
 * start among them (16 bytes: ~2 a training step) */
struct step { uint64_t first; uint32_t name, occ; };
/* a row: its step (in c->st) and its place (index into steps, into ps) */
struct srow { uint32_t st, step, proc; };

static struct step *sort_steps;
static int cmp_srow(const void *a, const void *b)
{
	const struct srow *x = a, *y = b;
	const struct step *sx = &sort_steps[x->step], *sy = &sort_steps[y->step];
	if (sx->first != sy->first) return sx->first < sy->first ? -1 : 1;
	int n = sx->name == sy->name ? 0 : strcmp(attribution_name(sort_comm->attr, sx->name), attribution_name(sort_comm->attr, sy->name));
	if (n) return n;
	if (sx->occ != sy->occ) return sx->occ < sy->occ ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* Each step's wait: the waits of the selected NCCL kernels attributed to it
 * (their ranks matched or not: unmatched waits are 0 and not printed; so are
 * those of a rank without peers, whose kernels were not read: nc NULL).
 * byp: pid -> index in ps + 1. */
static void step_waits(struct comm *c, struct cproc **ps, size_t nps, u64map *byp)
{
	uint32_t **inv = xcalloc(nps ? nps : 1, sizeof(*inv)); /* NCCL kernel as added -> sorted (nc) */
	size_t nread = 0;
	for (size_t i = 0; i < nps; i++) {
		if (!ps[i]->nc) continue;
		nread++;
		inv[i] = xmalloc((ps[i]->nnccl ? ps[i]->nnccl : 1) * sizeof(**inv));
		for (size_t j = 0; j < ps[i]->nnccl; j++) inv[i][ps[i]->nc[j].ix] = (uint32_t)j;
	}
	for (size_t q = 0; q < spill_count(c->pairs) && nread; q++) {
		const struct cpair pr = *(const struct cpair *)spill_get(c->pairs, q);
		struct cstep *st = cs(c, pr.step);
		uint64_t *i = u64map_get(byp, attribution_range(c->attr, st->range).pid, MAP_FIND);
		if (i && inv[*i - 1]) st->wait += ps[*i - 1]->nc[inv[*i - 1][pr.nccl_ix]].wait;
	}
	for (size_t i = 0; i < nps; i++) free(inv[i]);
	free(inv);
}

static void fill_steps(struct comm *c, struct report *rep, struct cproc **ps, size_t nps, uint64_t base)
{
	/* name -> its steps by occurrence (occurrence k: occ[name][k - 1]) */
	strmap idx;
	strmap_init(&idx);
	struct occs { uint32_t *v; size_t n, cap; } *occ = NULL;
	size_t nocc = 0, cocc = 0;
	struct step *steps = NULL; size_t nsteps = 0, csteps = 0;
	struct srow *rows = NULL; size_t nrows = 0, crows = 0;
	u64map byp;             /* pid -> index in ps + 1 */
	u64map_init(&byp);
	for (size_t i = 0; i < nps; i++) *u64map_get(&byp, ps[i]->pid, MAP_INSERT) = i + 1;
	step_waits(c, ps, nps, &byp);
	/* each process's steps, by start */
	struct pstep *order = xmalloc((nst(c) ? nst(c) : 1) * sizeof(*order));
	uint64_t *starts = xmalloc((nst(c) ? nst(c) : 1) * sizeof(*starts));
	size_t norder = 0;
	for (size_t j = 0; j < nst(c); j++) {
		const struct attr_range x = attribution_range(c->attr, cs(c, j)->range);
		starts[j] = x.s;
		uint64_t *i = u64map_get(&byp, x.pid, MAP_FIND);
		if (i) order[norder++] = (struct pstep){ (uint32_t)(*i - 1), (uint32_t)j };
	}
	sort_comm = c;
	sort_s = starts;
	if (norder) qsort(order, norder, sizeof(*order), cmp_pstep);
	free(starts); /* before the steps and rows grow */
	for (size_t a = 0, b; a < norder; a = b) {
		strmap seen;    /* name -> occurrences so far on this rank */
		strmap_init(&seen);
		for (b = a; b < norder && order[b].proc == order[a].proc; b++) {
			const struct attr_range rg = attribution_range(c->attr, cs(c, order[b].st)->range);
			const char *name = attribution_name(c->attr, rg.name);
			int is_new;
			size_t n_occ = ++*strmap_get(&seen, name, &is_new);
			size_t *ni = strmap_get(&idx, name, &is_new);
			if (is_new) {
				struct occs none = { NULL, 0, 0 };
				*ni = nocc;
				VEC_PUSH(occ, nocc, cocc, none);
			}
			struct occs *oc = &occ[*ni];
			if (n_occ > oc->n) {
				struct step st = { rg.s, rg.name, (uint32_t)n_occ };
				uint32_t k = (uint32_t)nsteps;
				VEC_PUSH(steps, nsteps, csteps, st);
				VEC_PUSH(oc->v, oc->n, oc->cap, k);
			}
			uint32_t slot = oc->v[n_occ - 1];
			struct step *st = &steps[slot];
			if (rg.s < st->first) st->first = rg.s;
			struct srow row = { order[b].st, slot, order[b].proc };
			VEC_PUSH(rows, nrows, crows, row);
		}
		strmap_free(&seen);
	}
	free(order);
	sort_steps = steps;
	if (nrows) qsort(rows, nrows, sizeof(*rows), cmp_srow);
	for (size_t i = 0; i < nrows; i++) {
		const struct srow *r = &rows[i];
		const struct cstep *w = cs(c, r->st);
		const struct attr_range x = attribution_range(c->attr, w->range);
		const struct cproc *p = ps[r->proc];
		struct cell *cl = report_row(rep);
		if (p->rank >= 0) cell_num(&cl[STEP_RANK], p->rank);
		cell_num(&cl[STEP_PID], p->pid);
		cell_num(&cl[STEP_N], (double)steps[r->step].occ);
		/* signed: in a merged trace a later input's step may start before the
		 * first input's trace did */
		cell_num(&cl[STEP_START], (double)(int64_t)(x.s - base));
		cell_num(&cl[STEP_LEN], (double)(x.e - x.s));
		cell_num(&cl[STEP_KERNELS], (double)w->kernels);
		cell_num(&cl[STEP_COLLECTIVES], (double)w->coll);
		cell_num(&cl[STEP_COMM], (double)w->sp.comm);
		cell_num(&cl[STEP_COMPUTE], (double)w->sp.compute);
		cell_num(&cl[STEP_OVERLAP], (double)w->sp.overlap);
		if (p->matched) cell_num(&cl[STEP_WAIT], (double)w->wait);
		cell_str(&cl[STEP_RANGE], attribution_name(c->attr, steps[r->step].name));
	}
	for (size_t i = 0; i < nocc; i++) free(occ[i].v);
	free(occ);
	free(steps); free(rows);
	u64map_free(&byp);
	strmap_free(&idx);
}

/* ------------------------------------------------------------ fill */
/* Fills the per-rank table and the per-step table (base: the trace start,
 * for the Start column).  Says on stderr, once, why there are no wait
 * figures (collectives that do not match across ranks) or no rows (no
 * kernels).  The notes point into c: print before comm_free. */
static void comm_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct comm *c = self;
	struct report *ranks = &tables[0], *steps = &tables[1];
	uint64_t base = ctx->out_base;
	int pk;
	size_t nccl = nccl_count(c, &pk);
	report_define(ranks, pk ? "Communication per Rank (NCCL kernels vs other kernels)"
				: "Communication per Rank: none, the trace has no kernels", comm_cols, COMM_NCOLS);
	report_define(steps, pk ? "Communication per Step (top-level NVTX push/pop ranges, matched across ranks)"
				: "Communication per Step: none, the trace has no kernels", comm_steps_cols, STEP_NCOLS);
	if (!pk) {
		tool_warn("comm: the trace has no kernel records: nothing to report");
		return;
	}
	/* the steps that got no kernel, then those still open */
	for (uint32_t id = 0; id < attribution_nranges(c->attr); id++) {
		const struct attr_range x = attribution_range(c->attr, id);
		if (is_step(c, &x) && !u32map_find(&c->range2step, id)) step_make(c, id);
	}
	for (size_t i = 0; i < nst(c); i++)
		if (!cs(c, i)->summed) step_sum(cs(c, i));
	/* ranks: of the process records (ctx->rank_of: rank + 1), else the header's */
	const gp_header *h = gp_reader_header(ctx->r);
	for (size_t i = 0; i < c->np; i++) {
		struct cproc *p = &c->p[i];
		uint64_t *r = u64map_get(&ctx->rank_of, p->pid, MAP_FIND);
		p->rank = r ? ((int64_t)*r >= 1 ? (int32_t)(*r - 1) : -1) : h && p->pid == h->pid ? h->rank : -1;
	}
	/* sorting moves the processes: pid2proc is not used after this */
	qsort(c->p, c->np, sizeof(*c->p), cmp_proc);
	struct cproc **ps = xmalloc(c->np * sizeof(*ps));
	size_t nps = 0, idle = 0;
	for (size_t i = 0; i < c->np; i++) {
		if (c->p[i].nsel) ps[nps++] = &c->p[i];
		else idle++;
	}
	uint64_t late = 0, late_ns = 0;
	for (size_t i = 0; i < nps; i++) {
		struct cproc *p = ps[i];
		struct ivsum a, b;
		ivpair_finish(&p->cc, &a, &b, &p->overlap);
		p->comm = a.busy; p->compute = b.busy;
		late += p->cc.late; late_ns += p->cc.late_ns;
	}
	/* Ranks take part in the matching (the first of ps, as sorted); a
	 * process without a rank beside them (a helper that used CUDA) did not
	 * join the collectives.  No ranks: every process does. */
	size_t npart = 0;
	while (npart < nps && ps[npart]->rank >= 0) npart++;
	size_t unranked = npart ? nps - npart : 0;
	if (!npart) npart = nps;
	if (nccl) {
		match_collectives(c, ps, npart);
		if (unranked && c->wait_known) {
			NOTE_ADD(c->note,
				 " Processes without a rank (%zu) take no part in the matching (Wait '-').\n", unranked);
		}
	} else {
		snprintf(c->note, sizeof(c->note),
			 " No NCCL kernels: communication that does not run as NCCL kernels (gloo copies\n"
			 "   through host memory, MPI) is not counted here, so Comm and Wait are empty.\n");
	}
	for (size_t i = 0; i < nps; i++) {
		struct cproc *p = ps[i];
		struct cell *cl = report_row(ranks);
		if (p->rank >= 0) cell_num(&cl[COMM_RANK], p->rank);
		cell_num(&cl[COMM_PID], p->pid);
		cell_num(&cl[COMM_NCCL_KERNELS], (double)p->nnccl);
		cell_num(&cl[COMM_COMM], (double)p->comm);
		cell_num(&cl[COMM_OTHER_KERNELS], (double)(p->nsel - p->nnccl));
		cell_num(&cl[COMM_COMPUTE], (double)p->compute);
		cell_num(&cl[COMM_OVERLAP], (double)p->overlap);
		if (p->comm) cell_num(&cl[COMM_OVERLAP_PCT], 100.0 * (double)p->overlap / (double)p->comm);
		cell_num(&cl[COMM_EXPOSED], (double)(p->comm - p->overlap));
		if (p->matched) {
			cell_num(&cl[COMM_WAIT], (double)p->wait);
			if (p->comm) cell_num(&cl[COMM_WAIT_PCT], 100.0 * (double)p->wait / (double)p->comm);
			cell_num(&cl[COMM_MAX_WAIT], (double)p->max_wait);
		}
	}
	NOTE_ADD(c->note,
		 " Comm = union of NCCL kernel intervals (name contains \"nccl\"), Compute = union of the\n"
		 "   other kernels, Overlap = time both ran, Overlap (%%) of Comm, Exposed Comm = Comm -\n"
		 "   Overlap.  Wait (%%) of Comm.  A rank is a process (pid) with kernels%s.\n",
		 idle ? "; processes without kernels (a launcher) are left out" : "");
	ranks->note = c->note;
	snprintf(c->steps_note, sizeof(c->steps_note),
		 " A kernel counts in the step in which its launch call started (%s; no\n"
		 "   launch call recorded: in none), so Comm/Compute may run past the step's end.\n"
		 "   N = occurrence of the range name on that rank.  Wait: sum over the step's\n"
		 "   collectives ('-': not computed, see the per-rank table).\n",
		 attribution_rule(c->attr) == ATTR_ANY_THREAD ? "any thread of the process"
							      : "only calls on the step range's thread");
	steps->note = c->steps_note;
	if (late) {
		NOTE_ADD(c->note,
			 " %llu kernel records arrived more than %u kernels after their start time was summed:\n"
			 "   Comm/Compute may be short by up to %llu ns.\n",
			 (unsigned long long)late, (unsigned)c->lag, (unsigned long long)late_ns);
	}
	if (c->late_kernels) {
		NOTE_ADD(c->steps_note,
			 " %llu kernels came after their step was summed (%u newer steps had kernels): counted,\n"
			 "   their time not.\n",
			 (unsigned long long)c->late_kernels, COMM_STEPS_OPEN);
	}
	fill_steps(c, steps, ps, nps, base);
	free(ps);
}

static const struct stats_table comm_tables[] = {
	{ "comm",
	  "per rank (process) of a merged multi-rank trace: NCCL kernel time\n"
	  "(Comm), other kernel time (Compute), their overlap, and the wait\n"
	  "at each collective (latest start among the ranks - this rank's\n"
	  "start; collectives matched by order); also prints comm_steps" },
	{ "comm_steps",
	  "the same per top-level NVTX push/pop range (\"step <i>\"),\n"
	  "matched across ranks by name and occurrence.  comm and\n"
	  "comm_steps are in the default set only when the trace has NCCL\n"
	  "kernels or kernels of several processes" },
};

const struct stats_report stats_report_comm = {
	.tables = comm_tables, .ntables = 2,
	.types = STATS_TYPE(GP_REC_PROCESS),
	.needs = STATS_NEED_RANGES | STATS_NEED_OPS,
	.new = comm_new, .add = comm_add, .op = comm_op, .merge = comm_merge, .in_default = comm_in_default,
	.fill = comm_fill, .free = comm_free,
};
