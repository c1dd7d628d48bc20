/* gp_record.c — per-type facts from GP_REC_TYPES (names, struct sizes) and
 * the record's primary timestamp. */
#include <stddef.h>
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

/* gp_rec_time (gp_format.h) relies on it: every timed type has its primary
 * timestamp first in its struct. */
_Static_assert(GP_REC_TYPE_MAX <= 32, "GP_TIMED_TYPES is a 32-bit mask");
#define AT_START_(m) _Static_assert(offsetof(union gp_rec_body, m) == 0, #m " is not first")
AT_START_(api.start_ns);
AT_START_(kernel.start_ns);
AT_START_(memcpy.start_ns);
AT_START_(memset.start_ns);
AT_START_(nvtx_range.start_ns);
AT_START_(nvtx_mark.ts_ns);
AT_START_(sync.start_ns);
AT_START_(memory.ts_ns);
AT_START_(dropped.ts_ns);
AT_START_(clock.trace_ns);
AT_START_(counter.ts_ns);
AT_START_(module.ts_ns);
AT_START_(window.start_ns);
AT_START_(graph_node.ts_ns);
AT_START_(alloc_fail.ts_ns);
#undef AT_START_

GP_API uint64_t gp_record_time(const gp_record *r)
{
	return gp_rec_time(r);
}
