/* advise.c — see advise.h.  One function per rule; each reads the facts of
 * one process and adds at most one finding.  The thresholds and estimate
 * formulas are documented in docs/ADVISE.md, rule by rule. */
#include "analysis/advise/advise.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join/attribution.h"
#include "common/spill.h"
#include "common/util.h"

const char *const adv_rule_names[AR_COUNT] = {
#define RULE_NAME(id, name, judge, cause, steps) [id] = name,
	ADV_RULES(RULE_NAME)
#undef RULE_NAME
};
const char *const adv_severity_names[4] = { "info", "low", "medium", "high" };

/* The severity of a saving of `pct` % of the step time. */
static enum adv_severity severity_of(double pct)
{
	return pct >= ADV_SEV_HIGH_PCT ? SEV_HIGH : pct >= ADV_SEV_MEDIUM_PCT ? SEV_MEDIUM :
	       pct >= ADV_SEV_LOW_PCT ? SEV_LOW : SEV_INFO;
}

/* ------------------------------------------------------------ text */
struct sb { char *s; size_t n, cap; };

static void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (k < 0) return;
	vec_reserve((void **)&b->s, &b->cap, b->n + (size_t)k + 1, 1);
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)k;
}

static char *sb_take(struct sb *b)
{
	if (!b->s) return xstrdup("");
	char *s = b->s;
	memset(b, 0, sizeof(*b));
	return s;
}

/* "1.234 ms" (a rotating set of buffers: several per printf) */
static const char *ms(double ns)
{
	static char buf[8][32];
	static int k;
	char *b = buf[k++ & 7];
	if (ns < 0) ns = 0;
	if (ns >= 1e5) snprintf(b, 32, "%.3f ms", ns / 1e6);
	else snprintf(b, 32, "%.1f us", ns / 1e3);
	return b;
}

/* ------------------------------------------------------------ context */
struct judge {
	const struct adv_facts *f;
	const struct adv_proc *p;
	uint64_t base;
	double n;      /* counted steps */
	double wall;   /* their time (the GPU work launched in them when the host runs ahead) */
	struct adv_result *out;
};

static double per_step(const struct judge *j, double ns) { return j->n > 0 ? ns / j->n : 0; }
static double pct(const struct judge *j, double ns) { return j->wall > 0 ? 100.0 * ns / j->wall : 0; }

static struct adv_finding *finding(struct judge *j, enum adv_rule rule)
{
	vec_reserve((void **)&j->out->v, &j->out->cap, j->out->n + 1, sizeof(*j->out->v));
	struct adv_finding *x = &j->out->v[j->out->n++];
	memset(x, 0, sizeof(*x));
	x->pid = j->p->pid;
	x->rank = j->p->rank;
	x->rule = rule;
	x->count_per_step = -1;
	x->step_number = -1;
	return x;
}

static void evidence(struct adv_finding *x, const char *key, double v)
{
	if (x->nev < ADV_MAX_EVIDENCE) { x->ev[x->nev].key = key; x->ev[x->nev].v = v; x->nev++; }
}

/* cost and saving per step; severity from the saving (or from `sev` when
 * the saving is not estimated, has = 0) */
static void figures(struct judge *j, struct adv_finding *x, double cost, int has, double saving,
		    enum adv_severity sev_if_none)
{
	x->cost_ns = per_step(j, cost);
	x->cost_pct = pct(j, cost);
	x->has_saving = has;
	x->saving_ns = has ? per_step(j, saving) : 0;
	x->saving_pct = has ? pct(j, saving) : 0;
	x->sev = has ? severity_of(x->saving_pct) : sev_if_none;
}

/* The records of step w. */
static void records_step(struct judge *j, struct adv_finding *x, const struct step_row *w)
{
	x->step_number = w->number;
	x->since_ns = w->s - j->base;
	x->until_ns = w->e - j->base;
}

/* The records of a counted step whose cost for `c` is closest to the mean
 * per step (a typical one). */
static void records_typical(struct judge *j, struct adv_finding *x, enum adv_cause c)
{
	const struct steps_proc *sp = j->p->sp;
	double mean = per_step(j, (double)j->p->in[c].cost_ns), best = -1;
	size_t at = sp->nrows;
	for (size_t k = 0; k < sp->nrows; k++) {
		uint64_t v = ((const struct adv_step *)spill_get(j->p->steps, k))->cost[c];
		const struct step_row *w = step_row(sp, k);
		if (!v || !step_counted(w, 0)) continue;
		double d = fabs((double)v - mean);
		if (best < 0 || d < best) { best = d; at = k; }
	}
	if (at < sp->nrows) records_step(j, x, step_row(sp, at));
}

static void records_range(struct judge *j, struct adv_finding *x, uint64_t a, uint64_t b)
{
	x->step_number = -1;
	x->since_ns = a > j->base ? a - j->base : 0;
	x->until_ns = (b > j->base ? b - j->base : 0) + 1;
}

static int cmp_site_cost(const void *a, const void *b)
{
	const struct adv_group *x = *(const struct adv_group *const *)a, *y = *(const struct adv_group *const *)b;
	if (x->in.cost_ns != y->in.cost_ns) return x->in.cost_ns > y->in.cost_ns ? -1 : 1;
	if (x->in.count != y->in.count) return x->in.count > y->in.count ? -1 : 1;
	int c = strcmp(x->label, y->label);
	/* one label in two groups (two causes, two phases): the groups' order,
	 * so that qsort (not stable) gives one order */
	return c ? c : x < y ? -1 : x > y;
}

/* The top sites of causes c1 (and c2, -1 none) in the counted steps; fills
 * x->sites and the one-line x->where (prefix: what the sites are). */
