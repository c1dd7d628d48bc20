/* selection.c — see selection.h. */
#include "analysis/steps/selection.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps/step_index.h"
#include "analysis/steps/steps_pipe.h"
#include "common/tool.h"
#include "common/util.h"

/* a := a intersected with b (both disjoint and ordered); b is freed */
static void intersect(struct ivset *a, struct ivset *b)
{
	struct ivset out = { 0 };
	ivset_intersect(a, b, &out);
	free(a->v);
	free(b->v);
	*a = out;
}

static void what_add(struct selection *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void what_add(struct selection *s, const char *fmt, ...)
{
	size_t l = strlen(s->what);
	if (l && l + 2 < sizeof(s->what)) { strcpy(s->what + l, ", "); l += 2; }
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->what + l, sizeof(s->what) - l, fmt, ap);
	va_end(ap);
}

/* Whether range name `name` is the one asked for: the full name, the
 * message without its domain, or the numbered pattern ('step *'). */
static int name_matches(const char *want, const char *name)
{
	if (!strcmp(want, name)) return 1;
	const char *colon = strchr(name, ':');
	if (colon && !strcmp(want, colon + 1)) return 1;
	if (!strchr(want, '*')) return 0;
	char *pat = step_name_pattern(name);
	int m = 0;
	if (pat) {
		const char *pc = strchr(pat, ':');
		m = !strcmp(want, pat) || (pc && !strcmp(want, pc + 1));
	}
	free(pat);
	return m;
}

/* The steps numbered a..b of each process: from the first one's start to
 * the last one's end (s, e, of the process `plan`) into out; lo, hi: the
 * numbers seen; count: those picked. */
struct step_pick {
	int64_t a, b, lo, hi;
	size_t count, plan;
	uint64_t s, e;
	struct ivset *out;
};

static void pick_plan_end(struct step_pick *p)
{
	if (p->e > p->s) ivset_add(p->out, p->s, p->e);
	p->s = UINT64_MAX;
	p->e = 0;
}

/* steps_bound_fn */
static void pick(void *arg, const struct step_bound *b)
{
	struct step_pick *p = arg;
	int64_t num = b->number;
	uint64_t s = b->s, e = b->e;
	if (b->plan != p->plan) {
		pick_plan_end(p);
		p->plan = b->plan;
	}
	if (num < p->lo) p->lo = num;
	if (num > p->hi) p->hi = num;
	if (num < p->a || num > p->b) return;
	p->count++;
	if (s < p->s) p->s = s;
	if (e > p->e) p->e = e;
}

/* The steps of --steps A:B into *out from each(src, pick, ...) over
 * nplans plans; 0, or -1 (the steps could not be read) or SELECTION_NONE
 * (err) */
static int steps_picked(int (*each)(void *src, struct step_pick *pk), void *src, size_t nplans,
			const struct sel_opts *o, const struct step_detect_opts *dopts, struct ivset *out, char *err,
			size_t n, size_t *count)
{
	struct step_pick pk = { o->step_a, o->step_b, INT64_MAX, INT64_MIN, 0, 0, UINT64_MAX, 0, out };
	if (each(src, &pk)) return -1;
	pick_plan_end(&pk);
	int64_t lo = pk.lo, hi = pk.hi;
	*count = pk.count;
	if (lo > hi) {
		snprintf(err, n, "--steps %s: the trace has no steps%s%s", o->steps_arg,
			 dopts && dopts->range_name ? " named so" : "",
			 nplans ? "" : " (no GPU operations, no NVTX ranges)");
		return SELECTION_NONE;
	}
	if (!*count) {
		snprintf(err, n, "--steps %s: no step numbered so (the steps are numbered %" PRId64 " to %" PRId64 ")",
			 o->steps_arg, lo, hi);
		return SELECTION_NONE;
	}
	ivset_union(out);
	return 0;
}

static int pipe_each(void *src, struct step_pick *pk)
{
	steps_pipe_bounds(src, pick, pk);
	return 0;
}

static int index_each(void *src, struct step_pick *pk) { return step_index_bounds(src, pick, pk); }

/* --steps A:B into *out from the pipe; as steps_picked */
static int steps_intervals(struct steps_pipe *p, const struct sel_opts *o, const struct step_detect_opts *dopts,
			   struct ivset *out, char *err, size_t n, size_t *count)
{
	const char *why = NULL;
	if (!p->steps && steps_pipe_plan_steps(p, &why) < 0) { /* planned by the caller (selection_resolve_pipe) */
		snprintf(err, n, "%s", why);
		return -1;
	}
	/* trace-detected steps are found while the steps analysis streams the
	 * trace: the second pass (unless the caller ran it) */
	if (steps_pipe_trace_planned(p) && !p->steps_done) {
		steps_pipe_join(p, NULL, NULL, NULL);
		if (!gp_reader_recoverable(steps_pipe_pass(p, 2))) {
			snprintf(err, n, "cannot read the trace again for --steps");
			return -1;
		}
		steps_pipe_finish(p);
	}
	return steps_picked(pipe_each, p, step_detect_nplans(p->detect), o, dopts, out, err, n, count);
}

