/* export.h — the export formats and their registry (registry.c): each
 * format's entry point returns a gpuprof exit code. */
#ifndef GPUPROF_EXPORT_EXPORT_H
#define GPUPROF_EXPORT_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/steps/selection.h"

struct site_rule;

/* folded stacks: what a stack's line weighs */
enum folded_weight {
	FOLDED_GPU_TIME,    /* ns of kernels + memcpy + memset launched from it */
	FOLDED_KERNEL_TIME, /* ns of kernels only */
	FOLDED_LAUNCHES,    /* number of launch calls */
};

/* What an export writes (zero: everything, times since the trace start);
 * each format reads the options its registry entry takes. */
struct export_opts {
	const struct selection *sel; /* the records kept (selection_keeps); NULL: all */
	int abs_time;                /* times on the trace clock, not since the trace start */
	int gzip;                    /* perfetto: gzip the output (also when OUT ends in ".gz") */
	int summary;                 /* perfetto: the summarised timeline: step slices and counters */
	uint32_t row_group;          /* parquet: rows per row group; 0: EXPORT_PARQUET_ROW_GROUP */
	enum folded_weight weight;   /* folded: what a stack's line weighs */
	/* folded: NULL, whole stacks; else each stack from the root to its
	 * site's frame (--site user/inner/GLOB), or its layer path (--site
	 * layer: analysis/layers/layer_attr.h, the rows of `stats --report layers`) */
	const struct site_rule *site;
	const char *table;           /* csv: the one table written to OUT (a file or '-'); NULL: all, OUT a directory */
};

/* Rows per row group of the Parquet export: DuckDB's own default is
 * 122,880; memory holds one row group of each table, compressed. */
#define EXPORT_PARQUET_ROW_GROUP 131072

int export_perfetto(const char *in, const char *out, int strict, const struct export_opts *o);
int export_sqlite(const char *in, const char *out, int strict, const struct export_opts *o);
/* the SQLite export's tables as DIR/TABLE.parquet, one file each */
int export_parquet(const char *in, const char *dir, int strict, const struct export_opts *o);
int export_folded(const char *in, const char *out, int strict, const struct export_opts *o);
/* the SQLite export's tables as DIR/TABLE.csv, or one table (o->table) */
int export_csv(const char *in, const char *out, int strict, const struct export_opts *o);

/* ---------------------------------------------------------------- registry */
/* The options of `gpuprof export` a format takes (besides --format, -o,
 * --strict). */
enum {
	EXPORT_TAKES_SELECTION = 1 << 0, /* --since, --until, --steps, --range, --abs-time */
	EXPORT_TAKES_SUMMARY = 1 << 1,
	EXPORT_TAKES_GZIP = 1 << 2,
	EXPORT_TAKES_ROW_GROUP = 1 << 3,
	EXPORT_TAKES_WEIGHT = 1 << 4,
	EXPORT_TAKES_SITE = 1 << 5,
	EXPORT_TAKES_STDOUT = 1 << 6,    /* -o - */
	EXPORT_TAKES_TABLE = 1 << 7,     /* --table NAME: OUT is that table's file, '-' stdout */
};

struct export_format {
	const char *name;          /* --format NAME */
	const char *const *alias;  /* other names for it, NULL-terminated; NULL none */
	const char *title;         /* in `gpuprof --help`: "SQLite" */
	const char *help;          /* its lines of `export --help`: --format NAME and its own options */
	unsigned takes;            /* EXPORT_TAKES_* */
	const char *out_is;        /* what OUT names when it is not stdout: "file", "directory" */
	int (*run)(const char *in, const char *out, int strict, const struct export_opts *o);
};
/* The formats, in help order, ending with a NULL name.  registry.c is the
 * one list: the dispatch, the help texts and the messages come from it. */
extern const struct export_format export_formats[];
/* The format called `name` (or one of its aliases); NULL when none is. */
const struct export_format *export_format_find(const char *name);
/* The names (titles: their titles) of the formats whose (takes & mask) ==
 * want, joined by ", " and `last` before the last ("perfetto, sqlite and
 * parquet"), into buf; returns buf. */
const char *export_format_names(char *buf, size_t n, unsigned mask, unsigned want, const char *last, int titles);

#endif