static void sites(struct judge *j, struct adv_finding *x, int c1, int c2, const char *prefix)
{
	const struct adv_proc *p = j->p;
	const struct adv_group **v = xcalloc(p->ngroups ? p->ngroups : 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < p->ngroups; i++) {
		const struct adv_group *g = &p->groups[i];
		if (((int)g->cause == c1 || (int)g->cause == c2) && (g->in.count || g->in.cost_ns)) v[n++] = g;
	}
	if (n) qsort(v, n, sizeof(*v), cmp_site_cost);
	struct sb b = { 0 };
	if (prefix) sb_printf(&b, "%s", prefix);
	for (size_t i = 0; i < n && x->nsites < ADV_MAX_SITES; i++) {
		const struct adv_group *g = v[i];
		struct adv_site *s = &x->sites[x->nsites++];
		s->label = g->label;
		s->name = g->name;
		s->phase = g->phase ? attribution_name(adv_facts_attribution(j->f), g->phase - 1) : "";
		s->stack = g->stack_id ? stacks_view(adv_facts_stacks(j->f), g->stack_id, g->pid, g->tid) : NULL;
		s->after_site = g->after_site;
		s->dataloader = g->dataloader;
		s->count_per_step = per_step(j, (double)g->in.count);
		s->cost_ns_per_step = per_step(j, (double)g->in.cost_ns);
		s->blocks_min = g->blocks_min == UINT64_MAX ? 0 : g->blocks_min;
		s->blocks_max = g->blocks_max;
		s->threads = g->threads;
		s->occ = g->occ;
		s->pm_pct = g->pm_ns > 0 ? 100.0 * g->pm_w / g->pm_ns : -1;
		sb_printf(&b, "%s%s%s", i ? "; " : prefix ? " " : "", s->after_site ? "after " : "", s->label);
		if (g->has_site && *s->name) sb_printf(&b, " [%s]", s->name);
		if (*s->phase) sb_printf(&b, " in %s", s->phase);
		if (s->dataloader) sb_printf(&b, " (DataLoader frames in its stack)");
		sb_printf(&b, ": %s/step", ms(s->cost_ns_per_step));
	}
	if (n > x->nsites) sb_printf(&b, "; %zu more", n - x->nsites);
	x->where = sb_take(&b);
	free(v);
}

/* The finding of the kernels of cause c in the counted steps (NULL: none
 * there): its figures (the saving with `saves`), count per step, title and
 * sites; *pm: the PM sampling figure of its first site that has one (-1:
 * none; pm may be NULL). */
static struct adv_finding *kernels_finding(struct judge *j, enum adv_rule rule, enum adv_cause c, int saves,
					   const char *title, double *pm)
{
	const struct adv_tally *t = &j->p->in[c];
	if (!t->count) return NULL;
	struct adv_finding *x = finding(j, rule);
	figures(j, x, (double)t->cost_ns, saves, saves ? (double)t->saving_ns : 0, SEV_INFO);
	x->count_per_step = per_step(j, (double)t->count);
	x->title = xstrdup(title);
	sites(j, x, c, -1, NULL);
	double first = -1;
	for (size_t i = 0; i < x->nsites && first < 0; i++) first = x->sites[i].pm_pct;
	if (pm) *pm = first;
	return x;
}

/* "before the first step" / "in warm-up steps" / ... for outside-only findings */
static void where_outside(struct judge *j, struct adv_finding *x, enum adv_cause c)
{
	const struct adv_out *o = &j->p->out[c];
	free(x->where);
	x->where = xstrdup(o->before && o->t.count == o->before ? "before the first step (set-up)" :
			   "outside the counted steps (set-up, warm-up, between or after the steps)");
	records_range(j, x, o->first, o->last);
}

/* ------------------------------------------------------------ rules */
static void rule_input(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	const struct adv_tally *t = &p->in[c];
	if (!t->cost_ns) return;
	struct adv_finding *x = finding(j, rule);
	figures(j, x, (double)t->cost_ns, 1, (double)t->saving_ns, SEV_INFO);
	x->count_per_step = per_step(j, (double)t->count);
	/* steps found at their input copy: the batch is loaded at the end of the step before */
	int at_end = adv_input_at_end(p->sp);
	struct sb b = { 0 };
	if (at_end) {
		x->title = xstrdup("the GPU waits for the next batch between steps");
		sb_printf(&b, "At the end of %" PRIu64 " of %.0f counted steps the GPU sat idle %s per step (%.1f %% of the "
			      "step time) after the step's work, until the host issued the next step's input copy; the host "
			      "spent %s per step (mean) after its last launch call (data loading, the Python loop). The "
			      "steps were found in the trace, each starting at its input copy (no NVTX step range), so the "
			      "loading falls at the end of the step before.", t->count, j->n, ms(x->cost_ns), x->cost_pct,
			  ms(per_step(j, (double)p->post_launch_ns)));
	} else {
		x->title = xstrdup("the GPU waits for the next batch at the start of each step");
		sb_printf(&b, "At the start of %" PRIu64 " of %.0f counted steps the GPU sat idle %s per step (%.1f %% of the "
			      "step time) before the host issued the step's first GPU work; the host spent %s per step (mean) "
			      "before its first launch call (data loading, the Python loop).", t->count, j->n, ms(x->cost_ns),
			  x->cost_pct, ms(per_step(j, (double)p->pre_launch_ns)));
	}
	x->what = sb_take(&b);
	sites(j, x, c, -1, at_end ? "the next step's input copy:" : "first launch of the step:");
	int dl = 0;
	for (size_t i = 0; i < x->nsites; i++) dl |= x->sites[i].dataloader;
	x->change = xstrdup(
		"Load the next batch while the GPU works: DataLoader(num_workers>0, pin_memory=True, "
		"persistent_workers=True, prefetch_factor=2..4); move decoding and augmentation out of the training "
		"loop (or onto the GPU); copy with .to(device, non_blocking=True) from pinned memory.");
	sb_printf(&b, "The GPU idle inside the step %s that no blocking call took (%s/step): with loading overlapped "
		      "with GPU work it is no longer on the step's critical path.",
		  at_end ? "after its last launch call" : "before its first launch call", ms(x->saving_ns));
	if (dl)
		sb_printf(&b, " The stack of %s holds DataLoader frames.",
			  at_end ? "the next step's input copy" : "the first launch");
	x->how = sb_take(&b);
	evidence(x, "pre_launch_ns_per_step", per_step(j, (double)p->pre_launch_ns));
	if (at_end) evidence(x, "post_launch_ns_per_step", per_step(j, (double)p->post_launch_ns));
	evidence(x, "steps_with_idle", (double)t->count);
	records_typical(j, x, c);
}

