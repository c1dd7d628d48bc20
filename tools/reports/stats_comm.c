/* stats_comm.c — `stats --report comm`: per rank (process) of a merged
 * multi-process trace, communication (NCCL kernel) time, compute (other
 * kernel) time, their overlap, and how long each rank's collectives waited
 * for the peers; its second table, `comm_steps`, breaks the same down per
 * top-level NVTX range ("step <i>"), matched across ranks by name and
 * occurrence.
 *
 * Collected while stats streams the trace (kernels joined to their launch
 * calls, process ranks; the top-level push/pop ranges are the context's);
 * computed at the end.  Memory: 40 bytes per kernel and 16 per
 * (step, kernel) pair.
 *
 * Ranks are processes (pid), with the rank of their GP_REC_PROCESS record.
 * A kernel whose name contains "nccl" (any case) is communication, every
 * other kernel compute.  Collectives are matched across ranks by order: the
 * k-th NCCL kernel (by GPU start) of every rank is one collective, provided
 * every rank ran the same number of NCCL kernels with the same names; its
 * wait on a rank = latest start among the ranks - this rank's start.  A
 * kernel belongs to the steps (top-level push/pop ranges) it is attributed
 * to by the one rule (analysis/attribution.h): those open when its launch
 * call started, on any thread of the process (--attribution same-thread:
 * the launching thread's) — that is where the host code asked for it, while
 * the GPU may run it steps later; a kernel with no recorded launch call
 * belongs to no step.  The per-rank table counts the kernels that start in
 * the selection (--since/--until); a step row, the steps that start in it,
 * with all their kernels. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/intervals.h"
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

struct ckern {
	uint64_t s, e;
	uint64_t wait;    /* at its collective (when matched) */
	uint64_t corr;
	uint32_t name_id;
	uint32_t seq;     /* index in its process's kernels as added */
	uint8_t nccl;
	uint8_t sel;      /* starts in the selection: counts in the per-rank figures */
};

/* A top-level range of the context's (attribution.h): a step */
struct crange { uint64_t s, e; const char *name; uint32_t id; };

/* A kernel attributed to a step: range id, (pid << 32 | kernel seq). */
struct cpair { uint64_t range, ref; };

struct cproc {
	uint32_t pid;
	int32_t rank;
	struct ckern *k; size_t nk, ck;  /* those with sel first (after comm_fill sorts them) */
	size_t nsel;
	struct crange *rg; size_t nr, cr;
	/* results */
	size_t nnccl;
	int matched;      /* took part in the matching, which succeeded */
	uint64_t comm, compute, overlap, wait, max_wait;
};

struct comm {
	gp_reader *r;
	uint32_t hdr_pid;
	int32_t hdr_rank;
	u64map pid2proc;
	struct cproc *p; size_t np, cp;
	u64map pid2rank;  /* from GP_REC_PROCESS: rank + 2 (0: none seen) */
	int wait_known;   /* collectives matched (or one rank) */
	const struct attribution *attr;  /* the context's ranges */
	struct cpair *pairs; size_t npairs, cpairs;
	uint32_t *ids; size_t cids;      /* attribution_op's buffer */
	char title[160], steps_title[160], note[2048], steps_note[1024];
};

static struct comm *comm_new(gp_reader *r, const struct attribution *attr)
{
	struct comm *c = xcalloc(1, sizeof(*c));
	c->r = r;
	const gp_header *h = gp_reader_header(r);
	c->hdr_pid = h ? h->pid : 0;
	c->hdr_rank = h ? h->rank : -1;
	u64map_init(&c->pid2proc);
	u64map_init(&c->pid2rank);
	c->attr = attr;
	return c;
}

static void comm_free(struct comm *c)
{
	if (!c) return;
	for (size_t i = 0; i < c->np; i++) {
		struct cproc *p = &c->p[i];
		free(p->k);
		free(p->rg);
	}
	free(c->pairs);
	free(c->ids);
	free(c->p);
	u64map_free(&c->pid2proc);
	u64map_free(&c->pid2rank);
	free(c);
}

static struct cproc *proc_get(struct comm *c, uint32_t pid)
{
	uint64_t *s = u64map_get(&c->pid2proc, pid, MAP_FIND);
	if (s) return &c->p[*s];
	struct cproc p;
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	*u64map_get(&c->pid2proc, pid, MAP_INSERT) = c->np;
	VEC_PUSH(c->p, c->np, c->cp, p);
	return &c->p[c->np - 1];
}

