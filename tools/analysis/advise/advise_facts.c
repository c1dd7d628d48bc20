/* advise_facts.c — see advise_facts.h.
 *
 * Per process: GPU operations are kept from their delivery by the launch
 * join until the sweep passes their start; blocking calls from their record
 * until their window closes.  The sweep walks the operations in GPU start
 * order, keeping `cur`, the end of the GPU busy time so far; an operation
 * starting after `cur` ends an idle gap [cur, start), which is classified
 * and handed out (gap()).  The GPU-side savings of the operations of the
 * current busy stretch wait in `run` until the stretch ends (run_end()). */
#include "analysis/advise/advise_facts.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join/attribution.h"
#include "analysis/gpu/hostlink.h"
#include "analysis/gpu/kernel_names.h"
#include "analysis/gpu/occupancy.h"
#include "common/spill.h"
#include "common/tool.h"
#include "common/util.h"

#define NO_STEP UINT32_MAX
#define NO_GROUP UINT32_MAX
#define NONE_T UINT64_MAX
#define STEPS_MEM (4u << 20)        /* adv_proc.steps in memory: the whole trace's... */
#define STEPS_MEM_SLICE (1u << 17)  /* ...and a slice engine's (past it: the file; beside the
				     * steps' engines, 16 of them at --threads 16) */
#define SWEEP_EVERY_NS 10000000ull  /* sweep at most every 10 ms of trace time... */
#define SWEEP_BATCH 65536           /* ...unless this many operations wait */
#define FLOOR_BIN_NS 100ull         /* launch-latency gaps, histogram of 100 ns bins */
#define FLOOR_BINS 200

/* ------------------------------------------------------------ first pass */
void adv_pre_init(struct adv_pre *pre, gp_reader *r)
{
	memset(pre, 0, sizeof(*pre));
	pre->r = r;
	pre->stk = stacks_new(r);
	u64map_init(&pre->rank);
	pre->mem = mem_view_new(r, pre->stk);
}

void adv_pre_add(struct adv_pre *pre, gp_reader *r, const gp_record *rec)
{
	uint32_t pid = tool_pid(r, rec);
	pre->n++;
	if (rec->type == GP_REC_API || rec->type == GP_REC_MEMORY || rec->type == GP_REC_ALLOC_FAIL ||
	    rec->type == GP_REC_MEM_LIVE)
		mem_view_add(pre->mem, pid, tool_rec_tid(r, rec), rec);
	switch (rec->type) {
	case GP_REC_DEVICE:
		pre->meta = 1;
		devprops_add(&pre->dp, pid, &rec->u.device);
		break;
	case GP_REC_COUNTER: {
		/* only PM sampling's figures are read */
		const char *name = tool_str(r, rec->u.counter.name_id);
		if (starts_with(name, "pm.")) counters_add(&pre->ctr, pid, &rec->u.counter, name);
		break;
	}
	case GP_REC_PROCESS:
		pre->meta = 1;
		*u64map_get(&pre->rank, rec->u.process.pid, MAP_INSERT) = (uint64_t)(int64_t)rec->u.process.rank + 2;
		break;
	case GP_REC_MODULE: case GP_REC_STACK: case GP_REC_THREAD: case GP_REC_SOURCE:
		pre->meta = 1;
		stacks_add(pre->stk, rec);
		break;
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		if (m->bytes < ADV_PINNED_BW_MIN_BYTES || m->end_ns <= m->start_ns) break;
		int d = m->copy_kind == GP_COPY_HTOD && m->src_kind == GP_MEM_PINNED ? 0 :
			m->copy_kind == GP_COPY_DTOH && m->dst_kind == GP_MEM_PINNED ? 1 : -1;
		if (d < 0) break;
		pre->pinned_bytes[d] += m->bytes;
		pre->pinned_ns[d] += m->end_ns - m->start_ns;
		break;
	}
	default:
		break;
	}
}

int adv_pre_merge(struct adv_pre *dst, struct adv_pre *src)
{
	if (!dst->n) { /* the whole trace's, before its first slice */
		struct adv_pre t = *dst;
		*dst = *src;
		*src = t;
		return 0;
	}
	/* the devices, processes, stacks: the first slice's (the metadata) */
	if (src->meta) return -1;
	dst->n += src->n;
	counters_merge(&dst->ctr, &src->ctr);
	for (int d = 0; d < 2; d++) {
		dst->pinned_bytes[d] += src->pinned_bytes[d];
		dst->pinned_ns[d] += src->pinned_ns[d];
	}
	return mem_view_merge(dst->mem, src->mem);
}

void adv_pre_finish(struct adv_pre *pre)
{
	counters_finish(&pre->ctr);
	mem_view_finish(pre->mem, &pre->dp);
}

void adv_pre_free(struct adv_pre *pre)
{
	devprops_free(&pre->dp);
	counters_free(&pre->ctr);
	mem_view_free(pre->mem); /* before the stacks its sites came from */
	stacks_free(pre->stk);
	u64map_free(&pre->rank);
	memset(pre, 0, sizeof(*pre));
}

/* ------------------------------------------------------------ names */
/* Whether a kernel name is FP32 matrix work that does not use tensor cores
 * (docs/ADVISE.md "fp32-matmul"): "sgemm" or xmma's all-FP32 type string,
 * without a tensor-core marker. */
static int fp32_matrix_name(const char *name)
{
	static const char *const tensor[] = { "tf32", "bf16", "f16", "fp16", "half", "tensorop", "s1688", "s16816",
					      "h1688", "h16816", "hmma", "gmma", "e4m3", "e5m2", "i8" };
	if (!has_ci(name, "sgemm") && !has_ci(name, "f32f32_f32f32_f32")) return 0;
	for (size_t i = 0; i < sizeof(tensor) / sizeof(tensor[0]); i++)
		if (has_ci(name, tensor[i])) return 0;
	return 1;
}

/* Assumed speedup of FP32 matrix kernels moved onto tensor cores: half the
 * device's dense TF32-to-FP32 peak ratio (docs/ADVISE.md "fp32-matmul"). */
static double fp32_speedup(const gp_rec_device *d)
{
	if (!d) return 1.5;
	if (d->cc_major == 8 && d->cc_minor == 0) return 4.0;
	if (d->cc_major == 9 || d->cc_major == 10) return 3.7;
	return 1.5;
}

/* API name classes of the calls this pass keeps (from the record; copies
 * and sets are judged from their GPU record, adv_facts_op). */
enum { NC_UNSEEN = 0, NC_OTHER, NC_SYNC, NC_ALLOC, NC_FREE };

static int name_class(const char *name)
{
	if (strstr(name, "Synchronize")) return NC_SYNC;
	if (strstr(name, "Async")) return NC_OTHER; /* stream-ordered allocation: cheap by design */
	if (strstr(name, "Free") || strstr(name, "cuMemRelease")) return NC_FREE;
	if (step_api_is_alloc(name)) return NC_ALLOC;
	return NC_OTHER;
}

/* ------------------------------------------------------------ state */
/* Fields of the GPU record the join does not carry. */
struct adet {
	uint64_t s, corr, bytes, blocks;
	uint32_t pid, threads, regs, smem;
	uint8_t kind, copy_kind, src_kind, dst_kind, mem_kind, async, used;
};

struct aop {
	uint64_t s, e, call_s, call_e;
	uint64_t dfp, dup;            /* GPU-side savings: FP32 on tensor cores, spread over all SMs */
	uint32_t tid, step, gfp, gup, stack_id, phase, call_name_id;
	uint8_t has_call;
};

struct acall {
	uint64_t s, e;
	uint64_t budget, claimed, dgpu;
	uint64_t corr;
	/* lead windows (allocation calls, lead_window()): the launch call start
	 * of the first work issued after the call returned (0: not yet), the
	 * start of the next call that waits for the GPU after that (NONE_T: not
	 * seen yet), and the end of the step after the call's */
	uint64_t reissued, until, cap;
	uint32_t tid, step, group;
	uint8_t cause, waits_gpu, closed, lead;
};

struct runent { uint64_t key, d; };

/* With the steps beside (adv_facts_opts.beside), what a step of the first
 * ADV_TENT_STEPS gave by being counted, to take back where it turns out
 * warm-up (adv_facts_settle): the tallies' (in: all, out: those a step
 * not counted gives elsewhere; the idle causes, distribute's, none), and
 * the counted launches' figures; per group and step, struct tentg. */
#define ADV_TENT_STEPS 64
/* the counts of struct adv_proc a counted step adds to, as their names there */
#define TENT_SUMS(X) X(launches) X(launched_ns) X(kernels) X(kernels_called) X(short_kernels) X(short_hta) \
	X(gpu_side_discarded_ns) X(unexplained_idle_ns)
struct tent {
	struct adv_tally in[AC_COUNT];
	struct adv_out out[AC_COUNT];
#define TENT_FIELD(x) uint64_t x;
	TENT_SUMS(TENT_FIELD)
#undef TENT_FIELD
};
/* A use of a group (group_of): its order among the process's uses and
 * what makes the group's example (group_view) */
struct guse { uint64_t seq; uint32_t stack, after, tid; };
struct tentg {
	uint64_t key;                 /* group << 32 | step */
	struct adv_tally in;
	uint64_t out_count, bytes;
	struct guse use;              /* the first use in the step (the idle causes': distribute's) */
};