/* The four blocking-call causes share a shape: one function, four rules. */
static void rule_blocking(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	const struct adv_tally *t = &p->in[c], *o = &p->out[c].t;
	int outside_only = !t->count;
	if (outside_only && (c == AC_SYNC || c == AC_ALLOC || !o->count)) return; /* normal outside steps */
	struct adv_finding *x = finding(j, rule);
	struct sb b = { 0 };
	/* outside only: all figures 0 (t->count is) */
	figures(j, x, outside_only ? 0 : (double)t->cost_ns, 1, outside_only ? 0 : (double)t->saving_ns, SEV_INFO);
	x->count_per_step = per_step(j, (double)t->count);
	sites(j, x, c, -1, NULL);
	double bytes = 0;
	for (size_t i = 0; i < p->ngroups; i++)
		if (p->groups[i].cause == c) bytes += (double)p->groups[i].bytes;
	switch (c) {
	case AC_SYNC:
		x->title = xstrdup("synchronisation inside the step");
		sb_printf(&b, "%.1f synchronising calls per step (waits for the GPU: *Synchronize, blocking device-to-host "
			      "copies such as .item(), .cpu(), print(tensor)) blocked the host %s per step (%.1f %% of "
			      "the step time).", x->count_per_step, ms(x->cost_ns), x->cost_pct);
		x->change = xstrdup(
			"Keep the host ahead of the GPU: move .item()/.cpu()/print(loss) out of the step (accumulate the "
			"loss on the GPU with loss.detach() and read it every N steps, or copy it to pinned memory with "
			"non_blocking=True and read it a step later); remove torch.cuda.synchronize() and "
			"stream/event synchronize calls from the loop (time with CUDA events); check for data-dependent "
			"shapes (nonzero, boolean masks) that force a copy to the host.");
		break;
	case AC_PAGEABLE:
		x->title = xstrdup("async copies from pageable memory (run synchronously)");
		sb_printf(&b, "%.1f async copies per step (%.1f MB per step) moved pageable host memory: CUDA stages them "
			      "through a pinned buffer and the call returns only after that, so they block the host "
			      "(%s per step, %.1f %% of the step time) and cannot overlap GPU work (nsys "
			      "cuda_memcpy_async).", x->count_per_step, per_step(j, bytes) / 1e6, ms(x->cost_ns), x->cost_pct);
		x->change = xstrdup(
			"Pin the host memory: DataLoader(pin_memory=True), or allocate the host buffer once with "
			"torch.empty(..., pin_memory=True) (or tensor.pin_memory()) and reuse it; then copy with "
			".to(device, non_blocking=True).");
		break;
	case AC_SYNC_COPY:
		x->title = xstrdup("synchronous memcpy/memset in the step");
		sb_printf(&b, "%.1f copies or sets per step through a synchronous API (cudaMemcpy, cudaMemset on pinned "
			      "or managed memory; host-to-device copies up to 64 KB left out, as nsys "
			      "cuda_memcpy_sync/cuda_memset_sync do) blocked the host %s per step (%.1f %%).",
			  x->count_per_step, ms(x->cost_ns), x->cost_pct);
		x->change = xstrdup(
			"Use the asynchronous forms on a stream (cudaMemcpyAsync/cudaMemsetAsync from pinned memory; in "
			"PyTorch .to(device, non_blocking=True) from pinned tensors) and synchronise once where the data "
			"is needed.");
		break;
	default:
		x->title = xstrdup("allocation churn inside the step");
		sb_printf(&b, "%.1f allocation or free calls per step (cudaMalloc, cudaFree, cudaHostAlloc, ... ; the "
			      "stream-ordered *Async ones left out) took %s per step (%.1f %%); cudaFree waits for the "
			      "whole device.", x->count_per_step, ms(x->cost_ns), x->cost_pct);
		x->change = xstrdup(
			"Allocate outside the loop and reuse: do not call torch.cuda.empty_cache() in the step, let "
			"PyTorch's caching allocator keep the memory (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
			"if fragmentation is the reason), preallocate buffers; in CUDA code use cudaMallocAsync/"
			"cudaFreeAsync or a pool.");
		break;
	}
	if (outside_only) {
		free(b.s);
		memset(&b, 0, sizeof(b));
		const char *what = c == AC_PAGEABLE ? "async copies from pageable memory" : "synchronous copies or sets";
		sb_printf(&b, "%" PRIu64 " %s, none inside the counted steps: they cost the set-up or warm-up time "
			      "only (%s in all).", o->count, what, ms((double)o->cost_ns));
		x->what = sb_take(&b);
		where_outside(j, x, c);
		sb_printf(&b, "Nothing per step: they happen outside the counted steps.");
		x->how = sb_take(&b);
		evidence(x, "outside_count", (double)o->count);
		return;
	}
	x->what = sb_take(&b);
	if (c == AC_PAGEABLE) {
		int dir = 0;
		double bw = p->pinned_gbps[dir];
		char src[256];
		if (bw > 0 && !p->pinned_from_link[dir])
			snprintf(src, sizeof(src), "measured on this trace's pinned host-to-device copies of >= 1 MiB");
		else if (bw > 0)
			snprintf(src, sizeof(src), "%.1f GB/s assumed (no pinned copy of >= 1 MiB in the trace): what pinned "
				 "copies reach on the %s of the %s (docs/ADVISE.md)", bw, p->link, p->device_name);
		else if (p->link)
			snprintf(src, sizeof(src), "not known (no pinned copy of >= 1 MiB in the trace, no figure for the %s "
				 "of the %s in docs/ADVISE.md): the copy time is assumed unchanged, an underestimate",
				 p->link, p->device_name);
		else
			snprintf(src, sizeof(src), "not known (no pinned copy of >= 1 MiB in the trace, %s not in "
				 "docs/ADVISE.md's table): the copy time is assumed unchanged, an underestimate",
				 *p->device_name ? p->device_name : "no device record");
		sb_printf(&b, "Per copy: min(its call time, the GPU idle its window caused + its copy time - bytes / "
			      "pinned bandwidth); pinned bandwidth %s. Estimate %s per step, of %s blocked.",
			  src, ms(x->saving_ns), ms(x->cost_ns));
		if (bw > 0) evidence(x, "pinned_htod_gb_per_s", bw);
		if (bw > 0 && p->pinned_from_link[dir]) evidence(x, "pinned_htod_from_device_table", 1);
	} else if (c == AC_ALLOC) {
		sb_printf(&b, "Per call: min(the time it blocked the host, the GPU idle from its start until the host next "
			      "waited for the GPU after issuing work again), each idle time given to one call only: the "
			      "host, that much later (a cudaFree that waited also lost its lead of queued work), leaves "
			      "the GPU idle until then. The GPU would otherwise have worked while the host ran ahead: %s "
			      "per step of the %s blocked.", ms(x->saving_ns), ms(x->cost_ns));
	} else {
		sb_printf(&b, "Per call: min(the time it blocked the host, the GPU idle from its start until the first "
			      "work issued after it returned started), each idle time given to one call only. The GPU "
			      "would otherwise have worked while the host ran ahead: %s per step of the %s blocked.",
			  ms(x->saving_ns), ms(x->cost_ns));
	}
	x->how = sb_take(&b);
	evidence(x, "calls_per_step", x->count_per_step);
	evidence(x, "blocked_ns_per_step", x->cost_ns);
	if (bytes > 0) evidence(x, "bytes_per_step", per_step(j, bytes));
	if (o->count) evidence(x, "outside_count", (double)o->count);
	records_typical(j, x, c);
}

