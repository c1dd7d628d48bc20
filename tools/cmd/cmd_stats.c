/* cmd_stats.c — `gpuprof stats FILE`: summary reports modelled on nsys stats
 * (cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
 * cuda_gpu_mem_size_sum, nvtx_sum) plus GPU utilisation.
 *
 * One streaming pass in time order.  Memory: per-name aggregates plus, for
 * exact medians, every duration of each name (8 bytes per API call/kernel/
 * memop/range: 80 MB for 10 M kernels); the NVTX attribution keeps the
 * launches not yet closed by an outermost range or still waiting for their
 * kernel (see below); utilisation keeps one open interval per device/stream. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/comm.h"
#include "analysis/intervals.h"
#include "analysis/launch_join.h"
#include "analysis/launch_sites.h"
#include "analysis/occupancy.h"
#include "analysis/stacks.h"
#include "analysis/windows.h"
#include "cmd/cmd.h"
#include "common/report.h"
#include "common/tool.h"

enum { R_API, R_KERN, R_OCC, R_MEMOPS, R_MEMSIZE, R_NVTX, R_UTIL, R_CNT, R_WIN, R_SITES, R_COMM, R_COMM_STEPS,
       R_COUNT };
static const char *const report_names[R_COUNT] = { "api", "kernels", "occupancy", "memops", "memsize", "nvtx",
						   "util", "counters", "windows", "launch_sites", "comm",
						   "comm_steps" };

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof stats [--report NAME[,NAME...]] [--format table|csv|json]\n"
		   "                     [--since T] [--until T] [--strict] FILE\n\n"
		   "Summary reports (default: all), modelled on `nsys stats`:\n"
		   "  api      CUDA runtime+driver API calls by name (cuda_api_sum)\n"
		   "  kernels  GPU kernels by demangled name (cuda_gpu_kern_sum)\n"
		   "  occupancy  kernels by name and launch shape (threads/block, registers,\n"
		   "           shared memory): grid blocks, theoretical occupancy (resident warps\n"
		   "           per SM / max warps per SM by the CUDA occupancy rules) and its\n"
		   "           limiter, SM coverage = min(1, blocks / SMs), and time-weighted\n"
		   "           estimates: Est SM Act = coverage, Est Occ = coverage x occupancy\n"
		   "           the grid reaches on an occupied SM ('-': device property missing)\n"
		   "  memops   memcpy/memset time by kind (cuda_gpu_mem_time_sum)\n"
		   "  memsize  memcpy/memset sizes by kind, MB = 10^6 bytes (cuda_gpu_mem_size_sum)\n"
		   "  nvtx     NVTX ranges by name, with GPU time of the kernels launched inside\n"
		   "           each push/pop range (nvtx_sum)\n"
		   "  util     GPU utilisation per device and stream: busy %% = union of kernel\n"
		   "           intervals / span of the device's GPU activity, idle gaps, largest\n"
		   "           gap, copy time and compute/copy overlap %% (of copy time); in a\n"
		   "           windowed trace only the time inside the windows counts.  Beside\n"
		   "           busy %% (some kernel running, what nvidia-smi calls utilisation):\n"
		   "           SM-Wtd %% = sum of kernel time x SM coverage / span (upper bound\n"
		   "           on SM activity), Occ-Wtd %% = the same x grid occupancy (an\n"
		   "           estimate comparable to DCGM SM occupancy), NVML %% = mean of the\n"
		   "           trace's nvml.gpu_util samples inside the span\n"
		   "  counters sampled counters (e.g. nvml.*) per name and device: samples, min,\n"
		   "           mean, time-weighted mean, max.  Part of the default set only\n"
		   "           when the trace has counters\n"
		   "  windows  the GPU-activity windows of a trace recorded with `gpuprof run\n"
		   "           --gpu-window`: start/end (ns after the trace start), duration and\n"
		   "           kernels starting inside; GPU activity outside them was not\n"
		   "           recorded (not lost).  Part of the default set only when the\n"
		   "           trace has windows\n"
		   "  launch_sites  call sites of the launches (trace recorded with --stacks), by\n"
		   "           the kernel time launched there: site = innermost Python frame of\n"
		   "           the user's code (not stdlib/site-packages), else innermost Python\n"
		   "           frame, else innermost native frame outside the CUDA libraries;\n"
		   "           kernels, launch calls, memcpy/memset time, innermost frame.  Part\n"
		   "           of the default set only when the trace has stacks\n"
		   "  comm     per rank (process) of a merged multi-rank trace: NCCL kernel time\n"
		   "           (Comm), other kernel time (Compute), their overlap, and the wait\n"
		   "           at each collective (latest start among the ranks - this rank's\n"
		   "           start; collectives matched by order); also prints comm_steps\n"
		   "  comm_steps  the same per top-level NVTX push/pop range (\"step <i>\"),\n"
		   "           matched across ranks by name and occurrence.  comm and\n"
		   "           comm_steps are in the default set only when the trace has NCCL\n"
		   "           kernels or kernels of several processes\n\n"
		   "  --report LIST    reports to print, comma separated\n"
		   "  --format FMT     table (default), csv or json\n"
		   "  --since T        ignore records starting before T after the trace start\n"
		   "  --until T        ignore records starting at or after T (T: 10ms, 2s, 500us, ns)\n"
		   "  --strict         exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help       this text\n\n"
		   "Med is the exact median (mean of the two middle values for even counts);\n"
		   "StdDev is the sample standard deviation (n-1), 0 for a single value.\n");
}

/* ------------------------------------------------------------ groups */
struct grp {
	char *name;
	uint64_t n, total, min, max;
	double mean, m2;         /* Welford */
	uint64_t *v; size_t nv, cv;
	uint64_t gpu_ns;         /* nvtx: kernel time attributed */
	int style;               /* nvtx kind */
};

struct gtab { strmap idx; struct grp *g; size_t n, cap; };

static size_t gtab_get(struct gtab *t, const char *name)
{
	int is_new;
	size_t *slot = strmap_get(&t->idx, name, &is_new);
	if (is_new) {
		struct grp g;
		memset(&g, 0, sizeof(g));
		g.name = xstrdup(name);
		*slot = t->n;
		VEC_PUSH(t->g, t->n, t->cap, g);
	}
	return *slot;
}

static void grp_add(struct grp *g, uint64_t v)
{
	if (!g->n || v < g->min) g->min = v;
	if (!g->n || v > g->max) g->max = v;
	g->n++;
	g->total += v;
	double d = (double)v - g->mean;
	g->mean += d / (double)g->n;
	g->m2 += d * ((double)v - g->mean);
	VEC_PUSH(g->v, g->nv, g->cv, v);
}

static double grp_median(struct grp *g)
{
	if (!g->nv) return 0;
	qsort(g->v, g->nv, sizeof(uint64_t), cmp_u64);
	if (g->nv & 1) return (double)g->v[g->nv / 2];
	return ((double)g->v[g->nv / 2 - 1] + (double)g->v[g->nv / 2]) / 2.0;
}

static double grp_stddev(const struct grp *g)
{
	return g->n > 1 ? sqrt(g->m2 / (double)(g->n - 1)) : 0.0;
}

static void gtab_free(struct gtab *t)
{
	for (size_t i = 0; i < t->n; i++) { free(t->g[i].name); free(t->g[i].v); }
	free(t->g);
	strmap_free(&t->idx);
}

