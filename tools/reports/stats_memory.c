/* stats_memory.c — `stats --report memory`: device and host memory
 * allocated and freed (GP_REC_MEMORY records, `gpuprof run
 * --activity=default,memory`) per process, device and memory kind, with the
 * peak in use (analysis/memory/mem_usage.h). */
#include <stdlib.h>

#include "analysis/memory/mem_usage.h"
#include "common/util.h"
#include "reports/stats_report.h"

enum {
	MEM_PID, MEM_DEVICE, MEM_ALLOCS, MEM_ALLOC_BYTES, MEM_FREES, MEM_FREE_BYTES, MEM_LARGEST,
	MEM_PEAK, MEM_END, MEM_KIND,
	MEM_NCOLS
};
static const struct col mem_cols[MEM_NCOLS] = {
	[MEM_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [MEM_DEVICE] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[MEM_ALLOCS] = { "Allocs", "allocs", COL_INT, COL_EVERYWHERE },
	[MEM_ALLOC_BYTES] = { "Allocated (B)", "allocated_bytes", COL_INT, COL_EVERYWHERE },
	[MEM_FREES] = { "Frees", "frees", COL_INT, COL_EVERYWHERE },
	[MEM_FREE_BYTES] = { "Freed (B)", "freed_bytes", COL_INT, COL_EVERYWHERE },
	[MEM_LARGEST] = { "Largest Alloc (B)", "largest_alloc_bytes", COL_INT, COL_EVERYWHERE },
	[MEM_PEAK] = { "Peak In Use (B)", "peak_in_use_bytes", COL_INT, COL_EVERYWHERE },
	[MEM_END] = { "In Use at End (B)", "end_in_use_bytes", COL_INT, COL_EVERYWHERE },
	[MEM_KIND] = { "Memory Kind", "mem_kind", COL_STR, COL_EVERYWHERE },
};

static const char mem_note[] =
	" In use = bytes allocated - bytes freed so far, in time order (a free of memory\n"
	"   allocated before the trace leaves it at 0); Peak = its largest value.\n";

static void *mem_new(const struct stats_ctx *ctx)
{
	return xcalloc(1, sizeof(struct mem_usage));
}

static void mem_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	mem_usage_add(self, r->pid, &r->rec->u.memory);
}

/* Shards: src's records follow self's (mem_usage_merge carries the in
 * use and peak across the cut). */
static int mem_merge(void *self, void *src, const struct stats_ctx *ctx)
{
	mem_usage_merge(self, src);
	return 0;
}

static int mem_in_default(void *self, const struct stats_ctx *ctx)
{
	return ((struct mem_usage *)self)->n > 0;
}

static void mem_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct mem_usage *mu = self;
	struct report *rep = &tables[0];
	report_define(rep, "CUDA Memory Allocations", mem_cols, MEM_NCOLS);
	rep->note = mem_note;
	mem_usage_finish(mu);
	for (size_t i = 0; i < mu->n; i++) {
		const struct mem_use *u = &mu->v[i];
		struct cell *c = report_row(rep);
		cell_num(&c[MEM_PID], u->pid);
		cell_num(&c[MEM_DEVICE], u->dev);
		cell_num(&c[MEM_ALLOCS], (double)u->allocs);
		cell_num(&c[MEM_ALLOC_BYTES], (double)u->alloc_bytes);
		cell_num(&c[MEM_FREES], (double)u->frees);
		cell_num(&c[MEM_FREE_BYTES], (double)u->free_bytes);
		cell_num(&c[MEM_LARGEST], (double)u->largest_alloc);
		cell_num(&c[MEM_PEAK], (double)u->peak);
		cell_num(&c[MEM_END], (double)u->in_use);
		cell_str(&c[MEM_KIND], mem_kind_name(u->kind));
	}
}

static void mem_free(void *self)
{
	mem_usage_free(self);
	free(self);
}

static const struct stats_table mem_tables[] = {
	{ "memory",
	  "memory allocations and frees per process, device and memory kind:\n"
	  "bytes, largest allocation, peak in use and in use at the end (a\n"
	  "trace recorded with --activity=default,memory; in the default set\n"
	  "only then)" },
};

const struct stats_report stats_report_memory = {
	.tables = mem_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MEMORY),
	.new = mem_new, .add = mem_add, .merge = mem_merge, .in_default = mem_in_default, .fill = mem_fill, .free = mem_free,
};
