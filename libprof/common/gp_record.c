/* gp_record.c — per-type facts from GP_REC_TYPES (names, struct sizes) and
 * the record's primary timestamp. */
#include <string.h>
#include "gp_error.h"
#include "gp_format.h"
#include "gp_record.h"

/* made by a macro: */
/* clang-format off */
static const char *const type_names[GP_REC_TYPE_MAX] = {
#define TYPE_NAME_(NAME, name, value) [GP_REC_##NAME] = #name,
	GP_REC_TYPES(TYPE_NAME_)
#undef TYPE_NAME_
};
/* clang-format on */

GP_API const char *gp_rec_type_name(uint32_t type)
{
	if (type < GP_REC_TYPE_MAX && type_names[type]) return type_names[type];
	return "unknown";
}

GP_API int gp_rec_type_from_name(const char *name)
{
	for (int t = 1; name && t < GP_REC_TYPE_MAX; t++)
		if (type_names[t] && !strcmp(type_names[t], name)) return t;
	return GP_ERR_INVALID;
}

const uint16_t gp_rec_struct_size[GP_REC_TYPE_MAX] = {
#define TYPE_SIZE_(NAME, name, value) [GP_REC_##NAME] = sizeof(gp_rec_##name),
	GP_REC_TYPES(TYPE_SIZE_)
#undef TYPE_SIZE_
};

GP_API int gp_rec_is_meta(uint32_t t)
{
	return t == GP_REC_STRING || t == GP_REC_SOURCE || t == GP_REC_PROCESS || t == GP_REC_THREAD ||
	       t == GP_REC_DEVICE || t == GP_REC_MODULE || t == GP_REC_STACK || t == GP_REC_CLOCK ||
	       t == GP_REC_GRAPH_NODE;
}

GP_API uint64_t gp_record_time(const gp_record *r)
{
	switch (r->type) {
	case GP_REC_API: return r->u.api.start_ns;
	case GP_REC_KERNEL: return r->u.kernel.start_ns;
	case GP_REC_MEMCPY: return r->u.memcpy.start_ns;
	case GP_REC_MEMSET: return r->u.memset.start_ns;
	case GP_REC_NVTX_RANGE: return r->u.nvtx_range.start_ns;
	case GP_REC_NVTX_MARK: return r->u.nvtx_mark.ts_ns;
	case GP_REC_SYNC: return r->u.sync.start_ns;
	case GP_REC_MEMORY: return r->u.memory.ts_ns;
	case GP_REC_DROPPED: return r->u.dropped.ts_ns;
	case GP_REC_CLOCK: return r->u.clock.trace_ns;
	case GP_REC_COUNTER: return r->u.counter.ts_ns;
	case GP_REC_MODULE: return r->u.module.ts_ns;
	case GP_REC_WINDOW: return r->u.window.start_ns;
	case GP_REC_GRAPH_NODE: return r->u.graph_node.ts_ns;
	default: return 0;
	}
}