static struct gtab *sort_tab;
static int cmp_grp_idx(const void *a, const void *b)
{
	const struct grp *x = &sort_tab->g[*(const size_t *)a], *y = &sort_tab->g[*(const size_t *)b];
	if (x->total != y->total) return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static size_t *sorted_groups(struct gtab *t)
{
	size_t *ix = xmalloc((t->n ? t->n : 1) * sizeof(size_t));
	for (size_t i = 0; i < t->n; i++) ix[i] = i;
	sort_tab = t;
	qsort(ix, t->n, sizeof(size_t), cmp_grp_idx);
	return ix;
}

/* ------------------------------------------------------------ utilisation */
struct udev {
	uint32_t pid, dev;
	int has; uint64_t span_s, span_e;
	double smw_ns, occw_ns;  /* SM-weighted and occupancy-weighted kernel time */
	int cov_known, occ_known; /* 0 no kernels, 1 every kernel's device properties known, -1 not */
	struct ivset k, c;
};
struct ustream { uint32_t pid, dev, stream; struct ivset k, c; };

/* Kernels of one name and launch shape on one device; the grid may vary, so
 * kernel time is kept per grid size (blocks -> ns) for the coverage. */
struct ocfg {
	uint32_t pid, dev, threads, regs, smem;
	char *name;
	uint64_t n, total, bmin, bmax;
	u64map blocks;
};

/* One counter series (name, pid, device): samples in arrival order. */
struct csample { uint64_t t; double v; };
struct cser {
	uint32_t pid, dev;
	char *name;
	struct csample *s; size_t n, cap;
};

/* ------------------------------------------------------------ state */
/* NVTX attribution.  A push/pop range record is written when the range is
 * popped, i.e. after the API calls inside it on the same thread, and a
 * kernel may arrive before or after the range that encloses its launch.  So
 * each launch call waits on its thread's pending list until the enclosing
 * outermost (depth 0) range has been seen: by then every range containing it
 * is known ("resolved").  Kernel time seen before that is held on the launch;
 * after it, it goes straight to the ranges.  A non-graph launch is forgotten
 * once resolved and its kernel seen. */
#define MAXG 16
struct launch {
	uint64_t start, kernel_ns;
	uint32_t groups[MAXG];
	uint8_t ng, resolved, graph, has_api, kernel_seen;
};
struct pend { uint64_t *keys; size_t head, n, cap; };
struct tstack { struct { uint64_t s, e; uint32_t g; } *e; size_t n, cap; };

struct stats {
	gp_reader *r;
	struct gtab api, kern, memt, mems, nvtx;
	u64map api_name2g, kern_name2g;   /* string id -> group */
	u64map launches;                   /* (pid<<40 ^ corr) -> struct launch * */
	u64map tid2pend; struct pend *pends; size_t npends, cpends;
	/* ranges that arrived before the calls inside them (a writer that emits
	 * ranges at push time): open ranges per thread */
	u64map tid2stack; struct tstack *stacks; size_t nstacks, cstacks;
	u64map dev2u, str2u;
	struct udev *devs; size_t ndevs, cdevs;
	struct ustream *strs; size_t nstrs, cstrs;
	uint64_t since, until;             /* absolute */
	struct winset win;                 /* GPU-activity windows (windowed trace) */
	/* occupancy: one group per pid/device/name/launch shape */
	strmap occ_idx; struct ocfg *occ; size_t nocc, cocc;
	u64map dev2prop; gp_rec_device *props; size_t nprops, cprops;
	strmap cnt_idx; struct cser *cnt; size_t ncnt, ccnt;
	uint64_t last;                     /* latest end of any timed record */
	struct stacks *stk;                /* launch_sites: recorded stacks */
	struct launch_join *lj;            /* launch_sites: GPU time per launch call */
	struct comm *comm;                 /* comm: kernels, launches, steps per rank */
};

static size_t name_group(u64map *cache, struct gtab *t, uint32_t id, const char *name)
{
	uint64_t *s = u64map_get(cache, id, 0);
	if (s) return *s;
	size_t g = gtab_get(t, name);
	*u64map_get(cache, id, 1) = g;
	return g;
}

static struct pend *pend_for(struct stats *st, uint64_t key, int create)
{
	uint64_t *s = u64map_get(&st->tid2pend, key, 0);
	if (s) return &st->pends[*s];
	if (!create) return NULL;
	struct pend p;
	memset(&p, 0, sizeof(p));
	*u64map_get(&st->tid2pend, key, 1) = st->npends;
	VEC_PUSH(st->pends, st->npends, st->cpends, p);
	return &st->pends[st->npends - 1];
}

static struct tstack *stack_for(struct stats *st, uint64_t key, int create)
{
	uint64_t *s = u64map_get(&st->tid2stack, key, 0);
	if (s) return &st->stacks[*s];
	if (!create) return NULL;
	struct tstack t;
	memset(&t, 0, sizeof(t));
	*u64map_get(&st->tid2stack, key, 1) = st->nstacks;
	VEC_PUSH(st->stacks, st->nstacks, st->cstacks, t);
	return &st->stacks[st->nstacks - 1];
}

static void add_group(struct launch *l, uint32_t g)
{
	for (uint32_t j = 0; j < l->ng; j++)
		if (l->groups[j] == g) return;
	if (l->ng < MAXG) l->groups[l->ng++] = g;
}

static struct launch *launch_get(struct stats *st, uint64_t key, int create)
{
	uint64_t *s = u64map_get(&st->launches, key, create);
	if (!s) return NULL;
	if (!*s) *s = (uint64_t)(uintptr_t)xcalloc(1, sizeof(struct launch));
	return (struct launch *)(uintptr_t)*s;
}

static void launch_forget(struct stats *st, uint64_t key)
{
	uint64_t *s = u64map_get(&st->launches, key, 0);
	if (!s) return;
	free((void *)(uintptr_t)*s);
	u64map_del(&st->launches, key);
}

static void attribute(struct stats *st, const struct launch *l, uint64_t ns)
{
	for (uint32_t i = 0; i < l->ng; i++)
		st->nvtx.g[l->groups[i]].gpu_ns += ns;
}

static void resolve(struct stats *st, uint64_t key)
{
	struct launch *l = launch_get(st, key, 0);
	if (!l || l->resolved) return;
	attribute(st, l, l->kernel_ns);
	l->kernel_ns = 0;
	l->resolved = 1;
	if (l->kernel_seen && !l->graph) launch_forget(st, key);
}

static void on_api(struct stats *st, const gp_record *rec, uint32_t pid, uint32_t tid)
{
	const gp_rec_api *a = &rec->u.api;
	const char *name = tool_str(st->r, a->name_id);
	char unk[32];
	if (!*name) { snprintf(unk, sizeof(unk), "cbid_%u", a->cbid); name = unk; }
	size_t g = a->name_id ? name_group(&st->api_name2g, &st->api, a->name_id, name) : gtab_get(&st->api, name);
	grp_add(&st->api.g[g], a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0);

	if (!a->correlation_id || !(strstr(name, "Launch") || strstr(name, "Graph")))
		return;
	if (st->launches.n > (1u << 22)) {
		/* launches that never see a kernel (GPU activity off?): start over
		 * rather than grow without bound */
		for (size_t i = 0; i < st->launches.cap; i++)
			if (st->launches.used[i]) free((void *)(uintptr_t)st->launches.vals[i]);
		u64map_free(&st->launches);
		for (size_t i = 0; i < st->npends; i++) st->pends[i].head = st->pends[i].n = 0;
	}
	uint64_t key = ((uint64_t)pid << 40) ^ a->correlation_id;
	struct launch *l = launch_get(st, key, 1);
	if (l->has_api) return;   /* the driver call inside a runtime call: same launch */
	l->has_api = 1;
	l->start = a->start_ns;
	l->graph = strstr(name, "Graph") != NULL;
	struct tstack *ts = stack_for(st, ((uint64_t)pid << 32) | tid, 0);
	if (ts) {
		while (ts->n && ts->e[ts->n - 1].e <= a->start_ns) ts->n--;
		for (size_t i = 0; i < ts->n; i++)
			if (ts->e[i].s <= a->start_ns && a->start_ns < ts->e[i].e)
				add_group(l, ts->e[i].g);
	}
	struct pend *p = pend_for(st, ((uint64_t)pid << 32) | tid, 1);
	if (p->head > 1024 && p->head * 2 > p->n) {
		memmove(p->keys, p->keys + p->head, (p->n - p->head) * sizeof(uint64_t));
		p->n -= p->head; p->head = 0;
	}
	VEC_PUSH(p->keys, p->n, p->cap, key);
}

static void on_kernel_nvtx(struct stats *st, uint32_t pid, const gp_rec_kernel *k)
{
	uint64_t dur = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
	uint64_t key = ((uint64_t)pid << 40) ^ k->correlation_id;
	struct launch *l = launch_get(st, key, 0);
	if (!l) {
		if (st->launches.n > (1u << 22)) return;
		l = launch_get(st, key, 1);  /* kernel ahead of its launch call */
	}
	l->kernel_seen = 1;
	if (l->resolved) {
		attribute(st, l, dur);
		if (!l->graph) launch_forget(st, key);
	} else {
		l->kernel_ns += dur;
	}
}

static uint64_t pend_start(struct stats *st, struct pend *p, size_t i)
{
	struct launch *l = launch_get(st, p->keys[i], 0);
	return l ? l->start : 0;
}

static void on_nvtx(struct stats *st, const gp_rec_nvtx_range *n, uint32_t pid, uint32_t tid)
{
	const char *dom = tool_str(st->r, n->domain_id), *msg = tool_str(st->r, n->message_id);
	char *name = xmalloc(strlen(dom) + strlen(msg) + 2);
	if (*dom) sprintf(name, "%s:%s", dom, msg);
	else strcpy(name, msg);
	size_t g = gtab_get(&st->nvtx, name);
	free(name);
	st->nvtx.g[g].style |= n->kind == GP_NVTX_STARTEND ? 2 : 1;
	grp_add(&st->nvtx.g[g], n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0);
	if (n->kind != GP_NVTX_PUSHPOP) return;
	uint64_t tkey = ((uint64_t)pid << 32) | (n->tid ? n->tid : tid);
	struct tstack *ts = stack_for(st, tkey, 1);
	while (ts->n && ts->e[ts->n - 1].e <= n->start_ns) ts->n--;
	vec_reserve((void **)&ts->e, &ts->cap, ts->n + 1, sizeof(*ts->e));
	ts->e[ts->n].s = n->start_ns; ts->e[ts->n].e = n->end_ns; ts->e[ts->n].g = (uint32_t)g;
	ts->n++;
	struct pend *p = pend_for(st, tkey, 0);
	if (!p) return;
	/* launches on this thread that started inside [start, end) */
	size_t lo = p->head, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pend_start(st, p, mid) < n->start_ns) lo = mid + 1;
		else hi = mid;
	}
	for (size_t i = lo; i < p->n; i++) {
		struct launch *l = launch_get(st, p->keys[i], 0);
		if (!l) continue;
		if (l->start >= n->end_ns) break;
		add_group(l, (uint32_t)g);
	}
	/* an outermost range closes the books on every launch before its end */
	if (n->depth == 0) {
		while (p->head < p->n && pend_start(st, p, p->head) < n->end_ns)
			resolve(st, p->keys[p->head++]);
	}
}