struct aproc {
	struct adv_proc out;
	uint32_t step_tid, step_depth;
	int nvtx;
	/* phase_of's last phase found: its range [ph_s, ph_e) on thread ph_tid */
	uint64_t ph_s, ph_e;
	uint32_t ph_tid, ph;
	/* out.steps: per row from row0 (the whole trace's; a slice's engine:
	 * from its lead-in's, grown as it goes, row_at), nrow of them */
	size_t row0, nrow;
	int lost;                     /* a figure of a row before row0 was asked for after the mark */
	/* a slice's (part): its own reader of the whole trace's rows, sealed
	 * (read on the slice's thread); NULL: the rows through step_row */
	struct spill_reader *rd;
	/* the steps run beside (adv_facts_opts.beside): a row's place is the
	 * plan's, its flags not set yet; these windows tell unrecorded */
	const struct winset *beside;
	/* beside, the trace method's steps: the rows they will have (through
	 * rd), until settle (adv_facts_opts.expect) */
	const struct adv_rows *expect;
	struct tent *tent;            /* ADV_TENT_STEPS of them (NULL: none yet) */
	struct tentg *tg; size_t ntg, ctg;
	u64map tg_idx;
	/* per group its first use not from a step that may be taken back (seq
	 * UINT64_MAX: none), of the useq uses since the mark: the one whose
	 * example the group has, in their order, where a taken-back use made it */
	struct guse *guse; size_t cguse;
	uint64_t useq;
	size_t hint;                  /* step_of's last row found */
	struct aop *ops; size_t nops, cops;
	size_t nsorted;               /* ops[0 .. nsorted) are in cmp_aop order (left by the last sweep) */
	struct aop *tmp; size_t ctmp;
	struct acall *calls; size_t ncalls, ccalls;
	size_t c0;                    /* calls[0 .. c0) are closed (during a sweep: calls sorted by start) */
	uint64_t cur, swept_to, last_sweep;
	uint64_t max_dur;
	struct runent *run; size_t nrun, crun;
	u64map run_idx;
	uint64_t floor_hist[FLOOR_BINS + 1];
	u64map tid_corr;              /* tid -> correlation id of its last kept call (runtime + driver: one) */
	u64map tid_corr_e;            /* tid -> that call's end (a slice's state: adv_facts_state) */
	u64map last_stack;            /* tid -> stack id of its last call with one */
	strmap group_idx;
	u64map group_fast;            /* (cause, name, stack, phase, ...) -> group + 1 */
	size_t cgroups;
	/* per group: its key in group_idx, and (after adv_facts_mark) the
	 * order of its first use since the mark (0: none) */
	const char **gkey; uint32_t *gseq; size_t cgkey, cgseq;
	uint32_t nseq;
	u64map ckey;                  /* (name id, stack, phase) of group_fast's keys, to verify */
};

struct kinfo {
	const char *name;             /* its display name (owned in strs) */
	int fp32;                     /* fp32_matrix_name */
};

struct adv_facts {
	gp_reader *r;
	struct steps *st;
	struct adv_pre *pre;
	const struct attribution *a;
	uint64_t kernel_wait;
	struct aproc *p; size_t np;
	u64map pid2p;
	u64map name_cls;
	struct kernel_names kn;
	/* GPU record fields, waiting for the join to deliver the operation */
	struct adet *det; size_t ndet, cdet;
	size_t *det_free; size_t nfree, cfree;
	u64map det_idx;
	u64map kidx;                  /* kernel name id -> its kinfo + 1 */
	struct kinfo *kinfo; size_t nkinfo, ckinfo;
	uint32_t *idbuf; size_t cidbuf;
	uint64_t now, max_call_dur;
	char **strs; size_t nstrs, cstrs; /* owned labels */
	int marked;                   /* a slice's engine past its mark (adv_facts_mark) */
};

/* The call stacks' views are made on first use; the slices' engines
 * share the stacks (advise_slice.h). */
static pthread_mutex_t stacks_lock = PTHREAD_MUTEX_INITIALIZER;

static struct aproc *proc_find(struct adv_facts *f, uint32_t pid)
{
	uint64_t *s = u64map_get(&f->pid2p, pid, MAP_FIND);
	return s ? &f->p[*s] : NULL;
}

static const char *own(struct adv_facts *f, const char *s)
{
	char *c = xstrdup(s);
	VEC_PUSH(f->strs, f->nstrs, f->cstrs, c);
	return c;
}

#define KNAME_MAX 64

/* What a kernel's name tells, worked out once per name: a trace launches
 * the same few hundred names millions of times, and the FP32 test's
 * case-blind substring scans were a fifth of advise's time. */
static const struct kinfo *kernel_info(struct adv_facts *f, uint32_t name_id)
{
	uint64_t *slot = u64map_get(&f->kidx, name_id, MAP_INSERT);
	if (*slot) return &f->kinfo[*slot - 1];
	struct kinfo k;
	const char *full = kernel_name(&f->kn, name_id);
	k.fp32 = fp32_matrix_name(full);
	/* nsys's short form of the demangled name (no return type, scope,
	 * template arguments or parameters), at most KNAME_MAX characters */
	char *s = short_name(full);
	if (strlen(s) > KNAME_MAX) strcpy(s + KNAME_MAX - 3, "...");
	k.name = own(f, *s ? s : "(unnamed kernel)");
	free(s);
	VEC_PUSH(f->kinfo, f->nkinfo, f->ckinfo, k);
	*slot = f->nkinfo;
	return &f->kinfo[f->nkinfo - 1];
}

/* ------------------------------------------------------------ new/free */
/* What the facts read of row k of the steps (steps.h): its place and
 * whether it is counted (the flags step_summarize set, for the whole
 * trace's facts, before any slice's; with the steps beside, what they will
 * be unless a step is warm-up or partial: adv_facts_settle checks) */
struct arow { uint64_t s, e; int counted; };

static struct arow arow(const struct aproc *p, size_t k)
{
	const struct step_row *w = p->rd ? spill_reader_at(p->rd, k) : step_row(p->out.sp, k);
	int c = p->beside ? !steps_unrecorded(p->beside, w->pid, w->s, w->e) && !w->partial : step_counted(w, 0);
	return (struct arow){ w->s, w->e, c };
}

/* How many rows arow reads */
static size_t nrows(const struct aproc *p) { return p->expect ? p->expect->n : p->out.sp->nrows; }

/* Whether row k (NO_STEP: none) is counted */
static int counted(const struct aproc *p, uint32_t k)
{
	return k != NO_STEP && arow(p, k).counted;
}

static void tally_add(struct adv_tally *d, const struct adv_tally *s)
{
	d->count += s->count;
	d->cost_ns += s->cost_ns;
	d->saving_ns += s->saving_ns;
}

static void tally_sub(struct adv_tally *d, const struct adv_tally *s)
{
	d->count -= s->count;
	d->cost_ns -= s->cost_ns;
	d->saving_ns -= s->saving_ns;
}

/* A use of a cause of p elsewhere at t: x into o. */
static void out_note(const struct aproc *p, struct adv_out *o, const struct adv_tally *x, uint64_t t)
{
	tally_add(&o->t, x);
	if (!x->count) return;
	if (!o->first || t < o->first) o->first = t;
	if (t > o->last) o->last = t;
	if (nrows(p) && t < arow(p, 0).s) o->before += x->count;
}

static void out_add(struct adv_out *d, const struct adv_out *s)
{
	tally_add(&d->t, &s->t);
	if (s->first && (!d->first || s->first < d->first)) d->first = s->first;
	if (s->last > d->last) d->last = s->last;
	d->before += s->before;
}

/* What counted step k gave, to take back (NULL: the steps finished, or a
 * later step) */
static struct tent *tent_at(struct aproc *p, uint32_t k)
{
	if (!p->beside || k >= ADV_TENT_STEPS) return NULL;
	if (!p->tent) p->tent = xcalloc(ADV_TENT_STEPS, sizeof(*p->tent));
	return &p->tent[k];
}

static struct tentg *tent_group(struct aproc *p, uint32_t group, uint32_t k)
{
	struct tentg e = { (uint64_t)group << 32 | k, { 0, 0, 0 }, 0, 0, { UINT64_MAX, 0, 0, 0 } };
	return VEC_KEYED(&p->tg_idx, e.key, p->tg, p->ntg, p->ctg, &e);
}

/* out.steps holds n rows from row0 (more than before: new rows empty). */
static void rows_grow(struct aproc *p, size_t n)
{
	for (; p->nrow < n; p->nrow++) ((struct adv_step *)spill_push(p->out.steps))->first_launch = NONE_T;
}

/* The figures of row row0 + i (i < nrow); the pointer lasts a few calls (spill.h). */
static struct adv_step *fig(const struct aproc *p, size_t i) { return spill_at(p->out.steps, i); }

/* Row k's place in out.steps, grown to hold it; -1 when it lies
 * before them (a slice's engine: only its lead-in's first gap reaches
 * there; after its mark the figures would be lost, and it says so) */
static ptrdiff_t row_at(struct adv_facts *f, struct aproc *p, uint32_t k)
{
	if (k < p->row0) {
		p->lost |= f->marked;
		return -1;
	}
	size_t i = k - p->row0;
	if (i >= p->nrow) rows_grow(p, i + 1);
	return (ptrdiff_t)i;
}

/* The counted steps' number, time and busy time (after step_summarize). */
static void counted_sums(struct aproc *p)
{
	const struct steps_proc *sp = p->out.sp;
	for (size_t k = 0; k < sp->nrows; k++) {
		const struct step_row *w = step_row(sp, k);
		if (!step_counted(w, 0)) continue;
		p->out.ncounted++;
		p->out.wall += w->e - w->s;
		p->out.busy += w->bucket[SB_COMPUTE] + w->bucket[SB_COMM] + w->bucket[SB_MEMORY];
	}
}

