/* gps_cupti_graphs.c — see gps_cupti_graphs.h.  CUPTI hands graph resource
 * callbacks a CUpti_GraphData (through CUpti_ResourceData's
 * resourceDescriptor): node and graph for a made node, and originalNode for
 * a copy.  Ids come from cuptiGetGraphNodeId / cuptiGetGraphId (optional
 * functions: without them no records, and the tools keep graph kernels on
 * the graph launch). */
#include <cupti.h>
#include <string.h>

#include "core/gps_core.h"
#include "features/gps_stacks.h"
#include "nvidia/gps_cupti_fns.h"
#include "nvidia/gps_cupti_graphs.h"

static int graphs_on;

int gps_cupti_graphs_cbid(uint32_t cbid)
{
	return cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED;
}

int gps_cupti_graphs_bind(int (*enable)(uint32_t cbid))
{
	/* the records serve stacks only; a CUPTI without the id functions
	 * gives nothing to join */
	/* GPUPROF_GRAPH_SITES (default on with stacks since the H200 runs of
	 * 2026-12-03/04: docs/STACKS.md "CUDA graphs"); 0 keeps the resource
	 * callbacks for graph nodes off */
	if (!gps.cfg.graph_sites || !gps_stacks_on || !gps_p_cuptiGetGraphNodeId || !gps_p_cuptiGetGraphId)
		return 0;
	if (enable(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) || enable(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED))
		return 0;
	graphs_on = 1;
	return 1;
}

void gps_cupti_graphs_on_node(uint32_t cbid, const void *graph_data)
{
	const CUpti_GraphData *g = graph_data;
	if (!graphs_on || !g || !g->node)
		return;
	uint64_t node = 0, origin = 0;
	uint32_t graph = 0;
	if (GPS_CUPTI_QUIET(cuptiGetGraphNodeId, g->node, &node) != CUPTI_SUCCESS || !node)
		return;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED &&
	    (!g->originalNode || GPS_CUPTI_QUIET(cuptiGetGraphNodeId, g->originalNode, &origin) != CUPTI_SUCCESS ||
	     !origin))
		return; /* a copy of nothing known: the tools keep the launch's stack */
	if (g->graph && GPS_CUPTI_QUIET(cuptiGetGraphId, g->graph, &graph) != CUPTI_SUCCESS)
		graph = 0;
	gp_recorder *rec = gps_rec(GPS_REC_CUDA);
	if (!rec)
		return;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_GRAPH_NODE;
	r.u.graph_node = (gp_rec_graph_node){
		.ts_ns = gps_now(),
		.graph_id = graph,
		.node_id = node,
		.origin_node_id = origin,
		.node_type = (uint32_t)g->nodeType,
	};
	gp_emit(rec, &r);
}