static void rule_host_idle(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	const struct adv_tally *t = &p->in[c];
	if (!t->cost_ns) return;
	double share = p->kernels_called ? (double)p->short_kernels / (double)p->kernels_called : 0;
	int launch = share >= ADV_LAUNCH_SHORT_SHARE;
	if (launch != (rule == AR_LAUNCH)) return; /* the same idle is one rule or the other */
	struct adv_finding *x = finding(j, rule);
	const struct step_summary *s = &p->sum;
	double waited = (double)(s->bucket[SB_HOST_WAIT] + s->bucket[SB_SYNC] + s->bucket[SB_LAUNCH]);
	struct sb b = { 0 };
	if (launch) {
		figures(j, x, (double)t->cost_ns, 1, (double)t->saving_ns, SEV_INFO);
		x->title = xstrdup("kernels are shorter than their launch calls");
		sb_printf(&b, "After each step began issuing work the GPU waited for the host %s per step (%.1f %% of the "
			      "step time). %" PRIu64 " of %" PRIu64 " kernels launched in the counted steps (%.1f %%) ran "
			      "shorter than their launch call (median GPU time %s, launch call %s): the host cannot "
			      "issue work as fast as the GPU finishes it. The GPU waited for the host %.1f %% of the step "
			      "time in all (steps buckets host_wait + sync + launch), %s per step of it in gaps of at "
			      "most %s before work already queued (launch latency).", ms(x->cost_ns), x->cost_pct,
			  p->short_kernels, p->kernels_called, 100 * share, ms(s->gpu_med), ms(s->cpu_med), pct(j, waited),
			  ms(per_step(j, (double)s->bucket[SB_LAUNCH])), ms((double)adv_facts_kernel_wait(j->f)));
		x->change = xstrdup(
			"Issue the step's work with fewer, larger launches: capture the step in a CUDA graph "
			"(torch.compile(mode=\"reduce-overhead\"), or torch.cuda.graph / make_graphed_callables with "
			"static input tensors), fuse small operations (torch.compile), use a larger batch per step, "
			"foreach/fused optimizers (fused=True).");
		struct sb h = { 0 };
		sb_printf(&h, "Host idle after the first launch (%s/step) minus the latency a graph still has between "
			      "its kernels (%.1f kernels/step x %s, %s), at most the span of the step's launch calls "
			      "(%s/step): %s per step.", ms(x->cost_ns), per_step(j, (double)p->kernels),
			  ms((double)p->graph_floor_ns),
			  p->floor_measured ? "the median gap before already-queued work in this trace" : "assumed",
			  ms(per_step(j, (double)p->issue_ns)), ms(x->saving_ns));
		x->how = sb_take(&h);
	} else {
		figures(j, x, (double)t->cost_ns, 0, 0, SEV_INFO);
		if (x->cost_pct >= ADV_SEV_MEDIUM_PCT) x->sev = SEV_LOW;
		x->title = xstrdup("the GPU waits for the host between launches");
		sb_printf(&b, "After each step began issuing work the GPU waited for the host %s per step (%.1f %%), yet "
			      "only %.1f %% of the kernels ran shorter than their launch call: the host is busy with other "
			      "work between launches (Python, CPU computation, waiting on something else).",
			  ms(x->cost_ns), x->cost_pct, 100 * share);
		x->change = xstrdup(
			"Profile the host side of the phases listed (py-spy, torch.profiler's CPU view) and move CPU work "
			"out of the step or overlap it with GPU work (a second thread, a DataLoader worker).");
		x->how = xstrdup("Not estimated: what the host does between launches is not in the trace.");
	}
	x->what = sb_take(&b);
	if (launch) {
		/* where: the kernels launched short (sites with stacks), after the
		 * phases the GPU waited in */
		struct adv_finding ph;
		memset(&ph, 0, sizeof(ph));
		sites(j, &ph, c, -1, "GPU idle");
		sites(j, x, AC_SHORT, -1, "; kernels shorter than their calls (call time per step):");
		sb_printf(&b, "%s%s", ph.where, x->where);
		free(x->where);
		free(ph.where);
		x->where = sb_take(&b);
	} else {
		sites(j, x, c, -1, NULL);
	}
	evidence(x, "short_kernels", (double)p->short_kernels);
	evidence(x, "kernels_with_call", (double)p->kernels_called);
	evidence(x, "short_hta", (double)p->short_hta);
	evidence(x, "launch_cpu_median_ns", s->cpu_med);
	evidence(x, "gpu_median_ns", s->gpu_med);
	evidence(x, "graph_floor_ns", (double)p->graph_floor_ns);
	evidence(x, "gpu_waited_for_host_pct", pct(j, waited));
	records_typical(j, x, c);
}