struct adv_facts *adv_facts_new(gp_reader *r, struct steps *st, struct adv_pre *pre,
				const struct adv_facts_opts *opts)
{
	struct adv_facts *f = xcalloc(1, sizeof(*f));
	f->r = r;
	f->st = st;
	f->pre = pre;
	f->a = opts && opts->a ? opts->a : steps_attribution(st);
	f->kernel_wait = opts && opts->kernel_wait_ns ? opts->kernel_wait_ns : STEP_KERNEL_WAIT_NS;
	int part = opts && opts->part;
	f->kn.r = r;
	u64map_init(&f->kn.id2name);
	u64map_init(&f->pid2p);
	u64map_init(&f->name_cls);
	u64map_init(&f->det_idx);
	u64map_init(&f->kidx);
	f->np = steps_nprocs(st);
	f->p = xcalloc(f->np ? f->np : 1, sizeof(*f->p));
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		struct steps_proc *sp = steps_proc(st, i);
		p->out.pid = sp->pid;
		p->out.sp = sp;
		uint64_t *rk = u64map_get(&pre->rank, sp->pid, MAP_FIND);
		p->out.rank = rk ? (int32_t)((int64_t)*rk - 2) : -1;
		*u64map_get(&f->pid2p, sp->pid, MAP_INSERT) = i;
		p->beside = opts ? opts->beside : NULL;
		p->expect = p->beside && opts->expect && opts->expect[i].rows ? &opts->expect[i] : NULL;
		if (p->expect) {
			/* the steps' rows are still being made: theirs are read */
			p->rd = spill_reader_new(p->expect->rows);
		} else if (!part) {
			if (!p->beside) step_summarize(sp, 0, &p->out.sum);
			spill_seal(sp->rows); /* for the slices' readers, made after this */
		} else if (!opts->direct) {
			p->rd = spill_reader_new(sp->rows);
		}
		size_t n = nrows(p);
		if (part && opts->lead) { /* the rows that end after the lead-in's start */
			p->row0 = FIRST_WHERE(k, n, arow(p, k).e > opts->lead);
			p->cur = opts->lead; /* no gap before it */
		}
		p->out.steps = spill_new(sizeof(struct adv_step), part ? STEPS_MEM_SLICE : STEPS_MEM);
		rows_grow(p, part || p->beside ? 0 : n); /* beside: grown by the takes, after the pass */
		if (!part && !p->beside) counted_sums(p);
		p->nvtx = sp->plan->method == STEP_NVTX && sp->plan->nsteps;
		if (p->nvtx) {
			const struct attr_range x = attribution_range(f->a, sp->plan->range_ids[0]);
			p->step_tid = x.tid;
			p->step_depth = x.depth;
		}
		u64map_init(&p->run_idx);
		u64map_init(&p->tg_idx);
		u64map_init(&p->tid_corr);
		u64map_init(&p->tid_corr_e);
		u64map_init(&p->last_stack);
		u64map_init(&p->group_fast);
		u64map_init(&p->ckey);
		strmap_init(&p->group_idx);
		/* the first kernel device record of the process: its SM count and cc */
		for (uint32_t d = 0; d < 64 && !p->out.dev; d++) p->out.dev = devprops_get(&pre->dp, sp->pid, d);
		p->out.fp32_speedup = fp32_speedup(p->out.dev);
		/* the pinned bandwidth a pageable copy would reach once pinned: the
		 * trace's own pinned copies, else what the device's host link gives
		 * (a trace of a job that pins nothing has no pinned copy) */
		p->out.device_name = p->out.dev ? tool_str(r, p->out.dev->name_id) : "";
		const struct hostlink hl = hostlink_of(p->out.device_name);
		p->out.link = hl.link;
		for (int d = 0; d < 2; d++) {
			if (pre->pinned_ns[d]) {
				p->out.pinned_gbps[d] = (double)pre->pinned_bytes[d] / (double)pre->pinned_ns[d];
			} else if (hl.gbps > 0) {
				p->out.pinned_gbps[d] = hl.gbps;
				p->out.pinned_from_link[d] = 1;
			}
		}
	}
	return f;
}

void adv_facts_free(struct adv_facts *f)
{
	if (!f) return;
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		step_summary_free(&p->out.sum, p->nrow); /* the steps may be gone (a pass read again) */
		spill_reader_free(p->rd);
		spill_free(p->out.steps);
		free(p->out.groups);
		free(p->gkey); free(p->gseq);
		free(p->ops); free(p->tmp); free(p->calls); free(p->run);
		u64map_free(&p->run_idx); u64map_free(&p->tid_corr); u64map_free(&p->tid_corr_e);
		free(p->tent); free(p->tg); u64map_free(&p->tg_idx); free(p->guse);
		u64map_free(&p->last_stack);
		u64map_free(&p->group_fast); u64map_free(&p->ckey);
		strmap_free(&p->group_idx);
	}
	free(f->p);
	for (size_t i = 0; i < f->nstrs; i++) free(f->strs[i]);
	free(f->strs);
	free(f->det); free(f->det_free); free(f->idbuf);
	u64map_free(&f->pid2p); u64map_free(&f->name_cls); u64map_free(&f->det_idx);
	u64map_free(&f->kidx);
	free(f->kinfo);
	kernel_names_free(&f->kn);
	free(f);
}

size_t adv_facts_nprocs(const struct adv_facts *f) { return f->np; }
const struct adv_proc *adv_facts_proc(const struct adv_facts *f, size_t i) { return &f->p[i].out; }
struct stacks *adv_facts_stacks(const struct adv_facts *f) { return f->pre->stk; }
const struct mem_view *adv_facts_mem(const struct adv_facts *f) { return f->pre->mem; }
const struct attribution *adv_facts_attribution(const struct adv_facts *f) { return f->a; }
uint64_t adv_facts_kernel_wait(const struct adv_facts *f) { return f->kernel_wait; }

/* ------------------------------------------------------------ steps, phases, groups */
/* The row whose [s, e) holds t, or NO_STEP.  The search starts from the
 * last row found (the times come nearly in order; rows past the memory
 * cap are read back a block at a time). */
static uint32_t step_of(struct aproc *p, uint64_t t)
{
	size_t lo = 0, hi = nrows(p), h = p->hint;
	if (h < hi && arow(p, h).s > t) {
		hi = h;
		if (h && arow(p, h - 1).s <= t) lo = h;
	} else if (h < hi) {
		lo = h + 1;
		if (lo < hi && arow(p, lo).s > t) hi = lo;
	}
	while (lo < hi) { /* first row starting after t */
		size_t mid = lo + (hi - lo) / 2;
		if (arow(p, mid).s <= t) lo = mid + 1;
		else hi = mid;
	}
	if (!lo) return NO_STEP;
	p->hint = lo - 1;
	return t < arow(p, lo - 1).e ? (uint32_t)(lo - 1) : NO_STEP;
}

/* The step phase (a push/pop range directly inside the step range, on its
 * thread: steps.h) open when a call started at t on tid: name id + 1, 0 none. */
static uint32_t phase_of(struct adv_facts *f, struct aproc *p, uint32_t tid, uint64_t t)
{
	if (!p->nvtx) return 0;
	/* a thread's push/pop ranges of one depth do not overlap: while t is
	 * in the last phase's range, that is the phase (a step's launches
	 * fall in a few phases: the index is asked once per phase, not once
	 * per launch) */
	if (p->ph && tid == p->ph_tid && p->ph_s <= t && t < p->ph_e) return p->ph;
	size_t n = attribution_at(f->a, p->out.pid, tid, t, f->idbuf, f->cidbuf);
	if (n > f->cidbuf) {
		vec_reserve((void **)&f->idbuf, &f->cidbuf, n, sizeof(*f->idbuf));
		n = attribution_at(f->a, p->out.pid, tid, t, f->idbuf, f->cidbuf);
	}
	for (size_t i = 0; i < n; i++) {
		const struct attr_range x = attribution_range(f->a, f->idbuf[i]);
		if (x.kind == GP_NVTX_PUSHPOP && x.tid == p->step_tid && x.depth == p->step_depth + 1) {
			p->ph_s = x.s, p->ph_e = x.e, p->ph_tid = tid, p->ph = x.name + 1;
			return p->ph;
		}
	}
	return 0;
}

static int view_has_dataloader(const struct stack_view *v)
{
	for (uint32_t i = 0; v && i < v->nframes; i++)
		if (strstr(v->frames[i], "utils/data/")) return 1;
	return 0;
}

/* The site a use names: `stack` (0: none) resolved on pid/tid, else that
 * of `after` (the thread's last stacked call; *after_site), NULL none. */
static const struct stack_view *group_view(struct adv_facts *f, struct aproc *p, uint32_t stack, uint32_t after,
					   uint32_t tid, int *after_site)
{
	const struct stack_view *v = NULL;
	*after_site = 0;
	pthread_mutex_lock(&stacks_lock);
	if (stack) v = stacks_view(f->pre->stk, stack, p->out.pid, tid);
	if (!v && after) { v = stacks_view(f->pre->stk, after, p->out.pid, tid); *after_site = v != NULL; }
	pthread_mutex_unlock(&stacks_lock);
	return v;
}

/* A group's example, from the use that makes it: its label (the site, else
 * name), stack and thread. */
static void group_example(struct adv_facts *f, struct adv_group *g, const struct stack_view *v, const char *name,
			  const struct guse *u, int after_site)
{
	g->label = own(f, v ? v->site : name);
	g->has_site = v != NULL;
	g->stack_id = v ? (after_site ? u->after : u->stack) : 0;
	g->tid = u->tid;
}

/* A new group gr of key (its uses none yet): its index. */
static size_t group_push(struct adv_facts *f, struct aproc *p, const struct adv_group *gr, const char *key)
{
	size_t g = p->out.ngroups;
	VEC_PUSH(p->out.groups, p->out.ngroups, p->cgroups, *gr);
	vec_reserve((void **)&p->gkey, &p->cgkey, p->out.ngroups, sizeof(*p->gkey));
	vec_reserve((void **)&p->gseq, &p->cgseq, p->out.ngroups, sizeof(*p->gseq));
	vec_reserve((void **)&p->guse, &p->cguse, p->out.ngroups, sizeof(*p->guse));
	p->gkey[g] = own(f, key);
	p->gseq[g] = 0;
	p->guse[g].seq = UINT64_MAX;
	return g;
}

/* A group's figures as before its first use. */
static void group_zero(struct adv_group *g)
{
	memset(&g->in, 0, sizeof(g->in));
	g->out_count = g->bytes = g->blocks_max = 0;
	g->blocks_min = UINT64_MAX;
	g->threads = 0;
	g->occ = -1;
	g->pm_ns = g->pm_w = 0;
}

/* The group of (cause, where): `stack` (0: none) resolved on pid/tid gives
 * the site; without one the label is `name`, or the site of `after` (the
 * thread's last stacked call) when given. */