static struct udev *udev_get(struct stats *st, uint32_t pid, uint32_t dev)
{
	uint64_t key = ((uint64_t)pid << 32) | dev;
	uint64_t *s = u64map_get(&st->dev2u, key, 0);
	if (s) return &st->devs[*s];
	struct udev d;
	memset(&d, 0, sizeof(d));
	d.pid = pid; d.dev = dev;
	*u64map_get(&st->dev2u, key, 1) = st->ndevs;
	VEC_PUSH(st->devs, st->ndevs, st->cdevs, d);
	return &st->devs[st->ndevs - 1];
}

static struct ustream *ustream_get(struct stats *st, uint32_t pid, uint32_t dev, uint32_t stream)
{
	/* pid and device folded into the key: pids < 2^22, devices < 2^10 */
	uint64_t key = ((uint64_t)pid << 42) ^ ((uint64_t)dev << 32) ^ stream;
	uint64_t *s = u64map_get(&st->str2u, key, 0);
	if (s && st->strs[*s].pid == pid && st->strs[*s].dev == dev && st->strs[*s].stream == stream)
		return &st->strs[*s];
	struct ustream u;
	memset(&u, 0, sizeof(u));
	u.pid = pid; u.dev = dev; u.stream = stream;
	*u64map_get(&st->str2u, key, 1) = st->nstrs;
	VEC_PUSH(st->strs, st->nstrs, st->cstrs, u);
	return &st->strs[st->nstrs - 1];
}

static void on_gpu(struct stats *st, uint32_t pid, uint32_t dev, uint32_t stream, uint64_t s, uint64_t e, int is_kernel)
{
	struct udev *d = udev_get(st, pid, dev);
	if (e < s) e = s;
	if (!d->has || s < d->span_s) d->span_s = s;
	if (!d->has || e > d->span_e) d->span_e = e;
	d->has = 1;
	ivset_add(is_kernel ? &d->k : &d->c, s, e);
	struct ustream *u = ustream_get(st, pid, dev, stream);
	ivset_add(is_kernel ? &u->k : &u->c, s, e);
}

static void on_device(struct stats *st, uint32_t pid, const gp_rec_device *d)
{
	uint64_t *s = u64map_get(&st->dev2prop, ((uint64_t)pid << 32) | d->device_id, 1);
	gp_rec_device copy = *d;
	if (*s) { st->props[*s - 1] = copy; return; } /* a later record wins */
	VEC_PUSH(st->props, st->nprops, st->cprops, copy);
	*s = st->nprops;  /* index + 1: 0 means absent */
}

static const gp_rec_device *device_props(struct stats *st, uint32_t pid, uint32_t dev)
{
	uint64_t *s = u64map_get(&st->dev2prop, ((uint64_t)pid << 32) | dev, 0);
	return s ? &st->props[*s - 1] : NULL;
}

