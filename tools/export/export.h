/* export.h — the export formats; each returns a gpuprof exit code. */
#ifndef GPUPROF_TOOL_EXPORT_H
#define GPUPROF_TOOL_EXPORT_H

/* Perfetto/Chrome JSON: what to write. */
struct perfetto_opts {
	int strict;      /* exit 2 on a truncated trace */
	int gzip;        /* gzip the output (also when OUT ends in ".gz") */
	int summary;     /* the summarised timeline: step slices and counters */
};
int export_perfetto(const char *in, const char *out, const struct perfetto_opts *o);
int export_sqlite(const char *in, const char *out, int strict);

/* folded stacks: what a stack's line weighs */
enum folded_weight {
	FOLDED_GPU_TIME,    /* ns of kernels + memcpy + memset launched from it */
	FOLDED_KERNEL_TIME, /* ns of kernels only */
	FOLDED_LAUNCHES,    /* number of launch calls */
};
int export_folded(const char *in, const char *out, int strict, enum folded_weight weight);

#endif