static uint32_t group_make(struct adv_facts *f, struct aproc *p, enum adv_cause cause, uint32_t name_id,
			   const char *name, uint32_t stack, uint32_t after, uint32_t tid, uint32_t phase)
{
	uint64_t fk = mix64(((uint64_t)cause << 56) ^ ((uint64_t)name_id << 24) ^ mix64(((uint64_t)stack << 32) | after) ^
			  ((uint64_t)phase << 4));
	uint64_t ck = mix64((uint64_t)name_id << 32 | stack) ^ mix64(((uint64_t)after << 32) | phase) ^ cause;
	uint64_t *g = u64map_get(&p->group_fast, fk, MAP_FIND);
	if (g) {
		uint64_t *c = u64map_get(&p->ckey, fk, MAP_FIND);
		/* a group's first use since a mark makes it again (below) */
		if (c && *c == ck && (!f->marked || p->gseq[*g - 1])) return (uint32_t)(*g - 1);
	}
	int after_site;
	const struct stack_view *v = group_view(f, p, stack, after, tid, &after_site);
	const char *skey = v ? v->site_key : name;
	const char *ph = phase ? attribution_name(f->a, phase - 1) : "";
	int dl = cause == AC_INPUT && view_has_dataloader(v);
	size_t n = strlen(skey) + strlen(name) + strlen(ph) + 32;
	char *key = xmalloc(n);
	snprintf(key, n, "%d\x01%s\x01%s\x01%s\x01%d%d", (int)cause, skey, name, ph, after_site, dl);
	int is_new;
	size_t *slot = strmap_get(&p->group_idx, key, &is_new);
	/* a slice's engine: a group first used since its mark is made as one
	 * pass makes it at its first use (its figures were zeroed at the mark) */
	int again = !is_new && f->marked && !p->gseq[*slot];
	if (is_new || again) {
		struct adv_group gr;
		memset(&gr, 0, sizeof(gr));
		gr.cause = cause;
		const struct guse u = { 0, stack, after, tid };
		group_example(f, &gr, v, name, &u, after_site);
		gr.name = own(f, name);
		gr.after_site = after_site;
		gr.phase = phase;
		gr.pid = p->out.pid;
		group_zero(&gr);
		gr.dataloader = dl;
		if (again) p->out.groups[*slot] = gr;
		else *slot = group_push(f, p, &gr, key);
	}
	free(key);
	if (f->marked && !p->gseq[*slot]) p->gseq[*slot] = ++p->nseq;
	*u64map_get(&p->group_fast, fk, MAP_INSERT) = *slot + 1;
	*u64map_get(&p->ckey, fk, MAP_INSERT) = ck;
	return (uint32_t)*slot;
}

/* group_make, the use noted: tent, the step whose being counted made the
 * use (distribute's, tent_at), else NO_STEP. */
static uint32_t group_of(struct adv_facts *f, struct aproc *p, enum adv_cause cause, uint32_t name_id,
			 const char *name, uint32_t stack, uint32_t after, uint32_t tid, uint32_t phase, uint32_t tent)
{
	uint32_t g = group_make(f, p, cause, name_id, name, stack, after, tid, phase);
	const struct guse u = { ++p->useq, stack, after, tid };
	struct guse *first = tent == NO_STEP ? &p->guse[g] : &tent_group(p, g, tent)->use;
	if (u.seq < first->seq) *first = u;
	return g;
}

/* Adds to the tallies of the step (counted) or to those of elsewhere. */
static void tally(struct adv_facts *f, struct aproc *p, enum adv_cause c, uint32_t step, uint32_t group, uint64_t t,
		  uint64_t count, uint64_t cost, uint64_t saving)
{
	struct adv_group *g = group != NO_GROUP ? &p->out.groups[group] : NULL;
	const struct adv_tally x = { count, cost, saving };
	if (counted(p, step)) {
		tally_add(&p->out.in[c], &x);
		ptrdiff_t i = row_at(f, p, step);
		if (i >= 0) fig(p, (size_t)i)->cost[c] += cost;
		if (g) tally_add(&g->in, &x);
		struct tent *w = tent_at(p, step);
		if (!w) return;
		/* a step not counted has no idle (distribute), the rest elsewhere */
		tally_add(&w->in[c], &x);
		if (g) tally_add(&tent_group(p, group, step)->in, &x);
		if (c == AC_INPUT || c == AC_HOST_IDLE) return;
		out_note(p, &w->out[c], &x, t);
		if (g) tent_group(p, group, step)->out_count += count;
		return;
	}
	out_note(p, &p->out.out[c], &x, t);
	if (g) g->out_count += count;
}

/* ------------------------------------------------------------ consume */
static uint64_t det_key(uint32_t pid, uint64_t corr, uint64_t s, uint8_t kind)
{
	return mix64(((uint64_t)pid << 40) ^ corr) ^ mix64(s ^ ((uint64_t)kind << 62));
}

void adv_facts_gpu(struct adv_facts *f, uint32_t pid, const gp_record *rec)
{
	if (rec->type != GP_REC_KERNEL && rec->type != GP_REC_MEMCPY && rec->type != GP_REC_MEMSET) return;
	if (!proc_find(f, pid)) return;
	struct adet d;
	memset(&d, 0, sizeof(d));
	d.pid = pid;
	d.used = 1;
	switch (rec->type) {
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		d.kind = OP_KERNEL; d.s = k->start_ns; d.corr = k->correlation_id;
		d.blocks = (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
		d.threads = k->block[0] * k->block[1] * k->block[2];
		d.regs = k->registers;
		d.smem = k->static_smem + k->dynamic_smem;
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		d.kind = OP_MEMCPY; d.s = m->start_ns; d.corr = m->correlation_id; d.bytes = m->bytes;
		d.copy_kind = (uint8_t)m->copy_kind; d.src_kind = (uint8_t)m->src_kind; d.dst_kind = (uint8_t)m->dst_kind;
		d.async = m->flags & 1;
		break;
	}
	default: {
		const gp_rec_memset *m = &rec->u.memset;
		d.kind = OP_MEMSET; d.s = m->start_ns; d.corr = m->correlation_id; d.bytes = m->bytes;
		d.mem_kind = (uint8_t)m->mem_kind; d.async = m->flags & 1;
		break;
	}
	}
	size_t at;
	if (f->nfree) at = f->det_free[--f->nfree];
	else { at = f->ndet; VEC_PUSH(f->det, f->ndet, f->cdet, d); }
	f->det[at] = d;
	/* a second record with the same key (it should not happen) keeps the first's slot */
	uint64_t *slot = u64map_get(&f->det_idx, det_key(pid, d.corr, d.s, d.kind), MAP_INSERT);
	if (!*slot) *slot = at + 1;
	else { f->det[at].used = 0; VEC_PUSH(f->det_free, f->nfree, f->cfree, at); }
}

/* The record fields of op, removed from the waiting set; 0 if none. */
static int det_take(struct adv_facts *f, const struct gpu_op *op, struct adet *out)
{
	uint64_t key = det_key(op->pid, op->corr, op->s, op->kind);
	uint64_t *slot = u64map_get(&f->det_idx, key, MAP_FIND);
	if (!slot) return 0;
	size_t at = *slot - 1;
	struct adet *d = &f->det[at];
	int ok = d->used && d->pid == op->pid && d->corr == op->corr && d->s == op->s && d->kind == op->kind;
	if (ok) *out = *d;
	d->used = 0;
	u64map_del(&f->det_idx, key);
	VEC_PUSH(f->det_free, f->nfree, f->cfree, at);
	return ok;
}

static void note_held(struct aproc *p)
{
	uint64_t n = p->nops + p->ncalls + p->nrun;
	if (n > p->out.held_max) p->out.held_max = n;
}

static void add_call(struct aproc *p, const struct acall *c)
{
	VEC_PUSH(p->calls, p->ncalls, p->ccalls, *c);
	note_held(p);
}

/* An allocation call's lead window (docs/ADVISE.md "alloc-churn"): until
 * the host next waits for the GPU after issuing work again, at the latest
 * the end of the step after the call's (which bounds what is held). */
static void lead_window(const struct aproc *p, struct acall *c)
{
	c->until = NONE_T;
	if (c->cause != AC_ALLOC || c->step == NO_STEP) return;
	c->lead = 1;
	c->cap = arow(p, c->step + 1 < nrows(p) ? c->step + 1 : c->step).e;
}

void adv_facts_api(struct adv_facts *f, uint32_t pid, uint32_t tid, const gp_rec_api *a)
{
	struct aproc *p = proc_find(f, pid);
	if (!p) return;
	uint64_t e = a->end_ns > a->start_ns ? a->end_ns : a->start_ns;
	if (e - a->start_ns > f->max_call_dur) f->max_call_dur = e - a->start_ns;
	if (a->stack_id) *u64map_get(&p->last_stack, tid, MAP_INSERT) = a->stack_id;
	uint64_t *cls = u64map_get(&f->name_cls, a->name_id, MAP_INSERT);
	if (*cls == NC_UNSEEN) *cls = (uint64_t)name_class(tool_str(f->r, a->name_id));
	if (*cls == NC_OTHER) return;
	/* the runtime call and the driver call inside it share the id: one call */
	uint64_t *last = u64map_get(&p->tid_corr, tid, MAP_INSERT);
	if (a->correlation_id && *last == a->correlation_id) {
		for (size_t i = p->ncalls; i-- > 0;) {
			struct acall *c = &p->calls[i];
			if (c->tid != tid || c->corr != a->correlation_id) continue;
			if (a->start_ns < c->s) c->s = a->start_ns;
			if (e > c->e) c->e = e;
			c->budget = c->e - c->s;
			uint64_t *le = u64map_get(&p->tid_corr_e, tid, MAP_INSERT);
			if (e > *le) *le = e;
			return;
		}
	}
	*last = a->correlation_id;
	*u64map_get(&p->tid_corr_e, tid, MAP_INSERT) = e;
	/* waits_gpu: a free too (cudaFree synchronises the device) */
	struct acall c = { .s = a->start_ns, .e = e, .budget = e - a->start_ns, .corr = a->correlation_id, .tid = tid,
			   .step = step_of(p, a->start_ns), .cause = *cls == NC_SYNC ? AC_SYNC : AC_ALLOC,
			   .waits_gpu = *cls == NC_SYNC || *cls == NC_FREE };
	lead_window(p, &c);
	uint64_t *after = u64map_get(&p->last_stack, tid, MAP_FIND);
	const char *name = tool_str(f->r, a->name_id);
	c.group = group_of(f, p, (enum adv_cause)c.cause, a->name_id, *name ? name : "(unnamed call)", a->stack_id,
			   after ? (uint32_t)*after : 0, tid, c.step != NO_STEP ? phase_of(f, p, tid, c.s) : 0, NO_STEP);
	tally(f, p, (enum adv_cause)c.cause, c.step, c.group, c.s, 1, c.budget, 0);
	add_call(p, &c);
}

