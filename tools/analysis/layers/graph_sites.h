/* graph_sites.h — where the nodes of CUDA graphs were captured
 * (docs/STACKS.md "CUDA graphs"), from the trace's GP_REC_GRAPH_NODE
 * records (format 1.3, written with --stacks; docs/FORMAT.md "CUDA graph
 * nodes") and its API records: a node gets the call of its thread with a
 * stack whose [start, end] holds its time, a copy its original's (at most
 * GRAPH_SITES_MAX_HOPS back).  graph_sites_find gives a graph kernel's
 * capture site, or says it is not known: the caller then keeps the graph
 * launch call (no guess).
 *
 * Feed it every API and GRAPH_NODE record as the driver reads them (time
 * order across sources, each thread's records in the order it wrote them:
 * a node's record comes before its launch call's, written at the call's
 * exit; the other order is taken too).  Memory: one entry per graph node,
 * plus per thread the last call with a stack and the nodes waiting for
 * their call (at most those made since the thread's last API record). */
#ifndef GPUPROF_ANALYSIS_LAYERS_GRAPH_SITES_H
#define GPUPROF_ANALYSIS_LAYERS_GRAPH_SITES_H

#include <stdint.h>

#include "gp_trace.h"
#include "analysis/join/opjoin.h"

#define GRAPH_SITES_MAX_HOPS 16

struct graph_site {
	uint32_t tid;      /* the thread of the capture's launch call */
	uint32_t stack_id; /* its stack (> 0) */
};

struct graph_sites;

struct graph_sites *graph_sites_new(void);
void graph_sites_free(struct graph_sites *g); /* NULL ok */
/* An API record of process pid (tid: a->tid). */
void graph_sites_api(struct graph_sites *g, uint32_t pid, const gp_rec_api *a);
/* A GRAPH_NODE record of process pid. */
void graph_sites_node(struct graph_sites *g, uint32_t pid, const gp_rec_graph_node *n);
/* 1 and *out: the capture site of node node_id of pid; 0: not known. */
int graph_sites_find(const struct graph_sites *g, uint32_t pid, uint64_t node_id, struct graph_site *out);
/* The rule every report applies to a graph's kernel (stats --report layers
 * and launch_sites, export --format folded): 1 and *out = op as if the
 * launch call captured into its node had launched it (that call's thread
 * and stack; graph 0); 0 when op is not a graph kernel or its capture is not
 * known (g NULL: none known) — the caller keeps op as it is. */
int graph_sites_rebase(const struct graph_sites *g, const struct gpu_op *op, struct gpu_op *out);

#endif