static void rule_fp32(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	double pm;
	struct adv_finding *x = kernels_finding(j, rule, c, 1, "FP32 matrix work without tensor cores", &pm);
	if (!x) return;
	struct sb b = { 0 };
	sb_printf(&b, "%.1f FP32 matrix kernels per step (SIMT sgemm / all-FP32 xmma kernels) ran %s per step (%.1f %% of "
		      "the step time, %.1f %% of the GPU's busy time) without tensor cores.", x->count_per_step,
		  ms(x->cost_ns), x->cost_pct, p->busy ? 100.0 * (double)p->in[c].cost_ns / (double)p->busy : 0);
	if (pm >= 0) sb_printf(&b, " PM sampling: tensor pipes active %.1f %% while they ran.", pm);
	x->what = sb_take(&b);
	x->change = xstrdup(
		"Let matrix products use tensor cores: torch.set_float32_matmul_precision(\"high\") (or "
		"torch.backends.cuda.matmul.allow_tf32 = True) for TF32, or autocast to bfloat16 "
		"(torch.autocast(\"cuda\", dtype=torch.bfloat16)); for convolutions bf16 autocast "
		"(torch.backends.cudnn.allow_tf32 is on by default, yet small convolutions may still pick FP32 "
		"kernels).");
	sb_printf(&b, "Their time x (1 - 1/%.1f), the speedup assumed for this GPU (half its TF32-to-FP32 peak ratio), "
		      "counted only where the GPU was the bottleneck (busy stretches that ended with the host waiting "
		      "for the GPU): %s per step", p->fp32_speedup, ms(x->saving_ns));
	if (p->gpu_side_discarded_ns)
		sb_printf(&b, "; %s per step of GPU-side savings (this rule and under-parallel) left out where the host "
			      "was the bottleneck", ms(per_step(j, (double)p->gpu_side_discarded_ns)));
	sb_printf(&b, ".");
	x->how = sb_take(&b);
	evidence(x, "assumed_speedup", p->fp32_speedup);
	if (pm >= 0) evidence(x, "pm_tensor_active_pct", pm);
	records_typical(j, x, c);
}

static void rule_underpar(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	double pm;
	struct adv_finding *x = kernels_finding(j, rule, c, 1, "kernels with fewer blocks than the GPU has SMs", &pm);
	if (!x) return;
	uint32_t sms = p->dev ? p->dev->sm_count : 0;
	struct sb b = { 0 };
	sb_printf(&b, "%.1f kernels per step had fewer blocks than the GPU's %u SMs and ran %s per step (%.1f %% of the "
		      "step time): the GPU counts as busy (what nvidia-smi calls utilisation) while most SMs idle.",
		  x->count_per_step, sms, ms(x->cost_ns), x->cost_pct);
	if (x->nsites && x->sites[0].blocks_max)
		sb_printf(&b, " The largest: %s with %" PRIu64 "..%" PRIu64 " blocks of %u threads (%.1f %% of the SMs at "
			      "most).", x->sites[0].name, x->sites[0].blocks_min, x->sites[0].blocks_max, x->sites[0].threads,
			  sms ? 100.0 * (double)x->sites[0].blocks_max / sms : 0);
	if (pm >= 0) sb_printf(&b, " PM sampling: SMs active %.1f %% while it ran.", pm);
	x->what = sb_take(&b);
	x->change = xstrdup(
		"Give each launch enough parallel work to fill the GPU: launch a grid of at least as many blocks as "
		"SMs (split the loop of a one-block kernel across blocks, split-K for long reductions), fuse small "
		"kernels, or grow the batch.");
	sb_printf(&b, "Their time x (1 - the share of SMs the grid covers, or the PM-measured SM activity when higher): "
		      "the time if the same work were spread over every SM at the same per-SM speed, counted only where "
		      "the GPU was the bottleneck: %s per step.", ms(x->saving_ns));
	x->how = sb_take(&b);
	if (sms) evidence(x, "sm_count", sms);
	if (pm >= 0) evidence(x, "pm_sm_active_pct", pm);
	records_typical(j, x, c);
}

static void rule_lowocc(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	struct adv_finding *x = kernels_finding(j, rule, c, 0, "kernels at low theoretical occupancy", NULL);
	if (!x) return;
	struct sb b = { 0 };
	sb_printf(&b, "%.1f kernels per step covered every SM but at a theoretical occupancy below %.0f %% (registers or "
		      "shared memory per block limit the resident warps): %s per step (%.1f %%).", x->count_per_step,
		  100 * ADV_LOWOCC_MAX, ms(x->cost_ns), x->cost_pct);
	x->what = sb_take(&b);
	x->change = xstrdup("Only if these kernels are latency-bound: fewer registers per thread (__launch_bounds__, "
			    "-maxrregcount) or less shared memory per block; check with Nsight Compute first.");
	x->how = xstrdup("Not estimated: low occupancy costs only latency-bound kernels (gpuprof stats --report "
			 "occupancy has the limiter per kernel).");
	records_typical(j, x, c);
}