/* Which blocking-call cause a copy or set is (docs/ADVISE.md), -1 none. */
static int copy_cause(const struct adet *d, uint64_t *bytes_small)
{
	if (d->kind == OP_MEMSET) /* nsys cuda_memset_sync: synchronous memset on pinned or managed memory */
		return !d->async && (d->mem_kind == GP_MEM_PINNED || d->mem_kind == GP_MEM_MANAGED) ? AC_SYNC_COPY : -1;
	int d2h = d->copy_kind == GP_COPY_DTOH || d->copy_kind == GP_COPY_ATOH;
	int pageable = d->src_kind == GP_MEM_PAGEABLE || d->dst_kind == GP_MEM_PAGEABLE;
	if (d2h && (!d->async || d->dst_kind == GP_MEM_PAGEABLE)) return AC_SYNC; /* .item(), .cpu() */
	if (d->async && pageable) return AC_PAGEABLE;
	if (!d->async) {
		/* nsys cuda_memcpy_sync leaves out HtoD copies up to 64 KB */
		if (d->copy_kind == GP_COPY_HTOD && d->bytes <= ADV_SMALL_HTOD_BYTES) { *bytes_small = 1; return -1; }
		return AC_SYNC_COPY;
	}
	return -1;
}

static void kernel_facts(struct adv_facts *f, struct aproc *p, const struct gpu_op *op, const struct adet *d,
			 int have_d, struct aop *o)
{
	uint64_t dur = op->e - op->s;
	const struct kinfo ki = *kernel_info(f, op->name_id);
	const char *name = ki.name;
	uint32_t stack = o->stack_id;
	if (op->has_call && dur < op->call_e - op->call_s) {
		uint32_t g = group_of(f, p, AC_SHORT, op->name_id, name, stack, 0, o->tid, o->phase, NO_STEP);
		tally(f, p, AC_SHORT, o->step, g, op->s, 1, op->call_e - op->call_s, 0);
	}
	if (ki.fp32) {
		o->gfp = group_of(f, p, AC_FP32, op->name_id, name, stack, 0, o->tid, o->phase, NO_STEP);
		o->dfp = (uint64_t)((double)dur * (1.0 - 1.0 / p->out.fp32_speedup));
		tally(f, p, AC_FP32, o->step, o->gfp, op->s, 1, dur, 0);
		struct adv_group *g = &p->out.groups[o->gfp];
		double pm = counters_mean(&f->pre->ctr, "pm.tensor_active_pct", p->out.pid, op->device, op->s, op->e);
		if (pm >= 0 && counted(p, o->step)) { g->pm_ns += (double)dur; g->pm_w += (double)dur * pm / 100; }
	}
	const gp_rec_device *dev = devprops_get(&f->pre->dp, p->out.pid, op->device);
	if (!have_d || !dev || !dev->sm_count || !d->blocks) return;
	uint32_t cause = d->blocks < dev->sm_count ? AC_UNDERPAR : AC_COUNT;
	struct occ oc = occ_compute(dev, d->threads, d->regs, d->smem);
	if (cause == AC_COUNT && oc.known && oc.theoretical < ADV_LOWOCC_MAX) cause = AC_LOWOCC;
	if (cause == AC_COUNT) return;
	uint32_t gi = group_of(f, p, (enum adv_cause)cause, op->name_id, name, stack, 0, o->tid, o->phase, NO_STEP);
	struct adv_group *g = &p->out.groups[gi];
	if (d->blocks < g->blocks_min) g->blocks_min = d->blocks;
	if (d->blocks > g->blocks_max) g->blocks_max = d->blocks;
	g->threads = d->threads;
	g->occ = oc.known ? oc.theoretical : -1;
	tally(f, p, (enum adv_cause)cause, o->step, gi, op->s, 1, dur, 0);
	if (cause != AC_UNDERPAR) return;
	double cov = (double)d->blocks / (double)dev->sm_count;
	double pm = counters_mean(&f->pre->ctr, "pm.sm_active_pct", p->out.pid, op->device, op->s, op->e);
	if (pm >= 0) {
		if (counted(p, o->step)) { g->pm_ns += (double)dur; g->pm_w += (double)dur * pm / 100; }
		/* measured activity above the grid's coverage: the conservative one */
		if (pm / 100 > cov) cov = pm / 100 > 1 ? 1 : pm / 100;
	}
	o->gup = gi;
	o->dup = (uint64_t)((double)dur * (1.0 - cov));
}

void adv_facts_op(void *ctx, const struct gpu_op *op)
{
	struct adv_facts *f = ctx;
	struct aproc *p = proc_find(f, op->pid);
	struct adet d;
	memset(&d, 0, sizeof(d));
	int have_d = det_take(f, op, &d);
	if (!p) return;
	struct aop o;
	memset(&o, 0, sizeof(o));
	o.s = op->s; o.e = op->e; o.call_s = op->call_s; o.call_e = op->call_e;
	o.tid = op->tid; o.has_call = op->has_call; o.call_name_id = op->call_name_id;
	o.gfp = o.gup = NO_GROUP;
	/* the attribution rule: an operation belongs to the step its launch call started in */
	o.step = op->has_call ? step_of(p, op->call_s) : NO_STEP;
	if (op->has_call) {
		o.stack_id = op->stack_id; /* the launch call's (the join's) */
		if (o.step != NO_STEP) o.phase = phase_of(f, p, op->tid, op->call_s);
	}
	uint64_t dur = op->e - op->s;
	if (dur > p->max_dur) p->max_dur = dur;
	if (op->kind == OP_KERNEL) {
		p->out.kernel_ns_all += dur;
		if (o.step != NO_STEP) p->out.kernel_ns_in_steps += dur;
	}
	ptrdiff_t row = o.step != NO_STEP ? row_at(f, p, o.step) : -1;
	if (row >= 0) {
		struct adv_step *x = fig(p, (size_t)row);
		if (op->call_s < x->first_launch) x->first_launch = op->call_s;
		if (op->call_e > x->last_launch) x->last_launch = op->call_e;
	}
	int in_counted = counted(p, o.step);
	struct tent *w = in_counted ? tent_at(p, o.step) : NULL;
	/* a counted step's count, and what it gave (to take back) */
#define COUNT(x, v) (p->out.x += (v), w ? (void)(w->x += (v)) : (void)0)
	if (in_counted) {
		COUNT(launches, 1);
		COUNT(launched_ns, dur);
	}
	if (op->kind == OP_KERNEL) {
		if (in_counted) {
			if (row >= 0) fig(p, (size_t)row)->kernels++;
			uint64_t cd = op->call_e - op->call_s;
			COUNT(kernels, 1);
			COUNT(kernels_called, 1);
			COUNT(short_kernels, dur < cd);
			COUNT(short_hta, dur < cd && cd <= STEP_SHORT_CPU_NS);
		}
#undef COUNT
		kernel_facts(f, p, op, &d, have_d, &o);
	} else if (have_d && op->has_call && !op->graph) {
		uint64_t small = 0;
		int cause = copy_cause(&d, &small);
		if (cause >= 0) {
			uint64_t ce = op->call_e > op->call_s ? op->call_e : op->call_s;
			struct acall c = { .s = op->call_s, .e = ce, .budget = ce - op->call_s, .corr = op->corr,
					   .tid = op->tid, .step = o.step, .cause = (uint8_t)cause, .waits_gpu = 1,
					   .until = NONE_T };
			if (cause == AC_PAGEABLE) {
				/* the copy itself on pinned memory: bytes / the measured pinned bandwidth */
				int dir = d.copy_kind == GP_COPY_DTOH ? 1 : 0;
				double bw = p->out.pinned_gbps[dir];
				uint64_t tp = bw > 0 ? (uint64_t)((double)d.bytes / bw) : dur;
				c.dgpu = dur > tp ? dur - tp : 0;
			}
			uint64_t *after = u64map_get(&p->last_stack, op->tid, MAP_FIND);
			const char *api = tool_str(f->r, op->call_name_id);
			char name[160];
			snprintf(name, sizeof(name), "%s %s%s%s", *api ? api : "(unnamed call)",
				 op->kind == OP_MEMSET ? "memset" : copy_kind_name(d.copy_kind),
				 cause == AC_PAGEABLE || (cause == AC_SYNC && d.dst_kind == GP_MEM_PAGEABLE) ? " pageable" : "",
				 cause == AC_SYNC_COPY || (cause == AC_SYNC && !d.async) ? " (synchronous API)" : "");
			c.group = group_of(f, p, (enum adv_cause)cause, op->call_name_id, name, o.stack_id,
					   o.stack_id ? 0 : after ? (uint32_t)*after : 0, op->tid, o.phase, NO_STEP);
			p->out.groups[c.group].bytes += in_counted ? d.bytes : 0;
			if (w) tent_group(p, c.group, o.step)->bytes += d.bytes;
			tally(f, p, (enum adv_cause)cause, c.step, c.group, c.s, 1, c.budget, 0);
			add_call(p, &c);
		}
	}
	if (op->s < p->swept_to) { /* the sweep has passed it: figures only */
		p->out.late_ops++;
		return;
	}
	VEC_PUSH(p->ops, p->nops, p->cops, o);
	note_held(p);
}

/* ------------------------------------------------------------ the sweep */
static int cmp_aop(const void *x, const void *y)
{
	const struct aop *a = x, *b = y;
	if (a->s != b->s) return a->s < b->s ? -1 : 1;
	if (a->has_call != b->has_call) return a->has_call ? -1 : 1;
	return a->call_s < b->call_s ? -1 : a->call_s > b->call_s;
}