static void on_kernel_occ(struct stats *st, uint32_t pid, const gp_rec_kernel *k, const char *name)
{
	uint32_t threads = k->block[0] * k->block[1] * k->block[2];
	uint32_t smem = k->static_smem + k->dynamic_smem;
	uint64_t blocks = (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
	char key[64];
	snprintf(key, sizeof(key), "%u/%u/%u/%u/%u/", pid, k->device_id, threads, k->registers, smem);
	char *full = xmalloc(strlen(key) + strlen(name) + 1);
	strcpy(full, key);
	strcat(full, name);
	int is_new;
	size_t *slot = strmap_get(&st->occ_idx, full, &is_new);
	free(full);
	if (is_new) {
		struct ocfg c;
		memset(&c, 0, sizeof(c));
		c.pid = pid; c.dev = k->device_id; c.threads = threads; c.regs = k->registers; c.smem = smem;
		c.name = xstrdup(name);
		*slot = st->nocc;
		VEC_PUSH(st->occ, st->nocc, st->cocc, c);
	}
	struct ocfg *c = &st->occ[*slot];
	uint64_t dur = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
	if (!c->n || blocks < c->bmin) c->bmin = blocks;
	if (!c->n || blocks > c->bmax) c->bmax = blocks;
	c->n++;
	c->total += dur;
	*u64map_get(&c->blocks, blocks, 1) += dur;
}

static void on_counter(struct stats *st, uint32_t pid, const gp_rec_counter *k)
{
	const char *name = tool_str(st->r, k->name_id);
	char *key = xmalloc(strlen(name) + 32);
	sprintf(key, "%u/%u/%s", pid, k->device_id, name);
	int is_new;
	size_t *slot = strmap_get(&st->cnt_idx, key, &is_new);
	free(key);
	if (is_new) {
		struct cser c;
		memset(&c, 0, sizeof(c));
		c.pid = pid; c.dev = k->device_id; c.name = xstrdup(name);
		*slot = st->ncnt;
		VEC_PUSH(st->cnt, st->ncnt, st->ccnt, c);
	}
	struct cser *c = &st->cnt[*slot];
	struct csample smp = { k->ts_ns, k->kind == GP_COUNTER_DOUBLE ? k->value.d : (double)k->value.i };
	VEC_PUSH(c->s, c->n, c->cap, smp);
}

static void memop_add(struct stats *st, const char *op, uint64_t dur, uint64_t bytes)
{
	/* index first: gtab_get may move the array */
	size_t gt = gtab_get(&st->memt, op), gs = gtab_get(&st->mems, op);
	grp_add(&st->memt.g[gt], dur);
	grp_add(&st->mems.g[gs], bytes);
}

static void process(struct stats *st, const gp_record *rec)
{
	uint64_t t = gp_record_time(rec);
	if (t) {
		uint64_t e = tool_rec_end(rec);
		if (e < t) e = t;
		if (e > st->last) st->last = e;
	}
	if (rec->type == GP_REC_WINDOW) { /* clipped to --since/--until later */
		winset_add(&st->win, tool_pid(st->r, rec), rec->u.window.start_ns, rec->u.window.end_ns);
		return;
	}
	if (rec->type == GP_REC_DEVICE) {
		on_device(st, tool_pid(st->r, rec), &rec->u.device);
		return;
	}
	if (rec->type == GP_REC_PROCESS) {
		comm_add(st->comm, rec, rec->u.process.pid, 0);
		return;
	}
	if (rec->type == GP_REC_MODULE || rec->type == GP_REC_STACK || rec->type == GP_REC_THREAD ||
	    rec->type == GP_REC_SOURCE) {
		stacks_add(st->stk, rec);
		return;
	}
	switch (rec->type) {
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET: case GP_REC_NVTX_RANGE:
	case GP_REC_COUNTER:
		if (t < st->since || t >= st->until) return;
		break;
	default:
		return;
	}
	uint32_t pid = tool_pid(st->r, rec);
	const gp_rec_source *src = gp_reader_source(st->r, rec->source_id);
	uint32_t stid = src ? src->tid : 0;
	comm_add(st->comm, rec, pid, stid);
	switch (rec->type) {
	case GP_REC_API:
		on_api(st, rec, pid, rec->u.api.tid ? rec->u.api.tid : stid);
		launch_join_api(st->lj, pid, rec->u.api.tid ? rec->u.api.tid : stid, tool_str(st->r, rec->u.api.name_id),
				&rec->u.api);
		break;
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		const char *mangled = tool_str(st->r, k->name_id);
		uint64_t *s = u64map_get(&st->kern_name2g, k->name_id, 0);
		size_t g;
		if (s) g = *s;
		else {
			char *d = demangle(mangled);
			g = gtab_get(&st->kern, d);
			free(d);
			*u64map_get(&st->kern_name2g, k->name_id, 1) = g;
		}
		grp_add(&st->kern.g[g], k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0);
		on_kernel_nvtx(st, pid, k);
		on_gpu(st, pid, k->device_id, k->stream_id, k->start_ns, k->end_ns, 1);
		on_kernel_occ(st, pid, k, st->kern.g[g].name);
		launch_join_gpu(st->lj, pid, k->correlation_id, 0, k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0);
		break;
	}
	case GP_REC_COUNTER:
		on_counter(st, pid, &rec->u.counter);
		break;
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		char op[64];
		snprintf(op, sizeof(op), "[CUDA memcpy %s]", copy_kind_long(m->copy_kind));
		memop_add(st, op, m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0, m->bytes);
		on_gpu(st, pid, m->device_id, m->stream_id, m->start_ns, m->end_ns, 0);
		launch_join_gpu(st->lj, pid, m->correlation_id, 1, m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0);
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &rec->u.memset;
		memop_add(st, "[CUDA memset]", m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0, m->bytes);
		on_gpu(st, pid, m->device_id, m->stream_id, m->start_ns, m->end_ns, 0);
		launch_join_gpu(st->lj, pid, m->correlation_id, 1, m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0);
		break;
	}
	case GP_REC_NVTX_RANGE:
		on_nvtx(st, &rec->u.nvtx_range, pid, stid);
		break;
	}
}

