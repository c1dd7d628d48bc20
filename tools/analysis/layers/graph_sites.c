/* graph_sites.c — see graph_sites.h. */
#include "analysis/layers/graph_sites.h"

#include <stdlib.h>

#include "common/util.h"

struct node {
	uint32_t pid, tid, stack_id;
	uint64_t id, origin, ts;
	uint32_t next_waiting; /* index + 1 of the next node of its thread waiting for its call; 0 none */
};

struct thread_state {
	uint64_t s, e;           /* the thread's last call with a stack */
	uint32_t stack_id;       /* 0: none yet */
	uint32_t waiting;        /* index + 1 of the first waiting node, 0 none */
};

struct graph_sites {
	u64map node_idx;         /* pid ^ node id -> index + 1 (entries checked on find) */
	struct node *v; size_t n, cap;
	u64map thread_idx;       /* pid << 32 | tid -> index + 1 into threads */
	struct thread_state *threads; size_t nthreads, cthreads;
	size_t nwaiting;         /* nodes waiting for a call, all threads */
};

static uint64_t node_key(uint32_t pid, uint64_t id) { return ((uint64_t)pid << 40) ^ id; }

struct graph_sites *graph_sites_new(void)
{
	struct graph_sites *g = xcalloc(1, sizeof(*g));
	u64map_init(&g->node_idx);
	u64map_init(&g->thread_idx);
	return g;
}

void graph_sites_free(struct graph_sites *g)
{
	if (!g) return;
	u64map_free(&g->node_idx);
	u64map_free(&g->thread_idx);
	free(g->v);
	free(g->threads);
	free(g);
}

static struct thread_state *thread_of(struct graph_sites *g, uint32_t pid, uint32_t tid, int insert)
{
	static const struct thread_state none;
	uint64_t key = ((uint64_t)pid << 32) | tid;
	if (!insert && !u64map_get(&g->thread_idx, key, MAP_FIND)) return NULL;
	return VEC_KEYED(&g->thread_idx, key, g->threads, g->nthreads, g->cthreads, &none);
}

void graph_sites_api(struct graph_sites *g, uint32_t pid, const gp_rec_api *a)
{
	/* calls without a stack matter only to nodes waiting for their call */
	if (!a->stack_id && !g->nwaiting) return;
	struct thread_state *t = thread_of(g, pid, a->tid, a->stack_id != 0);
	if (!t) return;
	if (a->stack_id) {
		t->s = a->start_ns;
		t->e = a->end_ns;
		t->stack_id = a->stack_id;
	}
	/* The thread's waiting nodes were made before this call's exit.  A
	 * call with a stack takes those inside it; a node before the call's
	 * start had no recorded call around it (that call would have come
	 * first).  A node inside a call without a stack waits on: that call
	 * may be nested in a launch whose record comes next. */
	uint32_t *link = &t->waiting;
	while (*link) {
		struct node *nd = &g->v[*link - 1];
		int inside = nd->ts >= a->start_ns && nd->ts <= a->end_ns;
		if (inside && !a->stack_id) {
			link = &nd->next_waiting;
			continue;
		}
		if (inside) nd->stack_id = a->stack_id;
		*link = nd->next_waiting;
		nd->next_waiting = 0;
		g->nwaiting--;
	}
}

void graph_sites_node(struct graph_sites *g, uint32_t pid, const gp_rec_graph_node *n)
{
	if (!n->node_id) return;
	const struct node nd = { .pid = pid, .tid = n->tid, .id = n->node_id, .origin = n->origin_node_id, .ts = n->ts_ns };
	VEC_PUSH(g->v, g->n, g->cap, nd);
	uint32_t idx = (uint32_t)g->n;
	*u64map_get(&g->node_idx, node_key(pid, n->node_id), MAP_INSERT) = idx;
	if (nd.origin) return; /* a copy: its original's site */
	struct thread_state *t = thread_of(g, pid, n->tid, 1);
	if (t->stack_id && n->ts_ns >= t->s && n->ts_ns <= t->e) {
		g->v[idx - 1].stack_id = t->stack_id; /* its call came first */
		return;
	}
	g->v[idx - 1].next_waiting = t->waiting;
	t->waiting = idx;
	g->nwaiting++;
}

static const struct node *find_node(const struct graph_sites *g, uint32_t pid, uint64_t id)
{
	uint64_t *slot = u64map_get((u64map *)&g->node_idx, node_key(pid, id), MAP_FIND);
	if (!slot || !*slot) return NULL;
	const struct node *nd = &g->v[*slot - 1];
	return nd->pid == pid && nd->id == id ? nd : NULL; /* another (pid, id) with the same key: unknown */
}

int graph_sites_find(const struct graph_sites *g, uint32_t pid, uint64_t node_id, struct graph_site *out)
{
	const struct node *nd = node_id ? find_node(g, pid, node_id) : NULL;
	for (int hop = 0; nd && nd->origin && hop < GRAPH_SITES_MAX_HOPS; hop++) nd = find_node(g, pid, nd->origin);
	if (!nd || nd->origin || !nd->stack_id) return 0;
	out->tid = nd->tid;
	out->stack_id = nd->stack_id;
	return 1;
}

int graph_sites_rebase(const struct graph_sites *g, const struct gpu_op *op, struct gpu_op *out)
{
	struct graph_site site;
	if (!g || op->kind != OP_KERNEL || !op->graph_node || !graph_sites_find(g, op->pid, op->graph_node, &site))
		return 0;
	*out = *op;
	out->tid = site.tid;
	out->stack_id = site.stack_id;
	out->has_call = 1;
	out->graph = 0;
	return 1;
}