/* The first call not closed yet: windows mostly close in start order, so
 * the loops over open calls start there. */
static size_t first_open(struct aproc *p)
{
	while (p->c0 < p->ncalls && p->calls[p->c0].closed) p->c0++;
	return p->c0;
}

/* The end of lead call i's window as far as the calls held tell (calls
 * sorted by start): the start of the first call that waits for the GPU at
 * or after the host issued work again, at most the end of the step after
 * the call's.  NONE_T-capped while the host has not issued work again. */
static uint64_t lead_end(struct aproc *p, size_t i)
{
	struct acall *c = &p->calls[i];
	if (c->reissued && c->until == NONE_T)
		for (size_t k = i + 1; k < p->ncalls; k++) {
			const struct acall *w = &p->calls[k];
			if (w->waits_gpu && w->s >= c->reissued) { c->until = w->s; break; }
		}
	return c->until < c->cap ? c->until : c->cap;
}

static int cmp_acall(const void *x, const void *y)
{
	const struct acall *a = x, *b = y;
	if (a->s != b->s) return a->s < b->s ? -1 : 1;
	return a->e < b->e ? -1 : a->e > b->e;
}

static void close_call(struct adv_facts *f, struct aproc *p, struct acall *c)
{
	if (c->closed) return;
	c->closed = 1;
	/* the host was blocked `budget`; the GPU idled `claimed` of the window
	 * because of it, and the call's own GPU work would take `dgpu` less */
	uint64_t save = c->claimed + c->dgpu;
	if (save > c->budget) save = c->budget;
	tally(f, p, (enum adv_cause)c->cause, c->step, c->group, c->s, 0, 0, save);
}

/* GPU-side savings of the busy stretch that just ended: kept when the host
 * was waiting for the GPU as it drained at t (a call that waits for the GPU
 * in progress), else the host was the bottleneck: left out. */
static void run_end(struct adv_facts *f, struct aproc *p, uint64_t t)
{
	int gpu_bound = 0;
	for (size_t i = first_open(p); i < p->ncalls && !gpu_bound; i++) {
		const struct acall *c = &p->calls[i];
		if (c->waits_gpu && c->s <= t && t < c->e) gpu_bound = 1;
	}
	for (size_t i = 0; i < p->nrun; i++) {
		const struct runent *r = &p->run[i];
		uint32_t step = (uint32_t)(r->key >> 32), group = (uint32_t)((r->key >> 1) & 0x7fffffff);
		enum adv_cause c = r->key & 1 ? AC_UNDERPAR : AC_FP32;
		if (gpu_bound) tally(f, p, c, step, group, 0, 0, 0, r->d);
		else if (counted(p, step)) {
			p->out.gpu_side_discarded_ns += r->d;
			struct tent *w = tent_at(p, step);
			if (w) w->gpu_side_discarded_ns += r->d;
		}
	}
	p->nrun = 0;
	u64map_free(&p->run_idx);
	u64map_init(&p->run_idx);
}

static void run_add(struct aproc *p, uint32_t step, uint32_t group, int up, uint64_t d)
{
	if (!d || group == NO_GROUP) return;
	uint64_t key = ((uint64_t)step << 32) | ((uint64_t)(group & 0x7fffffff) << 1) | (uint64_t)up;
	struct runent r = { key, 0 };
	((struct runent *)VEC_KEYED(&p->run_idx, key, p->run, p->nrun, p->crun, &r))->d += d;
	note_held(p);
}

/* Input idle [x, x + d) in step k, its group named by `next` (the
 * operation that ends the gap: the step's first, or the next step's input
 * copy; NULL: none). */
static void input_idle(struct adv_facts *f, struct aproc *p, uint32_t k, uint32_t tent, uint64_t x, uint64_t d,
		       const struct aop *next)
{
	const char *api = next && next->has_call ? tool_str(f->r, next->call_name_id) : "";
	uint32_t g = group_of(f, p, AC_INPUT, next && next->has_call ? next->call_name_id : 0,
			      *api ? api : "(no launch call)", next && next->has_call ? next->stack_id : 0, 0,
			      next ? next->tid : 0, 0, tent);
	tally(f, p, AC_INPUT, k, g, x, 0, d, d);
}

/* Idle [a, b) that no blocking call took: before the first launch call of
 * its step it is input, after it host idle, except after the step's last
 * launch where the next step starts at its input copy (adv_input_at_end:
 * the host loads that batch); `next` is the operation that ends the gap
 * (NULL: none before the step's end). */
static void distribute(struct adv_facts *f, struct aproc *p, uint64_t a, uint64_t b, const struct aop *next)
{
	int input_at_end = adv_input_at_end(p->out.sp);
	size_t n = nrows(p);
	uint32_t k = step_of(p, a);
	if (k == NO_STEP) k = (uint32_t)FIRST_WHERE(r, n, arow(p, r).s > a); /* the first row starting after a */
	for (; k < n && arow(p, k).s < b; k++) {
		const struct arow w = arow(p, k);
		uint64_t x = a > w.s ? a : w.s, y = b < w.e ? b : w.e;
		if (x >= y || !w.counted) continue;
		ptrdiff_t i = row_at(f, p, k);
		uint64_t fl = i >= 0 ? fig(p, (size_t)i)->first_launch : NONE_T;
		uint32_t tent = tent_at(p, k) ? k : NO_STEP; /* a use only if k stays counted */
		if (x < fl) {
			uint64_t z = y < fl ? y : fl;
			input_idle(f, p, k, tent, x, z - x, next);
			x = z;
		}
		if (x < y) {
			int same = next && next->step == k;
			/* the work after the gap is a later step's (not an earlier one's
			 * the GPU is behind on): the host is past this step's last launch */
			if (input_at_end && (!next || next->step > k)) {
				input_idle(f, p, k, tent, x, y - x, next);
				continue;
			}
			/* name ids 1 and 2 only tell the two labels apart in the group key */
			uint32_t g = group_of(f, p, AC_HOST_IDLE, same ? 1 : 2,
					      same ? "before a launch" : "after the step's last launch", 0, 0, 0,
					      same ? next->phase : 0, tent);
			tally(f, p, AC_HOST_IDLE, k, g, x, 0, y - x, 0);
		}
	}
}

/* Idle that is nobody's ("other") inside counted steps. */
static void unexplained(struct aproc *p, uint64_t a, uint64_t b)
{
	for (uint32_t k = 0; k < nrows(p); k++) { /* rare: a linear walk is fine */
		const struct arow w = arow(p, k);
		if (w.e <= a) continue;
		if (w.s >= b) break;
		uint64_t x = a > w.s ? a : w.s, y = b < w.e ? b : w.e;
		if (x >= y || !w.counted) continue;
		p->out.unexplained_idle_ns += y - x;
		struct tent *t = tent_at(p, k);
		if (t) t->unexplained_idle_ns += y - x;
	}
}

enum gap_class { GC_HOST, GC_LAUNCH_HOST, GC_LATENCY, GC_OTHER };

static void gap(struct adv_facts *f, struct aproc *p, uint64_t g0, uint64_t g1, const struct aop *next)
{
	enum gap_class gc;
	if (!next) gc = GC_HOST;
	else if (!next->has_call) gc = GC_OTHER;
	else if (next->call_s > g0) gc = GC_HOST;
	else if (next->call_e > g0) gc = GC_LAUNCH_HOST;
	else if (g1 - g0 <= f->kernel_wait) gc = GC_LATENCY;
	else gc = GC_OTHER;
	if (gc == GC_LATENCY) {
		uint64_t bin = (g1 - g0) / FLOOR_BIN_NS;
		p->floor_hist[bin < FLOOR_BINS ? bin : FLOOR_BINS]++;
	}
	if (gc == GC_HOST || gc == GC_LAUNCH_HOST) run_end(f, p, g0);
	if (gc == GC_OTHER) { unexplained(p, g0, g1); return; }
	uint64_t pos = g0;
	if (gc == GC_HOST || gc == GC_LAUNCH_HOST) {
		/* blocking calls first, each up to its own duration, earliest first
		 * (in a launch gap the call still running may be one: an async copy
		 * from pageable memory staging its data) */
		for (size_t i = first_open(p); i < p->ncalls && pos < g1; i++) {
			struct acall *c = &p->calls[i];
			if (c->s >= g1) break;
			if (c->closed || c->claimed >= c->budget) continue;
			/* a lead window may end inside the gap */
			uint64_t end = c->lead ? lead_end(p, i) : g1;
			if (end > g1) end = g1;
			if (end <= pos) continue;
			uint64_t a = pos > c->s ? pos : c->s;
			if (a > pos) distribute(f, p, pos, a, next);
			uint64_t take = end - a, left = c->budget - c->claimed;
			if (take > left) take = left;
			c->claimed += take;
			pos = a + take;
		}
	}
	if (pos < g1) distribute(f, p, pos, g1, next);
}

/* Closes the windows of the calls that returned before o's launch call
 * started: o is the first work the host issued after them.  A lead window
 * (lead_window()) only notes that time, and closes once its end is behind
 * o's start (no later gap can lie in it) or its call has taken its whole
 * duration. */
static void close_windows(struct adv_facts *f, struct aproc *p, const struct aop *o)
{
	if (!o->has_call) return;
	for (size_t i = first_open(p); i < p->ncalls; i++) {
		struct acall *c = &p->calls[i];
		if (c->s >= o->s) break;
		if (c->closed) continue;
		if (!c->lead) {
			if (c->e <= o->call_s) close_call(f, p, c);
			continue;
		}
		if (!c->reissued && c->e <= o->call_s) c->reissued = o->call_s;
		if (c->claimed >= c->budget || lead_end(p, i) <= o->s) close_call(f, p, c);
	}
}