/* ------------------------------------------------------------ reports */
static const struct col time_cols_api[] = {
	{ "Time (%)", "time_pct", COL_F1 }, { "Total Time (ns)", "total_ns", COL_INT },
	{ "Num Calls", "num_calls", COL_INT }, { "Avg (ns)", "avg_ns", COL_F1 },
	{ "Med (ns)", "med_ns", COL_F1 }, { "Min (ns)", "min_ns", COL_INT },
	{ "Max (ns)", "max_ns", COL_INT }, { "StdDev (ns)", "stddev_ns", COL_F1 },
	{ "Name", "name", COL_STR },
};
static const struct col time_cols_kern[] = {
	{ "Time (%)", "time_pct", COL_F1 }, { "Total Time (ns)", "total_ns", COL_INT },
	{ "Instances", "instances", COL_INT }, { "Avg (ns)", "avg_ns", COL_F1 },
	{ "Med (ns)", "med_ns", COL_F1 }, { "Min (ns)", "min_ns", COL_INT },
	{ "Max (ns)", "max_ns", COL_INT }, { "StdDev (ns)", "stddev_ns", COL_F1 },
	{ "Name", "name", COL_STR },
};
static const struct col time_cols_mem[] = {
	{ "Time (%)", "time_pct", COL_F1 }, { "Total Time (ns)", "total_ns", COL_INT },
	{ "Count", "count", COL_INT }, { "Avg (ns)", "avg_ns", COL_F1 },
	{ "Med (ns)", "med_ns", COL_F1 }, { "Min (ns)", "min_ns", COL_INT },
	{ "Max (ns)", "max_ns", COL_INT }, { "StdDev (ns)", "stddev_ns", COL_F1 },
	{ "Operation", "operation", COL_STR },
};
static const struct col size_cols[] = {
	{ "Total (MB)", "total_mb", COL_F3 }, { "Count", "count", COL_INT },
	{ "Avg (MB)", "avg_mb", COL_F3 }, { "Med (MB)", "med_mb", COL_F3 },
	{ "Min (MB)", "min_mb", COL_F3 }, { "Max (MB)", "max_mb", COL_F3 },
	{ "StdDev (MB)", "stddev_mb", COL_F3 }, { "Operation", "operation", COL_STR },
};
static const struct col nvtx_cols[] = {
	{ "Time (%)", "time_pct", COL_F1 }, { "Total Time (ns)", "total_ns", COL_INT },
	{ "Instances", "instances", COL_INT }, { "Avg (ns)", "avg_ns", COL_F1 },
	{ "Med (ns)", "med_ns", COL_F1 }, { "Min (ns)", "min_ns", COL_INT },
	{ "Max (ns)", "max_ns", COL_INT }, { "StdDev (ns)", "stddev_ns", COL_F1 },
	{ "GPU Kernel Time (ns)", "gpu_kernel_ns", COL_INT }, { "Style", "style", COL_STR },
	{ "Range", "range", COL_STR },
};
static const struct col util_cols[] = {
	{ "PID", "pid", COL_ID }, { "Device", "device", COL_ID }, { "Stream", "stream", COL_STR },
	{ "Kernels", "kernels", COL_INT }, { "Busy (ns)", "busy_ns", COL_INT },
	{ "Span (ns)", "span_ns", COL_INT }, { "Busy (%)", "busy_pct", COL_F1 },
	{ "SM-Wtd (%)", "sm_weighted_pct", COL_F1 }, { "Occ-Wtd (%)", "occ_weighted_pct", COL_F1 },
	{ "NVML (%)", "nvml_util_pct", COL_F1 },
	{ "Idle Gaps", "idle_gaps", COL_INT }, { "Largest Gap (ns)", "largest_gap_ns", COL_INT },
	{ "Copy (ns)", "copy_ns", COL_INT }, { "Overlap (%)", "overlap_pct", COL_F1 },
};

/* time summary: cols 0..7 numeric, then name (and nvtx extras) */
static void fill_time(struct report *rep, struct gtab *t, int nvtx)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < t->n; i++) sum += t->g[i].total;
	size_t *ix = sorted_groups(t);
	for (size_t k = 0; k < t->n; k++) {
		struct grp *g = &t->g[ix[k]];
		struct cell *c = report_row(rep);
		cell_num(&c[0], sum ? 100.0 * (double)g->total / (double)sum : 0);
		cell_num(&c[1], (double)g->total);
		cell_num(&c[2], (double)g->n);
		cell_num(&c[3], (double)g->total / (double)g->n);
		cell_num(&c[4], grp_median(g));
		cell_num(&c[5], (double)g->min);
		cell_num(&c[6], (double)g->max);
		cell_num(&c[7], grp_stddev(g));
		if (nvtx) {
			if (g->style & 1) cell_num(&c[8], (double)g->gpu_ns);
			cell_str(&c[9], g->style == 1 ? "PushPop" : g->style == 2 ? "StartEnd" : "Mixed");
			cell_str(&c[10], g->name);
		} else {
			cell_str(&c[8], g->name);
		}
	}
	free(ix);
}

static void fill_size(struct report *rep, struct gtab *t)
{
	size_t *ix = sorted_groups(t);
	for (size_t k = 0; k < t->n; k++) {
		struct grp *g = &t->g[ix[k]];
		struct cell *c = report_row(rep);
		cell_num(&c[0], (double)g->total / 1e6);
		cell_num(&c[1], (double)g->n);
		cell_num(&c[2], (double)g->total / (double)g->n / 1e6);
		cell_num(&c[3], grp_median(g) / 1e6);
		cell_num(&c[4], (double)g->min / 1e6);
		cell_num(&c[5], (double)g->max / 1e6);
		cell_num(&c[6], grp_stddev(g) / 1e6);
		cell_str(&c[7], g->name);
	}
	free(ix);
}

static int cmp_udev(const void *a, const void *b)
{
	const struct udev *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}
static int cmp_ustream(const void *a, const void *b)
{
	const struct ustream *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* Windowed trace: only what lies inside the process's windows counts (GPU
 * work outside them was not recorded, so the time there is not idle). */
static void ivset_clip_windows(struct ivset *set, const struct winset *w, size_t lo, size_t hi)
{
	struct ivset out = { 0 };
	for (size_t i = 0; i < set->n; i++)
		for (size_t j = lo; j < hi; j++) {
			uint64_t s = set->v[i].s > w->v[j].s ? set->v[i].s : w->v[j].s;
			uint64_t e = set->v[i].e < w->v[j].e ? set->v[i].e : w->v[j].e;
			int instant_inside = set->v[i].s == set->v[i].e && set->v[i].s >= w->v[j].s &&
					     set->v[i].s < w->v[j].e; /* a 0-length op still counts */
			if (e > s || instant_inside)
				ivset_add(&out, s, e > s ? e : s);
		}
	free(set->v);
	*set = out;
}

/* Union of a clipped set, with gaps counted only between busy intervals of
 * the same window (the time between windows is unrecorded, not idle). */
static struct ivsum ivset_union_windows(struct ivset *set, const struct winset *w, size_t lo, size_t hi)
{
	struct ivsum sum = ivset_union(set);
	sum.gaps = sum.largest = 0;
	for (size_t i = 1; i < set->n; i++) {
		size_t j = lo;
		while (j < hi && w->v[j].e <= set->v[i - 1].s) j++;
		if (j == hi || set->v[i].s >= w->v[j].e) continue; /* next one is in a later window */
		uint64_t gap = set->v[i].s - set->v[i - 1].e;
		sum.gaps++;
		if (gap > sum.largest) sum.largest = gap;
	}
	return sum;
}

static const struct col occ_cols[] = {
	{ "Time (%)", "time_pct", COL_F1 }, { "Total Time (ns)", "total_ns", COL_INT },
	{ "Instances", "instances", COL_INT }, { "PID", "pid", COL_ID }, { "Device", "device", COL_ID },
	{ "Blocks Min", "blocks_min", COL_INT }, { "Blocks Max", "blocks_max", COL_INT },
	{ "Threads/Block", "threads_per_block", COL_INT }, { "Regs/Thread", "registers_per_thread", COL_INT },
	{ "Smem/Block (B)", "smem_per_block", COL_INT }, { "Theor Occ (%)", "theoretical_occupancy_pct", COL_F3 },
	{ "Limiter", "limiter", COL_STR }, { "SM Cov Min (%)", "sm_coverage_min_pct", COL_F3 },
	{ "SM Cov Max (%)", "sm_coverage_max_pct", COL_F3 }, { "Est SM Act (%)", "est_sm_activity_pct", COL_F3 },
	{ "Est Occ (%)", "est_occupancy_pct", COL_F3 }, { "Name", "name", COL_STR },
};

