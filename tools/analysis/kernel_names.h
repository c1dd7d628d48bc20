/* kernel_names.h — kernel names for humans: the demangled name of a
 * kernel's string id, demangled once per id. */
#ifndef GPUPROF_TOOL_KERNEL_NAMES_H
#define GPUPROF_TOOL_KERNEL_NAMES_H

#include <stdint.h>

#include "gp_trace.h"
#include "common/util.h"

/* Zero-initialised plus .r = the reader. */
struct kernel_names { gp_reader *r; u64map id2name; };

/* Demangled name of string `name_id` ("" for an unknown id); valid until
 * kernel_names_free. */
const char *kernel_name(struct kernel_names *kn, uint32_t name_id);
void kernel_names_free(struct kernel_names *kn);

#endif
