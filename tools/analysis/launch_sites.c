/* launch_sites.c — aggregates the joined launches by site.  A site's
 * "innermost frame" is the one under which most of its kernel time was
 * launched (ties: the first seen). */
#include <stdlib.h>
#include <string.h>

#include "analysis/launch_sites.h"
#include "common/util.h"

const struct col launch_sites_cols[LAUNCH_SITES_NCOLS] = {
	{ "Time (%)", "time_pct", COL_F1 }, { "Kernel Time (ns)", "kernel_ns", COL_INT },
	{ "Kernels", "kernels", COL_INT }, { "Launches", "launches", COL_INT },
	{ "Avg Kernel (ns)", "avg_kernel_ns", COL_F1 }, { "Memop Time (ns)", "memop_ns", COL_INT },
	{ "Memops", "memops", COL_INT }, { "Site", "site", COL_STR },
	{ "Innermost Frame", "innermost", COL_STR },
};

const char launch_sites_note[] =
	" Time (%) = kernel time launched from the site / all kernel time.  Site = the innermost\n"
	"   Python frame outside the stdlib and site-/dist-packages, else the innermost Python\n"
	"   frame, else the innermost native frame outside libcudart/libcuda/libcupti.\n"
	"   Launches = launch calls (kernel, graph, memcpy, memset) recorded there.\n";

struct site {
	const char *key, *label;
	uint64_t kernel_ns, kernels, launches, memop_ns, memops;
	const char *inner; uint64_t inner_ns; /* best innermost frame so far */
};

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	if (x->kernel_ns != y->kernel_ns) return x->kernel_ns > y->kernel_ns ? -1 : 1;
	if (x->memop_ns != y->memop_ns) return x->memop_ns > y->memop_ns ? -1 : 1;
	if (x->launches != y->launches) return x->launches > y->launches ? -1 : 1;
	int c = strcmp(x->label, y->label);
	return c ? c : strcmp(x->key, y->key);
}

void launch_sites_fill(struct report *rep, struct stacks *st, const struct launch_join *lj)
{
	size_t n;
	const struct joined_launch *ls = launch_join_all(lj, &n);
	strmap idx, pair;   /* site key -> index; site key + innermost -> kernel ns */
	strmap_init(&idx);
	strmap_init(&pair);
	struct site *sites = NULL;
	size_t nsites = 0, csites = 0;
	uint64_t *pair_ns = NULL;
	size_t npair = 0, cpair = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		const struct joined_launch *l = &ls[i];
		int launched = l->has_api && (l->launch_call || l->kernels || l->memops);
		if (!launched && !l->kernels && !l->memops) continue;
		const char *key, *label, *inner = "";
		const struct stack_view *v = l->stack_id ? stacks_view(st, l->stack_id, l->pid, l->tid) : NULL;
		if (v) { key = v->site_key; label = v->site; inner = v->innermost; }
		else if (l->stack_id) key = label = "(missing stack)";
		else key = label = "(no stack)";
		int is_new;
		size_t *slot = strmap_get(&idx, key, &is_new);
		if (is_new) {
			struct site s;
			memset(&s, 0, sizeof(s));
			s.key = key; s.label = label; s.inner = inner;
			*slot = nsites;
			VEC_PUSH(sites, nsites, csites, s);
		}
		struct site *s = &sites[*slot];
		s->kernel_ns += l->kernel_ns; s->kernels += l->kernels;
		s->memop_ns += l->memop_ns; s->memops += l->memops;
		s->launches += launched;
		total += l->kernel_ns;
		char *pk = xmalloc(strlen(key) + strlen(inner) + 2);
		sprintf(pk, "%s\x01%s", key, inner);
		size_t *ps = strmap_get(&pair, pk, &is_new);
		free(pk);
		if (is_new) { *ps = npair; VEC_PUSH(pair_ns, npair, cpair, 0); }
		pair_ns[*ps] += l->kernel_ns;
		if (pair_ns[*ps] > s->inner_ns) { s->inner_ns = pair_ns[*ps]; s->inner = inner; }
	}
	if (nsites) qsort(sites, nsites, sizeof(*sites), cmp_site);
	for (size_t i = 0; i < nsites; i++) {
		const struct site *s = &sites[i];
		struct cell *c = report_row(rep);
		cell_num(&c[0], total ? 100.0 * (double)s->kernel_ns / (double)total : 0);
		cell_num(&c[1], (double)s->kernel_ns);
		cell_num(&c[2], (double)s->kernels);
		cell_num(&c[3], (double)s->launches);
		if (s->kernels) cell_num(&c[4], (double)s->kernel_ns / (double)s->kernels);
		cell_num(&c[5], (double)s->memop_ns);
		cell_num(&c[6], (double)s->memops);
		cell_str(&c[7], s->label);
		cell_str(&c[8], s->inner);
	}
	free(sites);
	free(pair_ns);
	strmap_free(&idx);
	strmap_free(&pair);
}