static void comm_add(struct comm *c, const gp_record *rec)
{
	if (rec->type != GP_REC_PROCESS) return;
	*u64map_get(&c->pid2rank, rec->u.process.pid, MAP_INSERT) =
		rec->u.process.rank >= 0 ? (uint64_t)rec->u.process.rank + 2 : 1;
	proc_get(c, rec->u.process.pid); /* known, even with no kernels */
}

/* A kernel: kept when it starts in the selection or belongs to a selected
 * step (a top-level push/pop range starting in it). */
static void comm_op(struct comm *c, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	if (op->kind != OP_KERNEL) return;
	int sel = stats_selected(ctx, op->s), steps = 0;
	size_t n = attribution_op(c->attr, op, &c->ids, &c->cids);
	for (size_t i = 0; i < n; i++) {
		const struct attr_range *x = attribution_range(c->attr, c->ids[i]);
		if (x->kind == GP_NVTX_PUSHPOP && x->depth == 0 && stats_selected(ctx, x->s)) c->ids[steps++] = c->ids[i];
	}
	if (!sel && !steps) return;
	struct cproc *p = proc_get(c, op->pid);
	struct ckern ck;
	memset(&ck, 0, sizeof(ck));
	ck.s = op->s;
	ck.e = op->e;
	ck.corr = op->corr;
	ck.name_id = op->name_id;
	ck.nccl = op->cls == OPC_COMM;
	ck.sel = (uint8_t)sel;
	ck.seq = (uint32_t)p->nk;
	VEC_PUSH(p->k, p->nk, p->ck, ck);
	for (int i = 0; i < steps; i++) {
		struct cpair pr = { c->ids[i], ((uint64_t)op->pid << 32) | ck.seq };
		VEC_PUSH(c->pairs, c->npairs, c->cpairs, pr);
	}
}

static size_t nccl_count(const struct comm *c, int *procs_with_kernels)
{
	size_t n = 0;
	int pk = 0;
	for (size_t i = 0; i < c->np; i++) {
		size_t sel = 0;
		for (size_t j = 0; j < c->p[i].nk; j++) {
			n += c->p[i].k[j].sel && c->p[i].k[j].nccl;
			sel += c->p[i].k[j].sel;
		}
		pk += sel > 0;
	}
	if (procs_with_kernels) *procs_with_kernels = pk;
	return n;
}

static int comm_in_default(const struct comm *c)
{
	int pk;
	size_t n = nccl_count(c, &pk);
	return n > 0 || pk > 1;
}

/* comm, compute and overlap of a set of kernels (pointers into one rank's) */
struct split { uint64_t comm, compute, overlap; };

static struct split split_kernels(struct ckern *const *k, size_t n, struct ivset *cv, struct ivset *ov)
{
	cv->n = ov->n = 0;
	for (size_t i = 0; i < n; i++) ivset_add(k[i]->nccl ? cv : ov, k[i]->s, k[i]->e);
	struct split s;
	s.comm = ivset_union(cv).busy;
	s.compute = ivset_union(ov).busy;
	s.overlap = ivset_overlap(cv, ov);
	return s;
}