static int cmp_ocfg(const void *a, const void *b)
{
	const struct ocfg *x = a, *y = b;
	if (x->total != y->total) return x->total > y->total ? -1 : 1;
	int c = strcmp(x->name, y->name);
	if (c) return c;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	if (x->threads != y->threads) return x->threads < y->threads ? -1 : 1;
	if (x->regs != y->regs) return x->regs < y->regs ? -1 : 1;
	return x->smem < y->smem ? -1 : x->smem > y->smem;
}

/* One row per name and launch shape; also adds each group's SM-weighted and
 * occupancy-weighted kernel time to its device for the util report. */
static void fill_occ(struct report *rep, struct stats *st)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < st->nocc; i++) sum += st->occ[i].total;
	if (st->nocc) qsort(st->occ, st->nocc, sizeof(*st->occ), cmp_ocfg);
	for (size_t i = 0; i < st->nocc; i++) {
		struct ocfg *g = &st->occ[i];
		const gp_rec_device *d = device_props(st, g->pid, g->dev);
		struct occ o = occ_compute(d, g->threads, g->regs, g->smem);
		double wcov = 0, wocc = 0;
		int cov_known = d && d->sm_count, occ_known = cov_known && o.known;
		for (size_t j = 0; j < g->blocks.cap; j++) {
			if (!g->blocks.used[j]) continue;
			double ns = (double)g->blocks.vals[j];
			if (cov_known) wcov += ns * occ_coverage(d, g->blocks.keys[j]);
			if (occ_known) wocc += ns * occ_coverage(d, g->blocks.keys[j]) * occ_grid(d, &o, g->blocks.keys[j]);
		}
		struct udev *u = udev_get(st, g->pid, g->dev);
		u->smw_ns += wcov; u->occw_ns += wocc;
		/* a device's weighted figures need every kernel's properties */
		u->cov_known = u->cov_known == 0 ? (cov_known ? 1 : -1) : (u->cov_known == 1 && cov_known ? 1 : -1);
		u->occ_known = u->occ_known == 0 ? (occ_known ? 1 : -1) : (u->occ_known == 1 && occ_known ? 1 : -1);
		struct cell *c = report_row(rep);
		cell_num(&c[0], sum ? 100.0 * (double)g->total / (double)sum : 0);
		cell_num(&c[1], (double)g->total);
		cell_num(&c[2], (double)g->n);
		cell_num(&c[3], g->pid);
		cell_num(&c[4], g->dev);
		cell_num(&c[5], (double)g->bmin);
		cell_num(&c[6], (double)g->bmax);
		cell_num(&c[7], g->threads);
		cell_num(&c[8], g->regs);
		cell_num(&c[9], g->smem);
		if (o.known) {
			cell_num(&c[10], 100.0 * o.theoretical);
			cell_str(&c[11], occ_limiter_name(o.limiter));
		}
		if (cov_known) {
			cell_num(&c[12], 100.0 * occ_coverage(d, g->bmin));
			cell_num(&c[13], 100.0 * occ_coverage(d, g->bmax));
			if (g->total) cell_num(&c[14], 100.0 * wcov / (double)g->total);
		}
		if (occ_known && g->total) cell_num(&c[15], 100.0 * wocc / (double)g->total);
		cell_str(&c[16], g->name);
	}
}

/* Mean of the nvml.gpu_util samples of (pid, device) in [s, e]; -1: none. */
static double nvml_mean(struct stats *st, uint32_t pid, uint32_t dev, uint64_t s, uint64_t e)
{
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < st->ncnt; i++) {
		struct cser *c = &st->cnt[i];
		if (c->pid != pid || c->dev != dev || strcmp(c->name, "nvml.gpu_util")) continue;
		for (size_t j = 0; j < c->n; j++)
			if (c->s[j].t >= s && c->s[j].t <= e) { sum += c->s[j].v; n++; }
	}
	return n ? sum / (double)n : -1;
}

static const struct col cnt_cols[] = {
	{ "PID", "pid", COL_ID }, { "Device", "device", COL_ID }, { "Samples", "samples", COL_INT },
	{ "Min", "min", COL_F1 }, { "Mean", "mean", COL_F1 }, { "Time-Wtd Mean", "time_weighted_mean", COL_F1 },
	{ "Max", "max", COL_F1 }, { "Unit", "unit", COL_STR }, { "Counter", "counter", COL_STR },
};

/* Unit hint from the name's last component (nvml.* naming). */
static const char *counter_unit(const char *name)
{
	static const struct { const char *suf, *unit; } u[] = {
		{ "_util", "%" }, { "_bytes", "bytes" }, { "_mw", "mW" }, { "_mhz", "MHz" }, { "_c", "deg C" },
		{ "_pct", "%" }, { "_ns", "ns" }, { "_kbps", "KB/s" },
	};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		size_t l = strlen(u[i].suf);
		if (n > l && !strcmp(name + n - l, u[i].suf)) return u[i].unit;
	}
	return "";
}

