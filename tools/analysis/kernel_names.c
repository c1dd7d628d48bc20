/* kernel_names.c — see kernel_names.h. */
#include "analysis/kernel_names.h"

#include <stdlib.h>

#include "common/tool.h"

const char *kernel_name(struct kernel_names *kn, uint32_t name_id)
{
	uint64_t *s = u64map_get(&kn->id2name, name_id, MAP_INSERT);
	if (!*s) *s = (uint64_t)(uintptr_t)demangle(tool_str(kn->r, name_id));
	return (const char *)(uintptr_t)*s;
}

void kernel_names_free(struct kernel_names *kn)
{
	for (size_t i = 0; i < kn->id2name.cap; i++)
		if (kn->id2name.used[i]) free((void *)(uintptr_t)kn->id2name.vals[i]);
	u64map_free(&kn->id2name);
}