static void sweep(struct adv_facts *f, struct aproc *p, uint64_t T)
{
	/* ops in cmp_aop order: the prefix the last sweep left sorted merged
	 * with the operations added since, sorted (equal keys: the prefix's
	 * first, as a stable sort of the whole): sorting all of them at every
	 * sweep was a tenth of advise's time */
	sort_tail(p->ops, p->nsorted, p->nops, sizeof(*p->ops), cmp_aop, (void **)&p->tmp, &p->ctmp);
	p->nsorted = p->nops;
	if (p->ncalls > 1) qsort(p->calls, p->ncalls, sizeof(*p->calls), cmp_acall);
	p->c0 = 0;
	size_t i;
	for (i = 0; i < p->nops && p->ops[i].s < T; i++) {
		const struct aop *o = &p->ops[i];
		if (o->s > p->cur) gap(f, p, p->cur, o->s, o);
		close_windows(f, p, o);
		run_add(p, o->step, o->gfp, 0, o->dfp);
		run_add(p, o->step, o->gup, 1, o->dup);
		if (o->e > p->cur) p->cur = o->e;
	}
	if (i) {
		p->swept_to = p->ops[i - 1].s;
		memmove(p->ops, p->ops + i, (p->nops - i) * sizeof(*p->ops));
		p->nops -= i;
		p->nsorted = p->nops;
	}
	/* open lead windows find their end before the waiting calls that may
	 * end them are dropped */
	for (size_t k = 0; k < p->ncalls; k++)
		if (p->calls[k].lead && !p->calls[k].closed) lead_end(p, k);
	size_t w = 0;
	for (size_t k = 0; k < p->ncalls; k++)
		if (!p->calls[k].closed) p->calls[w++] = p->calls[k];
	p->ncalls = w;
	p->c0 = 0;
	p->last_sweep = T;
}

void adv_facts_advance(struct adv_facts *f, uint64_t now, uint64_t frontier)
{
	if (now <= f->now) return;
	f->now = now;
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		uint64_t slack = p->max_dur > f->max_call_dur ? p->max_dur : f->max_call_dur;
		if (slack > ADV_HOLD_NS) slack = ADV_HOLD_NS;
		uint64_t T = now > slack ? now - slack : 0;
		if (frontier < T) T = frontier;
		/* on a grid of trace time, not every 10 ms from the last sweep:
		 * a slice's engine, started anywhere, sweeps where one pass does */
		if (T / SWEEP_EVERY_NS <= p->last_sweep / SWEEP_EVERY_NS && p->nops < SWEEP_BATCH) continue;
		sweep(f, p, T);
	}
}

/* Median of the launch-latency histogram (bin middle), 0 none. */
static uint64_t floor_median(const struct aproc *p, int *measured)
{
	uint64_t n = 0, c = 0;
	for (int b = 0; b <= FLOOR_BINS; b++) n += p->floor_hist[b];
	*measured = n > 0;
	if (!n) return ADV_GRAPH_FLOOR_NS;
	for (int b = 0; b <= FLOOR_BINS; b++) {
		c += p->floor_hist[b];
		if (2 * c >= n) return (uint64_t)b * FLOOR_BIN_NS + FLOOR_BIN_NS / 2;
	}
	return ADV_GRAPH_FLOOR_NS;
}

void adv_facts_drain(struct adv_facts *f)
{
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		sweep(f, p, UINT64_MAX);
		uint64_t end = nrows(p) ? arow(p, nrows(p) - 1).e : 0;
		if (p->cur < end) gap(f, p, p->cur, end, NULL);
		else run_end(f, p, p->cur);
		for (size_t k = 0; k < p->ncalls; k++) close_call(f, p, &p->calls[k]);
		p->ncalls = 0;
	}
}

void adv_facts_summarize(struct adv_facts *f)
{
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		const struct steps_proc *sp = p->out.sp;
		/* per counted step: the host's time before its first launch, the
		 * span it issued work in, and the launch-bound estimate: its host
		 * idle after the first launch, less the latency a CUDA graph still
		 * has between kernels, at most the span of its launch calls */
		p->out.graph_floor_ns = floor_median(p, &p->out.floor_measured);
		for (size_t k = 0; k < sp->nrows; k++) {
			const struct adv_step x = *fig(p, k);
			if (!counted(p, k)) continue;
			/* counts of the idle-time causes: the steps they were seen in */
			p->out.in[AC_INPUT].count += x.cost[AC_INPUT] != 0;
			p->out.in[AC_HOST_IDLE].count += x.cost[AC_HOST_IDLE] != 0;
			if (x.first_launch == NONE_T) continue;
			p->out.pre_launch_ns += x.first_launch - arow(p, k).s;
			if (arow(p, k).e > x.last_launch) p->out.post_launch_ns += arow(p, k).e - x.last_launch;
			uint64_t span = x.last_launch > x.first_launch ? x.last_launch - x.first_launch : 0;
			p->out.issue_ns += span;
			uint64_t idle = x.cost[AC_HOST_IDLE], floor = x.kernels * p->out.graph_floor_ns;
			uint64_t save = idle > floor ? idle - floor : 0;
			if (save > span) save = span;
			p->out.in[AC_HOST_IDLE].saving_ns += save;
		}
	}
}

/* ------------------------------------------------------------ slices */
/* The counts of struct adv_proc a slice's engine zeroes at its mark and
 * adds to the sum's (adv_facts_take): one list for the two. */
#define PROC_SUMS(X) TENT_SUMS(X) X(kernel_ns_all) X(kernel_ns_in_steps) X(late_ops)

int adv_facts_lost(const struct adv_facts *f)
{
	for (size_t i = 0; i < f->np; i++)
		if (f->p[i].lost) return 1;
	return 0;
}

void adv_facts_reader(struct adv_facts *f, gp_reader *r)
{
	f->r = r;
	f->kn.r = r;
}

void adv_facts_seed(struct adv_facts *f, const struct steps_prefix *pf, int c)
{
	for (size_t i = 0; i < f->np; i++) {
		uint64_t d = steps_prefix_longest(pf, c, f->p[i].out.pid);
		if (d > f->p[i].max_dur) f->p[i].max_dur = d;
	}
	uint64_t d = steps_prefix_longest_call(pf, c);
	if (d > f->max_call_dur) f->max_call_dur = d;
}

void adv_facts_mark(struct adv_facts *f)
{
	f->marked = 1;
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		struct adv_proc *o = &p->out;
		size_t n = p->nrow;
		memset(o->in, 0, sizeof(o->in));
		memset(o->out, 0, sizeof(o->out));
		for (size_t k = 0; k < n; k++) {
			struct adv_step *x = fig(p, k);
			memset(x->cost, 0, sizeof(x->cost));
			x->kernels = 0;
		}
		for (size_t g = 0; g < o->ngroups; g++) {
			group_zero(&o->groups[g]);
			p->gseq[g] = 0;
			p->guse[g].seq = UINT64_MAX;
		}
		p->nseq = 0;
		p->useq = 0;
		if (p->tent) memset(p->tent, 0, ADV_TENT_STEPS * sizeof(*p->tent));
		p->ntg = 0;
		u64map_free(&p->tg_idx);
		u64map_init(&p->tg_idx);
#define ZERO(x) o->x = 0;
		PROC_SUMS(ZERO)
#undef ZERO
		memset(p->floor_hist, 0, sizeof(p->floor_hist));
		o->held_max = p->nops + p->ncalls + p->nrun;
	}
}

static void state_group(struct bytes *b, const struct aproc *p, uint32_t g)
{
	if (g == NO_GROUP) {
		bytes_u64(b, UINT64_MAX);
		return;
	}
	size_t n = strlen(p->gkey[g]);
	bytes_u64(b, n);
	bytes_put(b, p->gkey[g], n);
}

/* a u64map's entries in key order (those with keep[key] >= min when keep) */
static void state_map(struct bytes *b, const u64map *m, const u64map *keep, uint64_t min)
{
	uint64_t *k = xmalloc((m->n ? m->n : 1) * sizeof(*k));
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->used[i]) continue;
		uint64_t *v = keep ? u64map_get((u64map *)keep, m->slot[i].key, MAP_FIND) : NULL;
		if (!keep || (v && *v >= min)) k[n++] = m->slot[i].key;
	}
	qsort(k, n, sizeof(*k), cmp_u64);
	bytes_u64(b, n);
	for (size_t i = 0; i < n; i++) {
		bytes_u64(b, k[i]);
		bytes_u64(b, *u64map_get((u64map *)m, k[i], MAP_FIND));
	}
	free(k);
}

void adv_facts_state(const struct adv_facts *f, struct bytes *b, uint64_t lead)
{
	bytes_u64(b, f->now);
	bytes_u64(b, f->max_call_dur);
	for (size_t i = 0; i < f->np; i++) {
		const struct aproc *p = &f->p[i];
		bytes_u64(b, p->cur);
		bytes_u64(b, p->swept_to);
		bytes_u64(b, p->last_sweep / SWEEP_EVERY_NS);
		bytes_u64(b, p->max_dur);
		bytes_u64(b, p->nsorted);
		bytes_u64(b, p->nops);
		for (size_t k = 0; k < p->nops; k++) {
			const struct aop *o = &p->ops[k];
			bytes_u64(b, o->s); bytes_u64(b, o->e); bytes_u64(b, o->call_s); bytes_u64(b, o->call_e);
			bytes_u64(b, o->dfp); bytes_u64(b, o->dup);
			bytes_u64(b, (uint64_t)o->tid << 32 | o->step);
			bytes_u64(b, (uint64_t)o->stack_id << 32 | o->phase);
			bytes_u64(b, (uint64_t)o->call_name_id << 8 | o->has_call);
			state_group(b, p, o->gfp);
			state_group(b, p, o->gup);
		}
		bytes_u64(b, p->ncalls);
		for (size_t k = 0; k < p->ncalls; k++) {
			const struct acall *c = &p->calls[k];
			bytes_u64(b, c->s); bytes_u64(b, c->e); bytes_u64(b, c->budget); bytes_u64(b, c->claimed);
			bytes_u64(b, c->dgpu); bytes_u64(b, c->corr); bytes_u64(b, c->reissued); bytes_u64(b, c->until);
			bytes_u64(b, c->cap);
			bytes_u64(b, (uint64_t)c->tid << 32 | c->step);
			bytes_u64(b, (uint64_t)c->cause << 24 | c->waits_gpu << 16 | c->closed << 8 | c->lead);
			state_group(b, p, c->group);
		}
		bytes_u64(b, p->nrun);
		for (size_t k = 0; k < p->nrun; k++) {
			const struct runent *r = &p->run[k];
			bytes_u64(b, (r->key >> 32) << 1 | (r->key & 1));
			state_group(b, p, (uint32_t)((r->key >> 1) & 0x7fffffff));
			bytes_u64(b, r->d);
		}
		/* a thread's last kept call matters to a record of the same
		 * call, which lies in it: not to one that ended before the lead-in */
		state_map(b, &p->tid_corr, &p->tid_corr_e, lead);
		state_map(b, &p->last_stack, NULL, 0);
		/* the first launches of the steps a gap may still reach */
		bytes_u64(b, (uint64_t)p->lost);
		for (size_t k = p->row0; k < p->row0 + p->nrow && arow(p, k).s <= f->now; k++)
			if (arow(p, k).e > p->cur && fig(p, k - p->row0)->first_launch != NONE_T) {
				bytes_u64(b, k);
				bytes_u64(b, fig(p, k - p->row0)->first_launch);
			}
	}
}