static int cmp_csample(const void *a, const void *b)
{
	const struct csample *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_cser(const void *a, const void *b)
{
	const struct cser *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c) return c;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

static void fill_counters(struct report *rep, struct stats *st)
{
	if (st->ncnt) qsort(st->cnt, st->ncnt, sizeof(*st->cnt), cmp_cser);
	for (size_t i = 0; i < st->ncnt; i++) {
		struct cser *c = &st->cnt[i];
		qsort(c->s, c->n, sizeof(*c->s), cmp_csample);
		double mn = c->s[0].v, mx = c->s[0].v, sum = 0, tw = 0;
		for (size_t j = 0; j < c->n; j++) {
			if (c->s[j].v < mn) mn = c->s[j].v;
			if (c->s[j].v > mx) mx = c->s[j].v;
			sum += c->s[j].v;
			/* each value holds until the next sample */
			if (j + 1 < c->n) tw += c->s[j].v * (double)(c->s[j + 1].t - c->s[j].t);
		}
		struct cell *r = report_row(rep);
		cell_num(&r[0], c->pid); cell_num(&r[1], c->dev); cell_num(&r[2], (double)c->n);
		cell_num(&r[3], mn); cell_num(&r[4], sum / (double)c->n);
		uint64_t len = c->s[c->n - 1].t - c->s[0].t;
		if (len) cell_num(&r[5], tw / (double)len);
		cell_num(&r[6], mx);
		cell_str(&r[7], counter_unit(c->name)); cell_str(&r[8], c->name);
	}
}

static void fill_util(struct report *rep, struct stats *st)
{
	if (st->ndevs) qsort(st->devs, st->ndevs, sizeof(*st->devs), cmp_udev);
	if (st->nstrs) qsort(st->strs, st->nstrs, sizeof(*st->strs), cmp_ustream);
	size_t si = 0;
	for (size_t i = 0; i < st->ndevs; i++) {
		struct udev *d = &st->devs[i];
		uint64_t span = d->span_e - d->span_s;
		size_t wlo = 0, whi = 0;
		winset_range(&st->win, d->pid, &wlo, &whi);
		int windowed = whi > wlo;
		struct ivsum k, cp;
		if (windowed) {
			span = 0;
			for (size_t j = wlo; j < whi; j++) span += st->win.v[j].e - st->win.v[j].s;
			ivset_clip_windows(&d->k, &st->win, wlo, whi);
			ivset_clip_windows(&d->c, &st->win, wlo, whi);
			k = ivset_union_windows(&d->k, &st->win, wlo, whi);
			cp = ivset_union_windows(&d->c, &st->win, wlo, whi);
		} else {
			k = ivset_union(&d->k);
			cp = ivset_union(&d->c);
		}
		uint64_t overlap = ivset_overlap(&d->k, &d->c);
		struct cell *c = report_row(rep);
		cell_num(&c[0], d->pid); cell_num(&c[1], d->dev); cell_str(&c[2], "all");
		cell_num(&c[3], (double)k.count); cell_num(&c[4], (double)k.busy);
		cell_num(&c[5], (double)span);
		cell_num(&c[6], span ? 100.0 * (double)k.busy / (double)span : 0);
		/* concurrent kernels can sum past the span: capped, it is a bound */
		double smw = span ? 100.0 * d->smw_ns / (double)span : 0, occw = span ? 100.0 * d->occw_ns / (double)span : 0;
		if (d->cov_known == 1) cell_num(&c[7], smw > 100 ? 100 : smw);
		if (d->occ_known == 1) cell_num(&c[8], occw > 100 ? 100 : occw);
		double nv = nvml_mean(st, d->pid, d->dev, d->span_s, d->span_e);
		if (nv >= 0) cell_num(&c[9], nv);
		cell_num(&c[10], (double)k.gaps); cell_num(&c[11], (double)k.largest);
		cell_num(&c[12], (double)cp.busy);
		if (cp.busy) cell_num(&c[13], 100.0 * (double)overlap / (double)cp.busy);
		for (; si < st->nstrs && cmp_udev(&(struct udev){ .pid = st->strs[si].pid, .dev = st->strs[si].dev }, d) <= 0; si++) {
			struct ustream *u = &st->strs[si];
			struct ivsum uk, uc;
			if (windowed && u->pid == d->pid && u->dev == d->dev) {
				ivset_clip_windows(&u->k, &st->win, wlo, whi);
				ivset_clip_windows(&u->c, &st->win, wlo, whi);
				uk = ivset_union_windows(&u->k, &st->win, wlo, whi);
				uc = ivset_union_windows(&u->c, &st->win, wlo, whi);
			} else {
				uk = ivset_union(&u->k);
				uc = ivset_union(&u->c);
			}
			char sname[16];
			snprintf(sname, sizeof(sname), "%u", u->stream);
			c = report_row(rep);
			cell_num(&c[0], u->pid); cell_num(&c[1], u->dev); cell_str(&c[2], sname);
			cell_num(&c[3], (double)uk.count); cell_num(&c[4], (double)uk.busy);
			cell_num(&c[5], (double)span);
			cell_num(&c[6], span ? 100.0 * (double)uk.busy / (double)span : 0);
			cell_num(&c[10], (double)uk.gaps); cell_num(&c[11], (double)uk.largest);
			cell_num(&c[12], (double)uc.busy);
		}
	}
}

static const struct col win_cols[] = {
	{ "PID", "pid", COL_ID }, { "Start (ns)", "start_ns", COL_INT }, { "End (ns)", "end_ns", COL_INT },
	{ "Duration (ns)", "duration_ns", COL_INT }, { "Kernels", "kernels", COL_INT },
};

/* One row per window (times after the trace start), kernels by start time.
 * Before fill_util, which clips and merges the kernel intervals. */
static void fill_windows(struct report *rep, struct stats *st, uint64_t base)
{
	uint64_t *nk = xcalloc(st->win.n ? st->win.n : 1, sizeof(uint64_t));
	for (size_t i = 0; i < st->ndevs; i++)
		for (size_t j = 0; j < st->devs[i].k.n; j++) {
			long w = winset_find(&st->win, st->devs[i].pid, st->devs[i].k.v[j].s);
			if (w >= 0) nk[w]++;
		}
	for (size_t i = 0; i < st->win.n; i++) {
		const struct gpwin *w = &st->win.v[i];
		struct cell *c = report_row(rep);
		cell_num(&c[0], w->pid);
		cell_num(&c[1], (double)(w->s > base ? w->s - base : 0));
		cell_num(&c[2], (double)(w->e > base ? w->e - base : 0));
		cell_num(&c[3], (double)(w->e - w->s));
		cell_num(&c[4], (double)nk[i]);
	}
	free(nk);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "report", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int want[R_COUNT], any = 0, fmt = FMT_TABLE, strict = 0, c;
	uint64_t since = 0, until = UINT64_MAX;
	int have_since = 0, have_until = 0;
	memset(want, 0, sizeof(want));
	while ((c = getopt_long(argc, argv, "hr:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'r': {
			char *list = xstrdup(optarg), *save = NULL;
			for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int k;
				for (k = 0; k < R_COUNT && strcmp(tok, report_names[k]); k++) ;
				if (k == R_COUNT) {
					tool_err("unknown report '%s' (reports: api, kernels, occupancy, memops, memsize, nvtx, util, counters, windows, launch_sites, comm, comm_steps)", tok);
					free(list);
					return EXIT_USAGE;
				}
				want[k] = 1; any = 1;
				if (k == R_COMM) want[R_COMM_STEPS] = 1; /* one report, two tables */
			}
			free(list);
			break;
		}
		case 'f':
			if (!strcmp(optarg, "table")) fmt = FMT_TABLE;
			else if (!strcmp(optarg, "csv")) fmt = FMT_CSV;
			else if (!strcmp(optarg, "json")) fmt = FMT_JSON;
			else { tool_err("unknown format '%s' (table, csv, json)", optarg); return EXIT_USAGE; }
			break;
		case 'S':
			if (parse_duration_ns(optarg, &since)) { tool_err("bad --since '%s'", optarg); return EXIT_USAGE; }
			have_since = 1;
			break;
		case 'U':
			if (parse_duration_ns(optarg, &until)) { tool_err("bad --until '%s'", optarg); return EXIT_USAGE; }
			have_until = 1;
			break;
		case 's': strict = 1; break;
		case 'h': help(stdout); return EXIT_OK;
		default: help(stderr); return EXIT_USAGE;
		}
	}
	const char *path;
	gp_reader *r;
	int opened = tool_open_operand(argc, argv, help, &path, &r);
	if (opened != EXIT_OK)
		return opened;

	struct stats st;
	memset(&st, 0, sizeof(st));
	st.r = r;
	st.stk = stacks_new(r);
	st.lj = launch_join_new();
	st.comm = comm_new(r);
	uint64_t base = gp_reader_header(r)->start_trace_ns;
	st.since = have_since ? base + since : 0;
	st.until = have_until ? base + until : UINT64_MAX;

	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		process(&st, rec);
		progress_tick(++n);
	}
	int code = tool_finish(r, path, rc, strict);
	if (rc < 0 && rc != GP_ERR_TRUNCATED && rc != GP_ERR_CORRUPT && n == 0)
		goto out;

	winset_finish(&st.win);
	if (have_since || have_until) winset_clip(&st.win, st.since, st.until);
	/* the windows report is in the default set only for windowed traces */
	if (!any)
		for (int k = 0; k < R_COUNT; k++)
			want[k] = (k != R_WIN || st.win.n) && (k != R_CNT || st.ncnt) &&
				  (k != R_SITES || stacks_count(st.stk)) &&
				  ((k != R_COMM && k != R_COMM_STEPS) || comm_in_default(st.comm));

	/* end of trace: every range is known now */
	for (size_t i = 0; i < st.npends; i++)
		while (st.pends[i].head < st.pends[i].n)
			resolve(&st, st.pends[i].keys[st.pends[i].head++]);

	struct report reps[R_COUNT];
	report_init(&reps[R_API], "api", "CUDA API Summary", time_cols_api, 9);
	report_init(&reps[R_KERN], "kernels", "CUDA GPU Kernel Summary", time_cols_kern, 9);
	report_init(&reps[R_MEMOPS], "memops", "CUDA GPU MemOps Summary (by Time)", time_cols_mem, 9);
	report_init(&reps[R_MEMSIZE], "memsize", "CUDA GPU MemOps Summary (by Size)", size_cols, 8);
	report_init(&reps[R_NVTX], "nvtx", "NVTX Range Summary", nvtx_cols, 11);
	char util_title[160], win_title[256], cov[32], tot[32];
	uint64_t covered = winset_covered(&st.win), total = st.last > base ? st.last - base : 0;
	if (covered > total) total = covered;
	fmt_dur(cov, sizeof(cov), covered);
	fmt_dur(tot, sizeof(tot), total);
	if (st.win.n) {
		snprintf(util_title, sizeof(util_title),
			 "GPU Utilization, inside the %zu GPU-activity windows only (Span = recorded time)",
			 st.win.n);
		snprintf(win_title, sizeof(win_title),
			 "GPU Activity Windows: GPU activity was recorded only inside these windows (%s of %s)",
			 cov, tot);
	} else {
		snprintf(util_title, sizeof(util_title), "GPU Utilization");
		snprintf(win_title, sizeof(win_title),
			 "GPU Activity Windows: none, GPU activity was recorded for the whole run");
	}
	report_init(&reps[R_UTIL], "util", util_title, util_cols, 14);
	report_init(&reps[R_WIN], "windows", win_title, win_cols, 5);
	report_init(&reps[R_SITES], "launch_sites",
		    stacks_count(st.stk) ? "Launch Sites (by kernel time launched)"
					 : "Launch Sites: none, the trace has no stacks (record with --stacks)",
		    launch_sites_cols, LAUNCH_SITES_NCOLS);
	reps[R_SITES].note = launch_sites_note;
	report_init(&reps[R_OCC], "occupancy", "CUDA Kernel Occupancy (theoretical, from launch shape and device limits)",
		    occ_cols, 17);
	reps[R_OCC].note =
		" Theor Occ = resident warps per SM / max warps per SM by the CUDA occupancy rules\n"
		"   (threads, blocks, registers, shared memory per SM; the limiter named), for a grid\n"
		"   large enough to fill the SMs.  SM Cov = min(1, blocks / SM count): the share of\n"
		"   SMs the grid can occupy at all.  Est SM Act = SM Cov weighted by kernel time;\n"
		"   Est Occ = SM Cov x the occupancy the grid reaches on an occupied SM, weighted by\n"
		"   kernel time.  Estimates from the launch shape, not measured ('-': a device\n"
		"   property is missing in the trace).\n";
	report_init(&reps[R_CNT], "counters", "Sampled Counters", cnt_cols, 9);
	reps[R_CNT].note = " Time-Wtd Mean: each sample's value holds until the next sample.\n";
	reps[R_UTIL].note =
		" Busy = some kernel is running (union of kernel intervals / span): what nvidia-smi calls\n"
		"   'GPU utilization'; one 1-thread kernel makes it 100%.\n"
		" SM-Wtd = sum of kernel time x min(1, blocks / SMs) / span: an upper bound on the share\n"
		"   of SM time with work resident (cf. DCGM SM activity), capped at 100.\n"
		" Occ-Wtd = the same x the theoretical occupancy the grid reaches on an occupied SM:\n"
		"   an estimate comparable to DCGM SM occupancy.  Both from launch shapes, not measured.\n"
		" NVML = mean of the trace's nvml.gpu_util samples inside the span ('-': none).\n";
	fill_windows(&reps[R_WIN], &st, base);
	fill_time(&reps[R_API], &st.api, 0);
	fill_time(&reps[R_KERN], &st.kern, 0);
	fill_time(&reps[R_MEMOPS], &st.memt, 0);
	fill_size(&reps[R_MEMSIZE], &st.mems);
	fill_time(&reps[R_NVTX], &st.nvtx, 1);
	fill_occ(&reps[R_OCC], &st);
	fill_counters(&reps[R_CNT], &st);
	fill_util(&reps[R_UTIL], &st);
	if (stacks_count(st.stk)) launch_sites_fill(&reps[R_SITES], st.stk, st.lj);
	if (want[R_COMM] || want[R_COMM_STEPS]) comm_fill(st.comm, &reps[R_COMM], &reps[R_COMM_STEPS], base);
	else {
		report_init(&reps[R_COMM], "comm", "", comm_cols, COMM_NCOLS);
		report_init(&reps[R_COMM_STEPS], "comm_steps", "", comm_steps_cols, COMM_STEPS_NCOLS);
	}

	int nwant = 0, printed = 0;
	for (int k = 0; k < R_COUNT; k++) nwant += want[k];
	if (fmt == FMT_JSON) putchar('{');
	for (int k = 0; k < R_COUNT; k++) {
		if (!want[k]) continue;
		if (fmt == FMT_JSON) printf("%s\"%s\":", printed ? ",\n" : "", report_names[k]);
		else if (printed) putchar('\n');
		if (fmt == FMT_CSV && nwant > 1) printf("# %s\n", report_names[k]);
		report_print(stdout, &reps[k], fmt);
		printed++;
	}
	if (fmt == FMT_JSON) printf("}\n");
	for (int k = 0; k < R_COUNT; k++) report_free(&reps[k]);
