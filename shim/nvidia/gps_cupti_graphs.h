/* gps_cupti_graphs.h — CUDA graph nodes for call stacks (GPUPROF_STACKS;
 * nvidia/gps_cupti_graphs.c): one GP_REC_GRAPH_NODE per node a graph gets
 * (stream capture, cudaGraphAdd*Node) or a node copied by instantiation,
 * so the tools can give a replayed kernel the stack of the launch that was
 * captured into its node (docs/FORMAT.md "CUDA graph nodes").  Graph
 * building is rare: no cost on any launch, inside a capture or outside. */
#ifndef GPS_CUPTI_GRAPHS_H
#define GPS_CUPTI_GRAPHS_H

#include <stdint.h>

/* At CUPTI bind, after the stacks' bind: with stacks on and CUPTI's node
 * and graph id functions there, turns on the two resource callbacks
 * (enable(cbid) turns on one).  Returns 1 when they are on. */
int gps_cupti_graphs_bind(int (*enable)(uint32_t cbid));
/* 1 for the resource callbacks this module takes. */
int gps_cupti_graphs_cbid(uint32_t cbid);
/* Such a callback, inside gps_enter: its record.  graph_data is CUPTI's
 * CUpti_GraphData (the resource data's resourceDescriptor); NULL ignored. */
void gps_cupti_graphs_on_node(uint32_t cbid, const void *graph_data);

#endif
