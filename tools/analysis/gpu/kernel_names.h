/* kernel_names.h — kernel names for humans: the forms of a kernel's string
 * id (common/util.h name_full, name_base, demangle), each computed once per
 * id. */
#ifndef GPUPROF_ANALYSIS_GPU_KERNEL_NAMES_H
#define GPUPROF_ANALYSIS_GPU_KERNEL_NAMES_H

#include <stdint.h>

#include "gp_trace.h"
#include "common/tabopt.h"
#include "common/util.h"

/* Zero-initialised plus .r = the reader. */
struct kernel_names { gp_reader *r; u64map id2name; };

/* Full (demangled) name of string `name_id` ("" for an unknown id); valid
 * until kernel_names_free. */
const char *kernel_name(struct kernel_names *kn, uint32_t name_id);
/* The name in form `form` (NAME_MANGLED: the string as recorded). */
const char *kernel_name_form(struct kernel_names *kn, uint32_t name_id, enum name_form form);
/* demangle's form (no scope added to a name it cannot demangle: dump's and
 * the Perfetto export's). */
const char *kernel_name_demangled(struct kernel_names *kn, uint32_t name_id);
void kernel_names_free(struct kernel_names *kn);

#endif
