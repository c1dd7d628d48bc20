/* stats_memops.c — `stats --report memops`: memcpy/memset time by
 * operation and memory kinds (nsys cuda_gpu_mem_time_sum, with pinned and
 * pageable host memory apart: a pageable copy is staged through a pinned
 * buffer by the driver and runs several times slower), and each row's
 * throughput = its bytes / its time. */
#include <stdlib.h>

#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { MEMT_SRC = TS_NCOLS, MEMT_DST, MEMT_BYTES, MEMT_GBPS, MEMT_OPERATION, MEMT_NCOLS };
static const struct col memt_cols[MEMT_NCOLS] = {
	TIME_SUMMARY_COLS("Count", "count", "Device"),
	[MEMT_SRC] = { "Src Mem", "src_kind", COL_STR, COL_EVERYWHERE },
	[MEMT_DST] = { "Dst Mem", "dst_kind", COL_STR, COL_EVERYWHERE },
	[MEMT_BYTES] = { "Bytes", "bytes", COL_INT, COL_EVERYWHERE },
	[MEMT_GBPS] = { "Throughput (GB/s)", "throughput_gb_per_s", COL_F3, COL_EVERYWHERE },
	[MEMT_OPERATION] = { "Operation", "operation", COL_STR, COL_EVERYWHERE },
};

#define MEMT_NOTE                                                                              \
	" Src/Dst Mem: the memory kinds CUPTI reports (pageable, pinned, device, managed, ...);\n" \
	"   a memset has only Dst.  Throughput = Bytes / Total Time, GB = 10^9 bytes ('-': no time).\n"
static const char memt_note[] = MEMT_NOTE;
/* the same with time_summary_note's line, when some medians are estimated */
static const char memt_note_approx[] = MEMT_NOTE TIME_SUMMARY_APPROX_NOTE;

/* A group's bytes: its meta's sum. */
static void memt_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct summary_state *s = self;
	uint64_t dur, bytes;
	size_t g = memop_group(s, r->pid, r->rec, &dur, &bytes);
	s->meta[g].sum += bytes;
	summary_add(&s->groups, g, dur);
}

static void memt_row(void *arg, struct cell *c, size_t g)
{
	struct summary_state *s = arg;
	uint64_t bytes = s->meta[g].sum;
	struct memop_parts p;
	memop_group_parts(s, g, &p);
	free(c[MEMT_OPERATION].s);
	cell_str(&c[MEMT_OPERATION], p.op);
	if (p.src) cell_str(&c[MEMT_SRC], p.src);
	cell_str(&c[MEMT_DST], p.dst);
	cell_num(&c[MEMT_BYTES], (double)bytes);
	uint64_t t = s->groups.g[g].total;
	if (t) cell_num(&c[MEMT_GBPS], (double)bytes / (double)t); /* bytes/ns = GB/s */
}

static void memt_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct summary_state *s = self;
	report_define(&tables[0], "CUDA GPU MemOps Summary (by Time)", memt_cols, MEMT_NCOLS);
	time_summary_fill(&tables[0], s, ctx, MEMT_OPERATION, memt_row, s);
	tables[0].note = time_summary_note(&s->groups) ? memt_note_approx : memt_note;
}

static const struct stats_table memt_tables[] = {
	{ "memops",
	  "memcpy/memset time by operation and memory kinds (pinned and\n"
	  "pageable apart), with bytes and throughput in GB/s\n"
	  "(cuda_gpu_mem_time_sum)" },
};

const struct stats_report stats_report_memops = {
	.tables = memt_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MEMCPY) | STATS_TYPE(GP_REC_MEMSET),
	.new = summary_state_new, .add = memt_add, .merge = summary_state_merge_report, .fill = memt_fill,
	.free = summary_state_free,
};