/* The records of the counted step with the most time in bucket b. */
static void records_most(struct judge *j, struct adv_finding *x, int b)
{
	const struct steps_proc *sp = j->p->sp;
	uint64_t best = 0;
	for (size_t k = 0; k < sp->nrows; k++) {
		const struct step_row *w = step_row(sp, k);
		if (!step_counted(w, 0) || w->bucket[b] <= best) continue;
		best = w->bucket[b];
		records_step(j, x, w);
	}
}

static void rule_comm(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	const struct step_summary *s = &p->sum;
	double comm = (double)s->bucket[SB_COMM], compute = (double)s->bucket[SB_COMPUTE];
	if (comm <= 0) return;
	struct adv_finding *x = finding(j, rule);
	double hide = (comm < compute ? comm : compute) * ADV_COMM_HIDE_SHARE;
	figures(j, x, comm, 1, hide, SEV_INFO);
	x->title = xstrdup("exposed communication");
	struct sb b = { 0 };
	sb_printf(&b, "NCCL kernels ran %s per step (%.1f %% of the step time) while no computation kernel ran "
		      "(exposed communication: the steps bucket comm).", ms(x->cost_ns), x->cost_pct);
	x->what = sb_take(&b);
	x->where = xstrdup("NCCL kernels (gpuprof stats --report comm on the merged ranks has the per-rank wait)");
	x->change = xstrdup(
		"Overlap communication with the backward pass: DDP bucketing (bucket_cap_mb), "
		"gradient_as_bucket_view=True, no_sync() with gradient accumulation, FSDP forward/backward prefetch; "
		"if one rank is late (rank skew), balance the input pipeline.");
	sb_printf(&b, "Assumed: half of min(exposed communication, the step's compute time) can be hidden under "
		      "compute (%s per step); not validated on a multi-GPU run.", ms(x->saving_ns));
	x->how = sb_take(&b);
	evidence(x, "exposed_comm_ns_per_step", x->cost_ns);
	records_most(j, x, SB_COMM);
}

/* The steps bucket memory: a copy or memset runs and no kernel.  A copy on
 * the compute stream runs between the kernels; on a second stream (double
 * buffering: the next batch copied while this step computes) it runs beside
 * them on a copy engine. */
static void rule_copies(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	const struct step_summary *s = &p->sum;
	double mem = (double)s->bucket[SB_MEMORY], compute = (double)s->bucket[SB_COMPUTE];
	if (mem <= 0) return;
	struct adv_finding *x = finding(j, rule);
	/* a copy from pageable memory or a synchronous one cannot overlap until
	 * that finding's change is made: no estimate before it */
	int pinned_first = p->in[AC_PAGEABLE].count || p->in[AC_SYNC_COPY].count;
	double hide = (mem < compute ? mem : compute) * ADV_COPY_HIDE_SHARE;
	figures(j, x, mem, !pinned_first, hide, SEV_INFO);
	x->title = xstrdup("copies that no kernel runs beside");
	struct sb b = { 0 };
	sb_printf(&b, "Copies and memsets ran %s per step (%.1f %% of the step time) while no kernel ran (the steps "
		      "bucket memory), beside %s of computation per step.", ms(x->cost_ns), x->cost_pct,
		  ms(per_step(j, compute)));
	x->what = sb_take(&b);
	x->where = xstrdup("copies and memsets in the counted steps (gpuprof stats --report memops has them by kind and "
			   "size)");
	sb_printf(&b, "Copy the next batch on a second stream while this step computes (double buffering: "
		      "pinned host memory, .to(device, non_blocking=True) under torch.cuda.stream(side), the compute "
		      "stream waiting on an event only where it uses the batch; DataLoader(pin_memory=True) with a "
		      "prefetcher).%s",
		  pinned_first ? " The pageable-copy or sync-copy finding comes first: a copy from pageable memory or a "
				 "synchronous one cannot overlap." : "");
	x->change = sb_take(&b);
	if (pinned_first)
		sb_printf(&b, "Not estimated: copies from pageable memory or synchronous ones in the steps cannot overlap "
			      "kernels; make them pinned and asynchronous, then trace again.");
	else
		sb_printf(&b, "Assumed: min(exposed copy time, the step's compute time) hides under compute (%s per "
			      "step): copy engines run beside the SMs; the memory bandwidth a copy takes from the kernels "
			      "is not estimated.", ms(x->saving_ns));
	x->how = sb_take(&b);
	evidence(x, "exposed_copy_ns_per_step", x->cost_ns);
	evidence(x, "compute_ns_per_step", per_step(j, compute));
	records_most(j, x, SB_MEMORY);
}

static void rule_outliers(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct adv_proc *p = j->p;
	const struct step_summary *s = &p->sum;
	const struct steps_proc *sp = p->sp;
	if (!s->noutliers) return;
	double excess = 0, worst = -1;
	size_t nw = 0, slowest = 0;
	struct sb steps = { 0 };
	const char *why = NULL;
	for (size_t k = 0; k < sp->nrows; k++) {
		const struct step_row *w = step_row(sp, k);
		if (!w->outlier) continue;
		double d = (double)(w->e - w->s) - s->time.med;
		if (d > 0) excess += d;
		if (nw < 6) sb_printf(&steps, "%s%" PRId64, nw ? ", " : "", w->number);
		nw++;
		if (d > worst) { worst = d; slowest = k; why = s->why ? s->why[k] : NULL; }
	}
	if (nw > 6) sb_printf(&steps, ", ...");
	if (excess <= 0) { free(steps.s); return; } /* only faster outliers */
	struct adv_finding *x = finding(j, rule);
	figures(j, x, excess, 1, excess, SEV_INFO);
	x->title = xstrdup("outlier steps");
	struct sb b = { 0 };
	sb_printf(&b, "%zu of %.0f counted steps were outliers (further from the median %s than max(3 x 1.4826 x MAD, "
		      "20 %% of it)): steps %s. The slowest: %s.", s->noutliers, j->n, ms(s->time.med), steps.s ? steps.s : "",
		  why && *why ? why : "no single bucket explains it");
	free(steps.s);
	x->what = sb_take(&b);
	x->where = xstrdup("the outlier steps (gpuprof steps --report step_outliers)");
	if (why && strstr(why, "pause"))
		x->change = xstrdup("The host stopped making CUDA calls for a while: a garbage-collector pause (gc.freeze() "
				    "after set-up, gc.disable() in the loop) or periodic host work (logging, "
				    "checkpointing, evaluation) — move it off the training thread.");
	else if (why && strstr(why, "allocation"))
		x->change = xstrdup("Allocation calls in those steps: a new tensor shape or the allocator freeing its "
				    "cache; keep shapes fixed (pad), avoid torch.cuda.empty_cache().");
	else
		x->change = xstrdup("Look at what these steps do differently (the records below; gpuprof steps "
				    "--per-step): periodic work, new shapes, input stalls.");
	sb_printf(&b, "If they took the median time: the time above the median, over the counted steps (%s per step).",
		  ms(x->saving_ns));
	x->how = sb_take(&b);
	evidence(x, "outliers", (double)s->noutliers);
	records_step(j, x, step_row(sp, slowest)); /* slower than the median: excess > 0 */
}