/* ------------------------------------------------------------ ordering */
/* the selected kernels first, each part by start */
static int cmp_kern_start(const void *a, const void *b)
{
	const struct ckern *x = a, *y = b;
	if (x->sel != y->sel) return x->sel ? -1 : 1;
	if (x->s != y->s) return x->s < y->s ? -1 : 1;
	if (x->e != y->e) return x->e < y->e ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct cpair *x = a, *y = b;
	if (x->range != y->range) return x->range < y->range ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

static int cmp_range(const void *a, const void *b)
{
	const struct crange *x = a, *y = b;
	if (x->s != y->s) return x->s < y->s ? -1 : 1;
	if (x->e != y->e) return x->e < y->e ? -1 : 1;
	return strcmp(x->name, y->name);
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
 * every wait unknown. */
static void match_collectives(struct comm *c, struct cproc **ps, size_t nps)
{
	size_t n0 = ps[0]->nnccl;
	char why[512] = "";
	for (size_t i = 1; i < nps && !*why; i++) {
		if (ps[i]->nnccl == n0) continue;
		char a[32], b[32];
		rank_str(a, sizeof(a), ps[0]);
		rank_str(b, sizeof(b), ps[i]);
		snprintf(why, sizeof(why), "%s ran %zu NCCL kernels, %s ran %zu", a, n0, b, ps[i]->nnccl);
	}
	/* each rank's NCCL kernels, in start order (kernels are sorted) */
	struct ckern ***nk = xcalloc(nps, sizeof(*nk));
	for (size_t i = 0; i < nps; i++) {
		nk[i] = xmalloc((ps[i]->nnccl ? ps[i]->nnccl : 1) * sizeof(**nk));
		size_t m = 0;
		for (size_t j = 0; j < ps[i]->nsel; j++)
			if (ps[i]->k[j].nccl) nk[i][m++] = &ps[i]->k[j];
	}
	for (size_t k = 0; k < n0 && !*why; k++)
		for (size_t i = 1; i < nps && !*why; i++) {
			const char *x = tool_str(c->r, nk[0][k]->name_id), *y = tool_str(c->r, nk[i][k]->name_id);
			if (!strcmp(x, y)) continue;
			char a[32], b[32];
			rank_str(a, sizeof(a), ps[0]);
			rank_str(b, sizeof(b), ps[i]);
			char *dx = demangle(x), *dy = demangle(y);
			snprintf(why, sizeof(why), "NCCL kernel #%zu is %.180s on %s but %.180s on %s", k + 1, dx, a, dy, b);
			free(dx); free(dy);
		}
	if (*why) {
		tool_warn("comm: collectives not matched across ranks (%s): no wait figures", why);
		snprintf(c->note, sizeof(c->note),
			 " Wait: not computed - collectives are matched across ranks by order, and %s.\n", why);
		goto out;
	}
	c->wait_known = 1;
	for (size_t i = 0; i < nps; i++) ps[i]->matched = 1;
	size_t capped = 0;
	for (size_t k = 0; k < n0; k++) {
		uint64_t latest = 0;
		for (size_t i = 0; i < nps; i++)
			if (nk[i][k]->s > latest) latest = nk[i][k]->s;
		for (size_t i = 0; i < nps; i++) {
			struct ckern *q = nk[i][k];
			uint64_t w = latest - q->s;
			/* a kernel cannot wait longer than it ran: more means the
			 * ranks' clocks disagree */
			if (w > q->e - q->s) { w = q->e - q->s; capped++; }
			q->wait = w;
			ps[i]->wait += w;
			if (w > ps[i]->max_wait) ps[i]->max_wait = w;
		}
	}
	if (nps == 1)
		snprintf(c->note, sizeof(c->note),
			 " Wait: 0 - the trace has one rank, so there is no peer to wait for (merge the\n"
			 "   ranks' traces with `gpuprof merge` first).\n");
	else
		snprintf(c->note, sizeof(c->note),
			 " Wait: %zu collectives matched across %zu ranks by order; wait = latest start among the\n"
			 "   ranks - this rank's start, i.e. the time its NCCL kernel sat waiting for the peers.\n",
			 n0, nps);
	if (capped) {
		tool_warn("comm: %zu waits longer than the kernel itself (capped at its duration): the ranks' clocks disagree",
			  capped);
		size_t l = strlen(c->note);
		snprintf(c->note + l, sizeof(c->note) - l,
			 " %zu waits were longer than the kernel itself and are capped at its duration: the\n"
			 "   ranks' clocks disagree (different hosts?), so the wait figures are doubtful.\n",
			 capped);
	}
out:
	for (size_t i = 0; i < nps; i++) free(nk[i]);
	free(nk);
}

/* ------------------------------------------------------------ steps */
struct step { const char *name; uint64_t occ, first; size_t nrows; };
struct srow {
	size_t step, proc;     /* index into steps, into ps */
	uint64_t s, e, kernels, coll, wait;
	struct split sp;
};

static struct step *sort_steps;
static int cmp_srow(const void *a, const void *b)
{
	const struct srow *x = a, *y = b;
	const struct step *sx = &sort_steps[x->step], *sy = &sort_steps[y->step];
	if (sx->first != sy->first) return sx->first < sy->first ? -1 : 1;
	int n = strcmp(sx->name, sy->name);
	if (n) return n;
	if (sx->occ != sy->occ) return sx->occ < sy->occ ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

static void fill_steps(struct comm *c, struct report *rep, struct cproc **ps, size_t nps, uint64_t base)
{
	strmap idx;             /* "name\n occurrence" -> step */
	strmap_init(&idx);
	struct step *steps = NULL; size_t nsteps = 0, csteps = 0;
	struct srow *rows = NULL; size_t nrows = 0, crows = 0;
	struct ivset cv = { 0 }, ov = { 0 };
	struct ckern **by_seq = NULL, **sel = NULL; size_t csel = 0;
	/* the kernels of range id r: pairs[first[r] .. first[r + 1]) */
	if (c->npairs) qsort(c->pairs, c->npairs, sizeof(*c->pairs), cmp_pair);
	size_t nranges = attribution_nranges(c->attr);
	size_t *first = xcalloc(nranges + 1, sizeof(*first));
	for (size_t i = 0; i < c->npairs; i++) first[c->pairs[i].range + 1]++;
	for (size_t r = 0; r < nranges; r++) first[r + 1] += first[r];
	for (size_t i = 0; i < nps; i++) {
		struct cproc *p = ps[i];
		if (!p->nr) continue;
		qsort(p->rg, p->nr, sizeof(*p->rg), cmp_range);
		by_seq = xrealloc(by_seq, (p->nk ? p->nk : 1) * sizeof(*by_seq));
		for (size_t j = 0; j < p->nk; j++) by_seq[p->k[j].seq] = &p->k[j];
		strmap seen;    /* name -> occurrences so far on this rank */
		strmap_init(&seen);
		for (size_t j = 0; j < p->nr; j++) {
			const struct crange *rg = &p->rg[j];
			int is_new;
			size_t occ = ++*strmap_get(&seen, rg->name, &is_new);
			char *key = xmalloc(strlen(rg->name) + 24);
			sprintf(key, "%s\n%zu", rg->name, occ);
			size_t *slot = strmap_get(&idx, key, &is_new);
			free(key);
			if (is_new) {
				struct step st = { rg->name, occ, rg->s, 0 };
				*slot = nsteps;
				VEC_PUSH(steps, nsteps, csteps, st);
			}
			struct step *st = &steps[*slot];
			if (rg->s < st->first) st->first = rg->s;
			size_t nsel = 0;
			struct srow row;
			memset(&row, 0, sizeof(row));
			row.step = *slot; row.proc = i; row.s = rg->s; row.e = rg->e;
			/* the kernels attributed to it (all of this process) */
			for (size_t q = first[rg->id]; q < first[rg->id + 1]; q++) {
				struct ckern *k = by_seq[(uint32_t)c->pairs[q].ref];
				VEC_PUSH(sel, nsel, csel, k);
				row.kernels++;
				if (k->nccl) { row.coll++; row.wait += k->wait; }
			}
			row.sp = split_kernels(sel, nsel, &cv, &ov);
			VEC_PUSH(rows, nrows, crows, row);
		}
		strmap_free(&seen);
	}
	sort_steps = steps;
	if (nrows) qsort(rows, nrows, sizeof(*rows), cmp_srow);
	for (size_t i = 0; i < nrows; i++) {
		const struct srow *w = &rows[i];
		const struct cproc *p = ps[w->proc];
		struct cell *cl = report_row(rep);
		if (p->rank >= 0) cell_num(&cl[STEP_RANK], p->rank);
		cell_num(&cl[STEP_PID], p->pid);
		cell_num(&cl[STEP_N], (double)steps[w->step].occ);
		/* signed: in a merged trace a later input's step may start before the
		 * first input's trace did */
		cell_num(&cl[STEP_START], (double)(int64_t)(w->s - base));
		cell_num(&cl[STEP_LEN], (double)(w->e - w->s));
		cell_num(&cl[STEP_KERNELS], (double)w->kernels);
		cell_num(&cl[STEP_COLLECTIVES], (double)w->coll);
		cell_num(&cl[STEP_COMM], (double)w->sp.comm);
		cell_num(&cl[STEP_COMPUTE], (double)w->sp.compute);
		cell_num(&cl[STEP_OVERLAP], (double)w->sp.overlap);
		if (p->matched) cell_num(&cl[STEP_WAIT], (double)w->wait);
		cell_str(&cl[STEP_RANGE], steps[w->step].name);
	}
	free(steps); free(rows); free(cv.v); free(ov.v); free(by_seq); free(sel); free(first);
	strmap_free(&idx);
}

/* ------------------------------------------------------------ fill */
/* Fills the per-rank table and the per-step table (base: the trace start,
 * for the Start column).  Says on stderr, once, why there are no wait
 * figures (collectives that do not match across ranks) or no rows (no
 * kernels).  Titles and notes point into c: print before comm_free. */
static void comm_fill(struct comm *c, const struct stats_ctx *ctx, struct report *ranks, struct report *steps,
		      uint64_t base)
{
	int pk;
	size_t nccl = nccl_count(c, &pk);
	snprintf(c->title, sizeof(c->title), "Communication per Rank (NCCL kernels vs other kernels)");
	snprintf(c->steps_title, sizeof(c->steps_title),
		 "Communication per Step (top-level NVTX push/pop ranges, matched across ranks)");
	report_define(ranks, c->title, comm_cols, COMM_NCOLS);
	report_define(steps, c->steps_title, comm_steps_cols, STEP_NCOLS);
	if (!pk) {
		snprintf(c->title, sizeof(c->title), "Communication per Rank: none, the trace has no kernels");
		snprintf(c->steps_title, sizeof(c->steps_title), "Communication per Step: none, the trace has no kernels");
		tool_warn("comm: the trace has no kernel records: nothing to report");
		return;
	}
	/* the steps: the selected top-level push/pop ranges of each process */
	for (uint32_t id = 0; id < attribution_nranges(c->attr); id++) {
		const struct attr_range *x = attribution_range(c->attr, id);
		if (x->kind != GP_NVTX_PUSHPOP || x->depth != 0 || !stats_selected(ctx, x->s)) continue;
		uint64_t *slot = u64map_get(&c->pid2proc, x->pid, MAP_FIND);
		if (!slot) continue;
		struct cproc *p = &c->p[*slot];
		struct crange rg = { x->s, x->e, attribution_name(c->attr, x->name), id };
		VEC_PUSH(p->rg, p->nr, p->cr, rg);
	}
	/* ranks: processes with kernels */
	for (size_t i = 0; i < c->np; i++) {
		struct cproc *p = &c->p[i];
		uint64_t *r = u64map_get(&c->pid2rank, p->pid, MAP_FIND);
		p->rank = r && *r >= 2 ? (int32_t)(*r - 2) : !r && p->pid == c->hdr_pid ? c->hdr_rank : -1;
	}
	/* sorting moves the processes: pid2proc is not used after this */
	qsort(c->p, c->np, sizeof(*c->p), cmp_proc);
	struct cproc **ps = xmalloc(c->np * sizeof(*ps));
	size_t nps = 0, idle = 0;
	for (size_t i = 0; i < c->np; i++) {
		struct cproc *p = &c->p[i];
		if (p->nk) qsort(p->k, p->nk, sizeof(*p->k), cmp_kern_start);
		for (p->nsel = 0; p->nsel < p->nk && p->k[p->nsel].sel; p->nsel++) ;
		if (p->nsel) ps[nps++] = p;
		else idle++;
	}
	struct ivset cv = { 0 }, ov = { 0 };
	for (size_t i = 0; i < nps; i++) {
		struct cproc *p = ps[i];
		struct ckern **all = xmalloc(p->nsel * sizeof(*all));
		for (size_t j = 0; j < p->nsel; j++) {
			struct ckern *k = &p->k[j];
			p->nnccl += k->nccl;
			all[j] = k;
		}
		struct split s = split_kernels(all, p->nsel, &cv, &ov);
		free(all);
		p->comm = s.comm; p->compute = s.compute; p->overlap = s.overlap;
	}
	free(cv.v); free(ov.v);
	/* Ranks take part in the matching; a process without a rank beside them
	 * (a helper that used CUDA) did not join the collectives. */
	struct cproc **part = xmalloc((nps ? nps : 1) * sizeof(*part));
	size_t npart = 0, unranked = 0;
	for (size_t i = 0; i < nps; i++)
		if (ps[i]->rank >= 0) part[npart++] = ps[i];
	if (!npart) {
		memcpy(part, ps, nps * sizeof(*part));
		npart = nps;
	} else {
		unranked = nps - npart;
	}
	if (nccl) {
		match_collectives(c, part, npart);
		if (unranked && c->wait_known) {
			size_t l = strlen(c->note);
			snprintf(c->note + l, sizeof(c->note) - l,
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
	size_t l = strlen(c->note);
	snprintf(c->note + l, sizeof(c->note) - l,
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
	fill_steps(c, steps, ps, nps, base);
	free(part);
	free(ps);
}

static void *comm_report_new(const struct stats_ctx *ctx)
{
	return comm_new(ctx->r, ctx->attr);
}

static void comm_report_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	comm_add(self, r->rec);
}

static void comm_report_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	comm_op(self, ctx, op);
}

static int comm_report_in_default(void *self, const struct stats_ctx *ctx)
{
	return comm_in_default(self);
}

static void comm_report_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	comm_fill(self, ctx, &tables[0], &tables[1], ctx->out_base);
}

static void comm_report_free(void *self)
{
	comm_free(self);
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
	.new = comm_report_new, .add = comm_report_add, .op = comm_report_op, .in_default = comm_report_in_default,
	.fill = comm_report_fill, .free = comm_report_free,
};
