/* export.h — the export formats; each returns a gpuprof exit code. */
#ifndef GPUPROF_TOOL_EXPORT_H
#define GPUPROF_TOOL_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/selection.h"

/* What the Perfetto and SQLite exports write (NULL: everything, times
 * since the trace start). */
struct export_opts {
	size_t sz;                   /* sizeof(struct export_opts) */
	const struct selection *sel; /* the records kept (selection_keeps); NULL: all */
	int abs_time;                /* times on the trace clock, not since the trace start */
	int gzip;                    /* perfetto: gzip the output (also when OUT ends in ".gz") */
	int summary;                 /* perfetto: the summarised timeline: step slices and counters */
	uint32_t row_group;          /* parquet: rows per row group; 0: EXPORT_PARQUET_ROW_GROUP */
};

/* Rows per row group of the Parquet export: DuckDB's own default is
 * 122,880; memory holds one row group of each table, compressed. */
#define EXPORT_PARQUET_ROW_GROUP 131072

int export_perfetto(const char *in, const char *out, int strict, const struct export_opts *o);
int export_sqlite(const char *in, const char *out, int strict, const struct export_opts *o);
/* the SQLite export's tables as DIR/TABLE.parquet, one file each */
int export_parquet(const char *in, const char *dir, int strict, const struct export_opts *o);

/* folded stacks: what a stack's line weighs */
enum folded_weight {
	FOLDED_GPU_TIME,    /* ns of kernels + memcpy + memset launched from it */
	FOLDED_KERNEL_TIME, /* ns of kernels only */
	FOLDED_LAUNCHES,    /* number of launch calls */
};
/* site NULL: whole stacks; else each stack from the root to its site's
 * frame (--site user/inner/GLOB), or its layer path (--site layer:
 * analysis/layers.h, the rows of `stats --report layers`) */
struct site_rule;
int export_folded(const char *in, const char *out, int strict, enum folded_weight weight,
		  const struct site_rule *site);

#endif
