/* kernel_names.c — see kernel_names.h. */
#include "analysis/gpu/kernel_names.h"

#include <stdlib.h>

#include "common/tool.h"

struct kname { char *full, *base, *dem; };

static struct kname *lookup(struct kernel_names *kn, uint32_t name_id)
{
	uint64_t *s = u64map_get(&kn->id2name, name_id, MAP_INSERT);
	if (!*s) *s = (uint64_t)(uintptr_t)xcalloc(1, sizeof(struct kname));
	return (struct kname *)(uintptr_t)*s;
}

const char *kernel_name(struct kernel_names *kn, uint32_t name_id)
{
	struct kname *k = lookup(kn, name_id);
	if (!k->full) k->full = name_full(tool_str(kn->r, name_id));
	return k->full;
}

const char *kernel_name_demangled(struct kernel_names *kn, uint32_t name_id)
{
	struct kname *k = lookup(kn, name_id);
	if (!k->dem) k->dem = demangle(tool_str(kn->r, name_id));
	return k->dem;
}

const char *kernel_name_form(struct kernel_names *kn, uint32_t name_id, enum name_form form)
{
	if (form == NAME_MANGLED) return tool_str(kn->r, name_id);
	if (form == NAME_FULL) return kernel_name(kn, name_id);
	struct kname *k = lookup(kn, name_id);
	if (!k->base) k->base = name_base(tool_str(kn->r, name_id));
	return k->base;
}

void kernel_names_free(struct kernel_names *kn)
{
	for (size_t i = 0; i < kn->id2name.cap; i++)
		if (kn->id2name.used[i]) {
			struct kname *k = (struct kname *)(uintptr_t)kn->id2name.slot[i].val;
			free(k->full); free(k->base); free(k->dem); free(k);
		}
	u64map_free(&kn->id2name);
}
