/* export.h — the export formats; each returns a gpuprof exit code. */
#ifndef GPUPROF_TOOL_EXPORT_H
#define GPUPROF_TOOL_EXPORT_H

int export_perfetto(const char *in, const char *out, int strict);
int export_sqlite(const char *in, const char *out, int strict);

/* folded stacks: what a stack's line weighs */
enum folded_weight {
	FOLDED_GPU_TIME,    /* ns of kernels + memcpy + memset launched from it */
	FOLDED_KERNEL_TIME, /* ns of kernels only */
	FOLDED_LAUNCHES,    /* number of launch calls */
};
int export_folded(const char *in, const char *out, int strict, enum folded_weight weight);

#endif