/* out-of-memory: the process's last failed allocation (mem_view.h), with
 * what was live then by site and the device's total; no saving (the job
 * stopped), severity high. */
static void rule_oom(struct judge *j, enum adv_rule rule, enum adv_cause c)
{
	const struct mem_view *mv = adv_facts_mem(j->f);
	const struct mem_failure *fl = NULL;
	for (size_t i = 0; mv && i < mem_view_nfailures(mv); i++)
		if (mem_view_failure(mv, i)->pid == j->p->pid) fl = mem_view_failure(mv, i);
	if (!fl) return;
	struct adv_finding *x = finding(j, rule);
	x->sev = SEV_HIGH;
	x->title = xstrdup("the job ran out of device memory");
	char live[32], total[32], b1[32];
	fmt_bytes(live, sizeof(live), (uint64_t)(fl->live > 0 ? fl->live : 0));
	fmt_bytes(total, sizeof(total), fl->global_mem);
	struct sb b = { 0 };
	sb_printf(&b, "%s failed with out of memory (status %d) at %s with %s of device memory live on device %u "
		      "(of %s; the last of %u failed allocation call%s). Live then by site: ",
		  fl->call, fl->status, ms((double)(fl->t - j->base)), live, fl->dev,
		  fl->global_mem ? total : "an unknown total", fl->failures, fl->failures == 1 ? "" : "s");
	for (size_t i = 0; i < fl->nby_site && i < 5; i++) {
		const struct mem_site *t = &fl->by_site[i];
		fmt_bytes(b1, sizeof(b1), (uint64_t)t->level);
		sb_printf(&b, "%s%s %s (%.1f %%, %s)", i ? "; " : "", t->label, b1,
			  fl->live > 0 ? 100.0 * (double)t->level / (double)fl->live : 0, mem_owner_names[t->owner]);
	}
	if (fl->nby_site > 5) sb_printf(&b, "; %zu more", fl->nby_site - 5);
	if (!fl->nby_site) sb_printf(&b, "none recorded (memory records need --activity=default,memory)");
	char req[160];
	mem_failure_request(fl, req, sizeof(req));
	sb_printf(&b, ". It %s.", req);
	char src[400];
	mem_failure_live_source(fl, src, sizeof(src));
	if (*src) sb_printf(&b, " %c%s.", toupper((unsigned char)src[0]), src + 1);
	const struct mem_series_view *sv = mem_view_find(mv, fl->pid, fl->dev);
	int grew = 0;
	for (size_t i = 0; sv && i < sv->nsites; i++) {
		if (!mem_site_leaks(&sv->sites[i])) continue;
		fmt_bytes(b1, sizeof(b1), (uint64_t)sv->sites[i].growth.slope);
		sb_printf(&b, "%s%s grew %s per step and never fell", grew ? "; " : " Before it: ", sv->sites[i].label, b1);
		grew = 1;
	}
	if (grew) sb_printf(&b, ".");
	x->what = sb_take(&b);
	const struct stack_view *v = fl->stack_id ? stacks_view(adv_facts_stacks(j->f), fl->stack_id, fl->pid, fl->tid) : NULL;
	if (v) {
		struct adv_site *st = &x->sites[x->nsites++];
		st->label = fl->site;
		st->name = fl->call;
		st->phase = "";
		st->stack = v;
		st->occ = -1;
		st->pm_pct = -1;
	}
	sb_printf(&b, "%s [%s]", fl->site, fl->call);
	x->where = sb_take(&b);
	sb_printf(&b, "%sLower the batch size (or the sequence length); recompute activations instead of keeping them "
		      "(torch.utils.checkpoint on the largest blocks); with PyTorch, PYTORCH_CUDA_ALLOC_CONF="
		      "expandable_segments:True when reserved memory is well above allocated (fragmentation); a list or "
		      "dict that keeps tensors across steps (losses, outputs) keeps their memory: keep loss.item() or "
		      "tensor.detach().cpu() instead.",
		  grew ? "Memory grew every step before the failure: find what keeps tensors (the growing site above). " : "");
	x->change = sb_take(&b);
	x->how = xstrdup("Not estimated: the job stopped; the other findings matter once it runs "
			 "(gpuprof stats --report memory_steps shows the memory per step and site).");
	x->since_ns = fl->t - j->base;
	x->until_ns = fl->t - j->base + 1;
	evidence(x, "live_bytes", (double)fl->live);
	evidence(x, "device_total_bytes", (double)fl->global_mem);
	evidence(x, "failed_calls", (double)fl->failures);
	if (fl->has_request && fl->requested) evidence(x, "requested_bytes", (double)fl->requested);
	if (fl->has_request && fl->nvml_total) evidence(x, "device_free_bytes", (double)fl->nvml_free);
	if (fl->from_table) { /* the live by site came from the shim's live table */
		evidence(x, "table_allocations", (double)fl->table_allocs);
		evidence(x, "untabled_bytes", (double)fl->untabled_bytes);
	}
}

