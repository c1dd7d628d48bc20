/* kernel_names.c — see kernel_names.h. */
#include "analysis/gpu/kernel_names.h"

#include <stdlib.h>

#include "common/tool.h"

/* A name id's forms, each made when first asked: [NAME_BASE] name_base's,
 * [NAME_FULL] name_full's, and in the place of NAME_MANGLED (the string as
 * recorded: nothing to make) demangle's. */
#define DEMANGLED NAME_MANGLED
struct kname { char *form[3]; };

static const char *form_of(struct kernel_names *kn, uint32_t name_id, int i)
{
	static char *(*const make[3])(const char *) = { [NAME_BASE] = name_base, [NAME_FULL] = name_full,
							[DEMANGLED] = demangle };
	uint64_t *s = u64map_get(&kn->id2name, name_id, MAP_INSERT);
	if (!*s) *s = (uint64_t)(uintptr_t)xcalloc(1, sizeof(struct kname));
	struct kname *k = (struct kname *)(uintptr_t)*s;
	if (!k->form[i]) k->form[i] = make[i](tool_str(kn->r, name_id));
	return k->form[i];
}

const char *kernel_name(struct kernel_names *kn, uint32_t name_id) { return form_of(kn, name_id, NAME_FULL); }

const char *kernel_name_demangled(struct kernel_names *kn, uint32_t name_id)
{
	return form_of(kn, name_id, DEMANGLED);
}

const char *kernel_name_form(struct kernel_names *kn, uint32_t name_id, enum name_form form)
{
	return form == NAME_MANGLED ? tool_str(kn->r, name_id) : form_of(kn, name_id, form);
}

void kernel_names_free(struct kernel_names *kn)
{
	for (size_t i = 0; i < kn->id2name.cap; i++)
		if (kn->id2name.used[i]) {
			struct kname *k = (struct kname *)(uintptr_t)kn->id2name.slot[i].val;
			for (int f = 0; f < 3; f++) free(k->form[f]);
			free(k);
		}
	u64map_free(&kn->id2name);
}