static void group_add(struct adv_group *d, const struct adv_group *s)
{
	tally_add(&d->in, &s->in);
	d->out_count += s->out_count;
	d->bytes += s->bytes;
	if (s->blocks_min < d->blocks_min) d->blocks_min = s->blocks_min;
	if (s->blocks_max > d->blocks_max) d->blocks_max = s->blocks_max;
	if (s->blocks_max) { /* the last kernel's */
		d->threads = s->threads;
		d->occ = s->occ;
	}
	d->pm_ns += s->pm_ns;
	d->pm_w += s->pm_w;
}

/* A slice's first use u (its uses counted from base on in the sum's) into d. */
static void use_add(struct guse *d, const struct guse *u, uint64_t base)
{
	if (u->seq == UINT64_MAX || base + u->seq >= d->seq) return;
	*d = *u;
	d->seq += base;
}

void adv_facts_take(struct adv_facts *sum, struct adv_facts *part)
{
	for (size_t i = 0; i < sum->np && i < part->np; i++) {
		struct aproc *d = &sum->p[i], *s = &part->p[i];
		struct adv_proc *o = &d->out;
		const struct adv_proc *q = &s->out;
		for (int c = 0; c < AC_COUNT; c++) {
			tally_add(&o->in[c], &q->in[c]);
			out_add(&o->out[c], &q->out[c]);
		}
		rows_grow(d, s->row0 + s->nrow);
		for (size_t i = 0; i < s->nrow; i++) {
			const struct adv_step y = *fig(s, i);
			struct adv_step *x = fig(d, s->row0 + i);
			for (int c = 0; c < AC_COUNT; c++) x->cost[c] += y.cost[c];
			x->kernels += y.kernels;
			if (y.first_launch < x->first_launch) x->first_launch = y.first_launch;
			if (y.last_launch > x->last_launch) x->last_launch = y.last_launch;
		}
		d->lost |= s->lost;
		/* the groups in the order of their first use: one pass's */
		uint64_t base = d->useq;
		d->useq += s->useq;
		uint32_t *by = xcalloc(s->nseq ? s->nseq : 1, sizeof(*by));
		for (size_t g = 0; g < q->ngroups; g++)
			if (s->gseq[g]) by[s->gseq[g] - 1] = (uint32_t)g;
		for (uint32_t n = 0; n < s->nseq; n++) {
			const struct adv_group *sg = &q->groups[by[n]];
			int is_new;
			size_t *slot = strmap_get(&d->group_idx, s->gkey[by[n]], &is_new);
			if (is_new) {
				struct adv_group gr = *sg;
				gr.label = own(sum, sg->label);
				gr.name = own(sum, sg->name);
				*slot = group_push(sum, d, &gr, s->gkey[by[n]]);
			} else {
				group_add(&o->groups[*slot], sg);
			}
			use_add(&d->guse[*slot], &s->guse[by[n]], base);
		}
		free(by);
		for (uint32_t k = 0; s->tent && d->beside && k < ADV_TENT_STEPS; k++) {
			struct tent *x = tent_at(d, k);
			const struct tent *y = &s->tent[k];
			for (int c = 0; c < AC_COUNT; c++) {
				tally_add(&x->in[c], &y->in[c]);
				out_add(&x->out[c], &y->out[c]);
			}
#define ADD(v) x->v += y->v;
			TENT_SUMS(ADD)
#undef ADD
		}
		for (size_t e = 0; e < s->ntg; e++) {
			const struct tentg *y = &s->tg[e];
			size_t *slot = strmap_find(&d->group_idx, s->gkey[y->key >> 32]);
			if (!slot) { /* not one pass's groups: the facts after the steps */
				d->lost = 1;
				continue;
			}
			struct tentg *x = tent_group(d, (uint32_t)*slot, (uint32_t)y->key);
			use_add(&x->use, &y->use, base);
			tally_add(&x->in, &y->in);
			x->out_count += y->out_count;
			x->bytes += y->bytes;
		}
#define ADD(x) o->x += q->x;
		PROC_SUMS(ADD)
#undef ADD
		for (int k = 0; k <= FLOOR_BINS; k++) d->floor_hist[k] += s->floor_hist[k];
		if (q->held_max > o->held_max) o->held_max = q->held_max;
	}
	adv_facts_mark(part);
}

/* ------------------------------------------------------------ settle */
/* Step k, counted by the facts, is warm-up: what being counted gave it
 * goes (fig, tent_at; ADV_TENT_STEPS), what a step not counted gives
 * elsewhere comes (tally). */
static void untally(struct aproc *p, uint32_t k)
{
	struct adv_step *x = fig(p, k);
	memset(x->cost, 0, sizeof(x->cost));
	x->kernels = 0;
	const struct tent *y = p->tent ? &p->tent[k] : NULL;
	struct adv_proc *o = &p->out;
	for (int c = 0; y && c < AC_COUNT; c++) {
		tally_sub(&o->in[c], &y->in[c]);
		out_add(&o->out[c], &y->out[c]);
	}
#define SUB(x) o->x -= y->x;
	if (y) { TENT_SUMS(SUB) }
#undef SUB
	for (size_t e = 0; e < p->ntg; e++) {
		const struct tentg *t = &p->tg[e];
		if ((uint32_t)t->key != k) continue;
		struct adv_group *g = &o->groups[t->key >> 32];
		tally_sub(&g->in, &t->in);
		g->out_count += t->out_count;
		g->bytes -= t->bytes;
	}
}

struct gorder { uint64_t seq; size_t g; };
static int cmp_gorder(const void *x, const void *y)
{
	const struct gorder *a = x, *b = y;
	if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

/* After the warm-up steps' uses are taken back: each group as one pass
 * makes it, at its first use left (its example from that use; none left:
 * at the end, its figures none), in that order.  Only out.groups is read
 * after this (the groups' keys and indexes are the order before). */
static void groups_settle(struct adv_facts *f, struct aproc *p)
{
	size_t n = p->out.ngroups;
	struct guse *real = xmalloc((n ? n : 1) * sizeof(*real));
	uint64_t *all = xmalloc((n ? n : 1) * sizeof(*all));
	for (size_t g = 0; g < n; g++) {
		real[g] = p->guse[g];
		all[g] = real[g].seq;
	}
	for (size_t e = 0; e < p->ntg; e++) {
		const struct tentg *t = &p->tg[e];
		size_t g = t->key >> 32;
		if (t->use.seq < all[g]) all[g] = t->use.seq;
		if (t->use.seq < real[g].seq && step_counted(step_row(p->out.sp, (uint32_t)t->key), 0)) real[g] = t->use;
	}
	struct gorder *o = xmalloc((n ? n : 1) * sizeof(*o));
	for (size_t g = 0; g < n; g++) {
		o[g] = (struct gorder){ real[g].seq, g };
		struct adv_group *gr = &p->out.groups[g];
		if (real[g].seq == all[g] || real[g].seq == UINT64_MAX) continue;
		int after_site;
		const struct stack_view *v = group_view(f, p, real[g].stack, real[g].after, real[g].tid, &after_site);
		group_example(f, gr, v, gr->name, &real[g], after_site);
	}
	qsort(o, n, sizeof(*o), cmp_gorder);
	struct adv_group *sorted = xmalloc((n ? n : 1) * sizeof(*sorted));
	for (size_t i = 0; i < n; i++) sorted[i] = p->out.groups[o[i].g];
	memcpy(p->out.groups, sorted, n * sizeof(*sorted));
	free(sorted);
	free(o);
	free(all);
	free(real);
}

int adv_facts_settle(struct adv_facts *f)
{
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		struct steps_proc *sp = p->out.sp;
		if (p->nrow > sp->nrows || (p->expect && p->expect->n != sp->nrows)) return -1;
		rows_grow(p, sp->nrows);
		step_summarize(sp, 0, &p->out.sum);
		for (size_t k = 0; k < sp->nrows; k++) {
			const struct step_row *w = step_row(sp, k);
			const struct arow x = arow(p, k);
			if (x.s != w->s || x.e != w->e) return -1;
			/* a warm-up step taken as counted can be taken back */
			if (x.counted != step_counted(w, 0) &&
			    !(x.counted && step_counted(w, 1) && k < ADV_TENT_STEPS))
				return -1;
		}
	}
	for (size_t i = 0; i < f->np; i++) {
		struct aproc *p = &f->p[i];
		for (uint32_t k = 0; k < p->nrow && k < ADV_TENT_STEPS; k++)
			if (arow(p, k).counted && !step_counted(step_row(p->out.sp, k), 0)) untally(p, k);
		groups_settle(f, p);
		p->beside = NULL;
		if (p->expect) { /* the same rows (above): the steps' own from here on */
			spill_reader_free(p->rd);
			p->rd = NULL;
			p->expect = NULL;
		}
		counted_sums(p);
	}
	return 0;
}