/* ------------------------------------------------------------ judge */
/* advise.h's ADV_RULES: each rule's function and the cause it reads */
static const struct {
	void (*judge)(struct judge *j, enum adv_rule rule, enum adv_cause c);
	enum adv_cause cause;
	int steps; /* judges only processes whose steps are judged */
} rule_judge[AR_COUNT] = {
#define RULE_JUDGE(id, name, judge, cause, steps) [id] = { judge, cause, steps },
	ADV_RULES(RULE_JUDGE)
#undef RULE_JUDGE
};

static int cmp_finding(const void *a, const void *b)
{
	const struct adv_finding *x = a, *y = b;
	/* a job that ran out of memory stopped: that comes before any saving */
	if ((x->rule == AR_OOM) != (y->rule == AR_OOM)) return x->rule == AR_OOM ? -1 : 1;
	if (x->sev != y->sev) return x->sev > y->sev ? -1 : 1;
	if (x->saving_ns != y->saving_ns) return x->saving_ns > y->saving_ns ? -1 : 1;
	if (x->cost_ns != y->cost_ns) return x->cost_ns > y->cost_ns ? -1 : 1;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	return (int)x->rule - (int)y->rule;
}

/* Whether p's counted steps are a training step to judge; if not, why, in
 * buf ("" when there are no counted steps at all: the caller says so). */
static int step_judgeable(const struct adv_proc *p, char *buf, size_t n)
{
	*buf = 0;
	if (!p->ncounted) return 0;
	/* kernels only: a model's set-up copies before the first step are no
	 * reason to doubt the steps; a compilation's autotuning kernels are */
	double share = p->kernel_ns_all ? 100.0 * (double)p->kernel_ns_in_steps / (double)p->kernel_ns_all : 100;
	if (p->ncounted < ADV_MIN_STEPS)
		snprintf(buf, n, "too few steps to judge: %zu counted (advise needs %d)", p->ncounted, ADV_MIN_STEPS);
	else if (share < ADV_MIN_STEP_SHARE)
		snprintf(buf, n, "no training step was found: the steps found launched %.1f %% of the process's kernel "
				 "time; a step structure that covers a small part of the GPU time is not the job's step",
			 share);
	return !*buf;
}

void advise_judge(const struct adv_facts *f, uint64_t base, struct adv_result *out)
{
	memset(out, 0, sizeof(*out));
	size_t np = adv_facts_nprocs(f);
	out->procs = xcalloc(np ? np : 1, sizeof(*out->procs));
	for (size_t i = 0; i < np; i++) {
		const struct adv_proc *p = adv_facts_proc(f, i);
		const struct step_plan *pl = p->sp->plan;
		struct adv_proc_summary *ps = &out->procs[out->nprocs++];
		ps->pid = p->pid;
		ps->rank = p->rank;
		ps->method = step_method_name(pl->method);
		ps->steps_are = pl->what;
		ps->nsteps = p->sp->nrows;
		ps->nwarm = p->sum.nwarm;
		ps->ncounted = p->ncounted;
		ps->noutliers = p->sum.noutliers;
		ps->step_mean_ns = p->ncounted ? (double)p->wall / (double)p->ncounted : 0;
		ps->step_median_ns = p->sum.time.med;
		ps->busy_pct = p->wall ? 100.0 * (double)p->busy / (double)p->wall : 0;
		const uint64_t *bk = p->sum.bucket;
		ps->host_wait_pct = p->wall ? 100.0 * (double)(bk[SB_HOST_WAIT] + bk[SB_SYNC] + bk[SB_LAUNCH]) /
						      (double)p->wall : 0;
		ps->unexplained_pct = p->wall ? 100.0 * (double)p->unexplained_idle_ns / (double)p->wall : 0;
		ps->gpu_work_ns = p->ncounted ? (double)p->launched_ns / (double)p->ncounted : 0;
		ps->runs_ahead = ps->gpu_work_ns > ADV_RUN_AHEAD * ps->step_mean_ns;
		/* shares are of the step time, or of the GPU work launched per step
		 * when the host runs ahead (then that is the pipeline's real step) */
		double basis = ps->runs_ahead ? (double)p->launched_ns : (double)p->wall;
		struct judge j = { f, p, base, (double)p->ncounted, basis, out };
		int judged = step_judgeable(p, ps->not_judged, sizeof(ps->not_judged));
		if (judged) out->njudged++;
		for (int r = 0; r < AR_COUNT; r++)
			if (judged || !rule_judge[r].steps) rule_judge[r].judge(&j, (enum adv_rule)r, rule_judge[r].cause);
	}
	if (out->n) qsort(out->v, out->n, sizeof(*out->v), cmp_finding);
}

static void finding_free(struct adv_finding *x)
{
	free(x->title); free(x->what); free(x->change); free(x->how); free(x->where);
}

void advise_hide_nothing_saved(struct adv_result *res)
{
	size_t o = 0;
	for (size_t i = 0; i < res->n; i++) {
		struct adv_finding *x = &res->v[i];
		if (x->has_saving && x->saving_ns < 500) {
			finding_free(x);
			res->hidden++;
			continue;
		}
		res->v[o++] = *x;
	}
	res->n = o;
}

const char *advise_nothing_judged(const struct adv_result *res)
{
	if (res->njudged) return NULL;
	if (!res->nprocs)
		return res->cut_short ? "nothing to judge: no steps and no GPU work in the intact part of the trace "
					"(it is cut short: the warning on stderr says where)"
				      : "nothing to judge: the trace holds no steps and no GPU work (no process "
					"launched a GPU operation or opened an NVTX range while traced)";
	return "nothing judged: no process has training steps advise can judge (the lines above say why)";
}

void advise_result_free(struct adv_result *res)
{
	for (size_t i = 0; i < res->n; i++) finding_free(&res->v[i]);
	free(res->v);
	free(res->procs);
	memset(res, 0, sizeof(*res));
}
