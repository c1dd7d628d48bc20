/* trace_info.h — what is in a trace: processes, threads, sources, devices,
 * record counts by type, dropped records, time span and GPU-activity
 * windows; printed by `gpuprof info` (text or --json) and embedded as the
 * header of `gpuprof report`.  A component: zero-initialised, every record
 * through trace_info_add (any order), trace_info_finish, then the fields.
 * Memory: one entry per process, thread, source, device and window. */
#ifndef GPUPROF_ANALYSIS_GPU_TRACE_INFO_H
#define GPUPROF_ANALYSIS_GPU_TRACE_INFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gp_trace.h"
#include "analysis/gpu/windows.h"
#include "common/util.h"

struct trace_info {
	gp_rec_process *procs; size_t nprocs, cprocs;       /* by pid, once finished */
	gp_rec_thread *threads; size_t nthreads, cthreads;  /* by (pid, tid) */
	gp_rec_source *srcs; size_t nsrcs, csrcs;           /* by source id */
	gp_rec_device *devs; uint32_t *dev_pid; size_t ndevs, cdevs, cdevpid;
	uint64_t counts[GP_REC_TYPE_MAX];
	uint64_t dropped[8];    /* by gp_dropped_where */
	uint64_t dropped_total;
	uint64_t first, last;   /* earliest start, latest end of the timed records */
	int have_time;
	u64map seen_proc, seen_thread, seen_src, seen_dev;
	struct winset win;      /* GPU-activity windows (windowed trace) */
};

void trace_info_add(struct trace_info *in, gp_reader *r, const gp_record *rec);
/* Adds src, the records of the next slice of time, to in (before finish;
 * src is left for trace_info_free): counts and the span add up, a process,
 * thread, source or device src also saw is src's (a later record's, as in
 * one read). */
void trace_info_merge(struct trace_info *in, const struct trace_info *src);
/* Sorts processes, threads and sources; finishes the windows. */
void trace_info_finish(struct trace_info *in);
/* The `gpuprof info --json` object, one line with its newline.  ig: the
 * reader's integrity at the end of the read. */
void trace_info_print_json(FILE *f, const struct trace_info *in, gp_reader *r, const char *path,
			   const struct gp_integrity *ig);
void trace_info_free(struct trace_info *in);

#endif