/* --since/--until into s (active); whether --steps or --range is given */
void selection_none(struct selection *s, gp_reader *r)
{
	memset(s, 0, sizeof(*s));
	s->base = gp_reader_header(r)->start_trace_ns;
}

static int resolve_times(struct selection *s, gp_reader *r, const struct sel_opts *o)
{
	selection_none(s, r);
	if (!sel_opts_any(o)) return 0;
	s->active = 1;
	ivset_add(&s->iv, o->have_since ? s->base + o->since : 0,
		  o->have_until && o->until < UINT64_MAX - s->base ? s->base + o->until : UINT64_MAX);
	if (o->have_since || o->have_until) {
		char a[32] = "", b[32] = "";
		if (o->have_since) fmt_dur(a, sizeof(a), o->since);
		if (o->have_until) fmt_dur(b, sizeof(b), o->until);
		what_add(s, "%s%s%s%s%s", o->have_since ? "since " : "", a, o->have_since && o->have_until ? " " : "",
			 o->have_until ? "until " : "", b);
	}
	if (!o->have_steps && !o->range) return 0;
	s->by_steps_or_range = 1;
	return 1;
}

/* --range and --steps into s, from p (pass 1 and the plan of its ranges
 * done), or --steps alone from ix (p NULL); 0, or <0 with err */
static int resolve_pipe(struct selection *s, struct steps_pipe *p, struct step_index *ix, const struct sel_opts *o,
			const struct step_detect_opts *detect, char *err, size_t n)
{
	if (o->range) {
		struct attribution *a = p->attr;
		struct ivset iv = { 0 };
		size_t cnt = 0;
		for (uint32_t i = 0; i < attribution_nranges(a); i++) {
			const struct attr_range x = attribution_range(a, i);
			if (!name_matches(o->range, attribution_name(a, x.name))) continue;
			ivset_add(&iv, x.s, x.e);
			cnt++;
		}
		if (!cnt) {
			snprintf(err, n, "--range: no NVTX range named '%.200s' in the trace", o->range);
			free(iv.v);
			return SELECTION_NONE;
		}
		ivset_union(&iv);
		intersect(&s->iv, &iv);
		what_add(s, "range '%.120s' (%zu)", o->range, cnt);
	}
	if (o->have_steps) {
		struct ivset iv = { 0 };
		size_t cnt = 0;
		int why = p ? steps_intervals(p, o, detect, &iv, err, n, &cnt)
			    : steps_picked(index_each, ix, step_index_nplans(ix), o, detect, &iv, err, n, &cnt);
		if (why < 0) {
			free(iv.v);
			return why;
		}
		intersect(&s->iv, &iv);
		what_add(s, "steps %s (%zu)", o->steps_arg, cnt);
	}
	return 0;
}

int selection_resolve_pipe(struct selection *s, gp_reader *r, const struct sel_opts *o, struct steps_pipe *p,
			   const struct step_detect_opts *detect, char *err, size_t n)
{
	if (!resolve_times(s, r, o)) return 0;
	int ret = resolve_pipe(s, p, NULL, o, detect, err, n);
	if (gp_reader_rewind(r) < 0 && !ret) {
		snprintf(err, n, "cannot read the trace again");
		ret = -1;
	}
	return ret;
}

int selection_resolve_index(struct selection *s, gp_reader *r, const struct sel_opts *o, struct step_index *ix,
			    const struct step_detect_opts *detect, char *err, size_t n)
{
	if (!resolve_times(s, r, o)) return 0;
	return resolve_pipe(s, NULL, ix, o, detect, err, n);
}

int selection_has(const struct selection *s, uint64_t t)
{
	if (!s || !s->active) return 1;
	size_t lo = FIRST_WHERE(k, s->iv.n, s->iv.v[k].e > t); /* the first interval ending after t */
	return lo < s->iv.n && s->iv.v[lo].s <= t;
}

int selection_keeps(const struct selection *s, const gp_record *rec)
{
	if (!s || !s->active) return 1;
	switch (rec->type) {
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET: case GP_REC_NVTX_RANGE:
	case GP_REC_NVTX_MARK: case GP_REC_SYNC: case GP_REC_MEMORY: case GP_REC_DROPPED: case GP_REC_COUNTER:
		return selection_has(s, gp_record_time(rec));
	case GP_REC_WINDOW: {
		uint64_t a = rec->u.window.start_ns, b = rec->u.window.end_ns;
		for (size_t i = 0; i < s->iv.n; i++)
			if (s->iv.v[i].s <= b && a < s->iv.v[i].e) return 1;
		return 0;
	}
	default:
		return 1;
	}
}

int selection_window(const struct selection *s, gp_reader *r)
{
	if (!s || !s->active || !gp_reader_meta_apart(r)) return 0;
	/* nothing timed selected: from == to reads the metadata only */
	uint64_t from = s->iv.n ? s->iv.v[0].s : 0, to = s->iv.n ? s->iv.v[s->iv.n - 1].e : 0;
	int rc = gp_reader_set_time_window(r, from, to);
	return rc < 0 ? rc : 1;
}

void selection_free(struct selection *s)
{
	free(s->iv.v);
	memset(s, 0, sizeof(*s));
}
