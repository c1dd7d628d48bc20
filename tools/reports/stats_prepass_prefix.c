/* stats_prepass_prefix.c — see stats_prepass_prefix.h. */
#include "reports/stats_prepass_prefix.h"

#include <stdlib.h>

/* An operation (or call: pid PP_CALLS) whose cuts are known at the merge. */
struct pp_pfx_late {
	struct pp_key k;
	uint64_t pid;
	uint64_t dur;
};

void pp_prefix_init(struct pp_prefix *p, int ix, int k, uint64_t to)
{
	*p = (struct pp_prefix){ .ix = ix, .k = k, .to = to, .calls.pid = PP_CALLS };
	u64map_init(&p->pidx);
}

void pp_prefix_free(struct pp_prefix *p)
{
	free(p->pv);
	free(p->late);
	u64map_free(&p->pidx);
}

size_t pp_prefix_proc(struct pp_prefix *p, uint32_t pid)
{
	struct pp_pfx_proc x = { pid, 0, 0, 0, 0 };
	return (size_t)((struct pp_pfx_proc *)VEC_KEYED(&p->pidx, pid, p->pv, p->np, p->cp, &x) - p->pv) + 1;
}

void pp_prefix_add(struct pp_prefix *p, const struct pp_key *k, size_t proc, uint64_t dur)
{
	if (!p->have || pp_key_cmp(k, &p->first) < 0) p->first = *k;
	p->have = 1;
	/* the last slice's: no cut after it */
	if (p->ix + 1 >= p->k) return;
	/* an API record: the longest call, as a process of its own */
	struct pp_pfx_proc *q = proc ? &p->pv[proc - 1] : &p->calls;
	if (k->pmax < p->to) {
		if (!q->folded || dur > q->fold) q->fold = dur;
		q->folded = 1;
	} else {
		/* the slice's keys rise: what it kept of the process came before */
		if (q->any && dur <= q->max) return;
		struct pp_pfx_late x = { *k, q->pid, dur };
		VEC_PUSH(p->late, p->nlate, p->clate, x);
	}
	if (!q->any || dur > q->max) q->max = dur;
	q->any = 1;
}

/* pid's operation (PP_CALLS: a call) dur counts for the cuts from c on
 * that are reached. */
static void raise_from(struct steps_prefix *pf, const int *reached, int k, int c, uint64_t pid, uint64_t dur)
{
	for (; c < k && reached[c]; c++)
		if (pid == PP_CALLS) steps_prefix_raise_call(pf, c, dur);
		else steps_prefix_raise(pf, c, (uint32_t)pid, dur);
}

void pp_prefix_merge(const struct pp_prefix *const *sl, int k, struct steps_prefix *pf)
{
	/* K_c (the header), per cut; reached: it has one */
	struct pp_key *K = xcalloc((size_t)k, sizeof(*K));
	int *reached = xcalloc((size_t)k, sizeof(*reached));
	for (int c = k - 1; c >= 1; c--) {
		if (sl[c]->have) K[c] = sl[c]->first, reached[c] = 1;
		if (c + 1 < k && reached[c + 1] && (!reached[c] || pp_key_cmp(&K[c + 1], &K[c]) < 0))
			K[c] = K[c + 1], reached[c] = 1;
	}
	for (int j = 0; j + 1 < k; j++) {
		const struct pp_prefix *p = sl[j];
		if (p->calls.folded) raise_from(pf, reached, k, j + 1, PP_CALLS, p->calls.fold);
		for (size_t i = 0; i < p->np; i++)
			if (p->pv[i].folded) raise_from(pf, reached, k, j + 1, p->pv[i].pid, p->pv[i].fold);
		for (size_t i = 0; i < p->nlate; i++) {
			const struct pp_pfx_late *x = &p->late[i];
			int c = j + 1;
			while (c < k && reached[c] && pp_key_cmp(&x->k, &K[c]) >= 0) c++;
			raise_from(pf, reached, k, c, x->pid, x->dur);
		}
	}
	free(K);
	free(reached);
}