out:
	gtab_free(&st.api); gtab_free(&st.kern); gtab_free(&st.memt); gtab_free(&st.mems); gtab_free(&st.nvtx);
	for (size_t i = 0; i < st.launches.cap; i++)
		if (st.launches.used[i]) free((void *)(uintptr_t)st.launches.vals[i]);
	u64map_free(&st.launches);
	u64map_free(&st.api_name2g); u64map_free(&st.kern_name2g); u64map_free(&st.tid2pend);
	u64map_free(&st.dev2u); u64map_free(&st.str2u);
	for (size_t i = 0; i < st.npends; i++) free(st.pends[i].keys);
	free(st.pends);
	for (size_t i = 0; i < st.nstacks; i++) free(st.stacks[i].e);
	free(st.stacks);
	u64map_free(&st.tid2stack);
	for (size_t i = 0; i < st.ndevs; i++) { free(st.devs[i].k.v); free(st.devs[i].c.v); }
	for (size_t i = 0; i < st.nstrs; i++) { free(st.strs[i].k.v); free(st.strs[i].c.v); }
	free(st.devs); free(st.strs);
	winset_free(&st.win);
	for (size_t i = 0; i < st.nocc; i++) { free(st.occ[i].name); u64map_free(&st.occ[i].blocks); }
	free(st.occ); strmap_free(&st.occ_idx);
	for (size_t i = 0; i < st.ncnt; i++) { free(st.cnt[i].name); free(st.cnt[i].s); }
	free(st.cnt); strmap_free(&st.cnt_idx);
	free(st.props); u64map_free(&st.dev2prop);
	launch_join_free(st.lj);
	stacks_free(st.stk);
	comm_free(st.comm);
	gp_reader_close(r);
	return code;
}
