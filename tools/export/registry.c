/* registry.c — the formats of `gpuprof export`, in help order.  The
 * dispatch, `export --help`, the format lists of its messages and the line
 * of `gpuprof --help` all come from this list.  Adding a format: its file
 * in export/ (the entry point of export.h's shape) and its entry here. */
#include <stdio.h>
#include <string.h>

#include "export/export.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *const perfetto_alias[] = { "chrome", "json", NULL };

const struct export_format export_formats[] = {
	{ "perfetto", perfetto_alias, "Perfetto/Chrome JSON",
	  "  --format perfetto  Chrome trace-event JSON for ui.perfetto.dev and\n"
	  "                     chrome://tracing: CPU threads with API calls and NVTX\n"
	  "                     ranges, one track per GPU stream (process \"GPU N\"), flow\n"
	  "                     arrows launch -> kernel/memcpy/memset, counters.\n"
	  "                     Timestamps: us since the trace start, ns precision.\n"
	  "                     --format chrome and --format json are the same.\n"
	  "  --summary          perfetto only: a timeline of a whole run that opens in the\n"
	  "                     UI: steps (outermost NVTX push/pop ranges) as slices and,\n"
	  "                     per GPU, kernel/copy time (%) and kernels/s in ~2000 time\n"
	  "                     buckets, API calls/s per process; no single calls or kernels\n"
	  "  --gzip             perfetto only: gzip the output (also when OUT ends in .gz)\n",
	  EXPORT_TAKES_SELECTION | EXPORT_TAKES_SUMMARY | EXPORT_TAKES_GZIP | EXPORT_TAKES_STDOUT, "file",
	  export_perfetto },
	{ "sqlite", NULL, "SQLite",
	  "  --format sqlite    SQLite database with nsys-like tables\n"
	  "                     (CUPTI_ACTIVITY_KIND_KERNEL, ..._RUNTIME, NVTX_EVENTS, ...);\n"
	  "                     times in ns since the trace start.\n",
	  EXPORT_TAKES_SELECTION, "file", export_sqlite },
	{ "parquet", NULL, "Parquet",
	  "  --format parquet   the same tables, one Parquet file each in the directory\n"
	  "                     OUT (OUT/TABLE.parquet, made if missing; ZSTD) for DuckDB\n"
	  "                     and other Parquet readers: the same SQL runs on both\n"
	  "  --row-group N      parquet only: rows per row group (default " STR(EXPORT_PARQUET_ROW_GROUP) ")\n",
	  EXPORT_TAKES_SELECTION | EXPORT_TAKES_ROW_GROUP, "directory", export_parquet },
	{ "csv", NULL, "CSV",
	  "  --format csv       the same tables as CSV (RFC 4180: a header row, NULL an\n"
	  "                     empty field), one file each in the directory OUT\n"
	  "                     (OUT/TABLE.csv, made if missing) for pandas, DuckDB and\n"
	  "                     spreadsheets\n"
	  "  --table NAME       csv only: that table alone, to the file OUT or '-' stdout\n",
	  EXPORT_TAKES_SELECTION | EXPORT_TAKES_TABLE, "directory", export_csv },
	{ "folded", NULL, "folded stacks",
	  "  --format folded    folded stacks of the launch calls (\"root;...;leaf WEIGHT\"\n"
	  "                     per line) for flamegraph.pl and speedscope; needs a trace\n"
	  "                     recorded with --stacks.  Python frames \"func (file:line)\".\n"
	  "  --weight W         folded only: gpu-time (default: ns of kernels, memcpys\n"
	  "                     and memsets launched), kernel-time (ns of kernels), or\n"
	  "                     launches (number of launch calls)\n"
	  "  --site RULE        folded only: each stack up to its launch site's frame\n"
	  "                     (user, inner, or a file-path GLOB as in stats), or\n"
	  "                     `layer`: the model-layer path, as stats --report layers\n",
	  EXPORT_TAKES_WEIGHT | EXPORT_TAKES_SITE | EXPORT_TAKES_STDOUT, "file", export_folded },
	{ NULL, NULL, NULL, NULL, 0, NULL, NULL },
};

const struct export_format *export_format_find(const char *name)
{
	for (const struct export_format *f = export_formats; f->name; f++) {
		if (!strcmp(name, f->name)) return f;
		for (const char *const *a = f->alias; a && *a; a++)
			if (!strcmp(name, *a)) return f;
	}
	return NULL;
}

const char *export_format_names(char *buf, size_t n, unsigned mask, unsigned want, const char *last, int titles)
{
	size_t k = 0, l = 0;
	for (const struct export_format *f = export_formats; f->name; f++) k += (f->takes & mask) == want;
	if (n) buf[0] = 0;
	size_t i = 0;
	for (const struct export_format *f = export_formats; f->name && l < n; f++) {
		if ((f->takes & mask) != want) continue;
		l += (size_t)snprintf(buf + l, n - l, "%s%s", i == 0 ? "" : i + 1 == k ? last : ", ",
				      titles ? f->title : f->name);
		i++;
	}
	return buf;
}
