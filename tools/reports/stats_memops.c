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

struct memops_report {
	struct summary_state s;
	uint64_t *bytes; size_t cbytes; /* per group */
};

static void *memt_new(const struct stats_ctx *ctx)
{
	struct memops_report *m = xcalloc(1, sizeof(*m));
	summary_state_init(&m->s, ctx);
	return m;
}

static void memt_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct memops_report *m = self;
	uint64_t dur, bytes;
	size_t n = m->s.groups.n, g = memop_group(&m->s, r->pid, r->rec, &dur, &bytes);
	if (g == n) {
		vec_reserve((void **)&m->bytes, &m->cbytes, g + 1, sizeof(*m->bytes));
		m->bytes[g] = 0;
	}
	m->bytes[g] += bytes;
	summary_add(&m->s.groups, g, dur);
}

static int memt_merge(void *self, void *other, const struct stats_ctx *ctx)
{
	struct memops_report *m = self, *o = other;
	size_t *map = xmalloc((o->s.groups.n ? o->s.groups.n : 1) * sizeof(*map)), had = m->s.groups.n;
	summary_state_merge(&m->s, &o->s, map);
	vec_reserve((void **)&m->bytes, &m->cbytes, m->s.groups.n ? m->s.groups.n : 1, sizeof(*m->bytes));
	for (size_t g = had; g < m->s.groups.n; g++) m->bytes[g] = 0;
	for (size_t i = 0; i < o->s.groups.n; i++) m->bytes[map[i]] += o->bytes[i];
	free(map);
	return 0;
}

static void memt_row(void *arg, struct cell *c, size_t g)
{
	struct memops_report *m = arg;
	struct memop_parts p;
	memop_group_parts(&m->s, g, &p);
	free(c[MEMT_OPERATION].s);
	cell_str(&c[MEMT_OPERATION], p.op);
	if (p.src) cell_str(&c[MEMT_SRC], p.src);
	cell_str(&c[MEMT_DST], p.dst);
	cell_num(&c[MEMT_BYTES], (double)m->bytes[g]);
	uint64_t t = m->s.groups.g[g].total;
	if (t) cell_num(&c[MEMT_GBPS], (double)m->bytes[g] / (double)t); /* bytes/ns = GB/s */
}

static void memt_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct memops_report *m = self;
	report_define(&tables[0], "CUDA GPU MemOps Summary (by Time)", memt_cols, MEMT_NCOLS);
	time_summary_fill(&tables[0], &m->s, ctx, MEMT_OPERATION, memt_row, m);
	tables[0].note = time_summary_note(&m->s.groups) ? memt_note_approx : memt_note;
}

static void memt_free(void *self)
{
	struct memops_report *m = self;
	summary_state_release(&m->s);
	free(m->bytes);
	free(m);
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
	.new = memt_new, .add = memt_add, .merge = memt_merge, .fill = memt_fill, .free = memt_free,
};
