/* cmd_info.c — `gpuprof info FILE`: what is in a trace, and is it whole. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/trace_info.h"
#include "analysis/gpu/windows.h"
#include "cmd/cmd.h"
#include "common/report.h"
#include "common/tabopt.h"
#include "common/tool.h"

void cmd_info_help(FILE *f)
{
	fprintf(f, "usage: gpuprof info [--json] [--width N] [--strict] FILE\n\n"
		   "Prints the trace header (version, producer, host, pid, rank, start time in UTC,\n"
		   "clock), processes, threads/sources, devices, time span, record counts by type,\n"
		   "dropped records and integrity (complete / truncated / corrupt chunks skipped).\n\n"
		   "  --json            one JSON object instead of text\n"
		   TABOPT_WIDTH_HELP
		   "  --strict          exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help        this text\n"
		   "  FILE              the trace; '-' = stdin (copied to a temporary file first)\n");
}

static void print_rank(FILE *f, int32_t rank)
{
	if (rank < 0) fputs("-", f);
	else fprintf(f, "%d", rank);
}

static void print_text(FILE *f, const struct trace_info *in, gp_reader *r, const char *path, const struct gp_integrity *ig)
{
	const gp_header *h = gp_reader_header(r);
	char buf[128];
	fprintf(f, "file:       %s\n", path);
	fprintf(f, "format:     %u.%u\n", h->major, h->minor);
	fprintf(f, "producer:   %s\n", tool_text(h->producer));
	fprintf(f, "host:       %s\n", tool_text(h->host));
	fprintf(f, "pid:        %u\n", h->pid);
	fprintf(f, "rank:       "); print_rank(f, h->rank); putc('\n', f);
	fmt_iso8601(buf, sizeof(buf), h->start_realtime_ns);
	fprintf(f, "start:      %s\n", buf);
	fprintf(f, "clock:      %s (start at %" PRIu64 " ns)\n", clock_name(h->clock_id), h->start_trace_ns);
	if (in->have_time) {
		fmt_dur(buf, sizeof(buf), in->last - in->first);
		fprintf(f, "span:       %s (%" PRIu64 " .. %" PRIu64 " ns)\n", buf, in->first, in->last);
	} else {
		fprintf(f, "span:       - (no timed records)\n");
	}

	if (in->win.n) { /* a windowed trace: say how much of it has GPU activity */
		char cov[32];
		uint64_t c = winset_covered(&in->win), span = in->last - in->first;
		fmt_dur(cov, sizeof(cov), c);
		fmt_dur(buf, sizeof(buf), span);
		fprintf(f, "windows:    %zu, GPU activity recorded in %s of %s (%.1f %%)\n", in->win.n, cov, buf,
		       span ? 100.0 * (double)c / (double)span : 100.0);
	}
	fprintf(f, "processes:  %zu\n", in->nprocs);
	for (size_t i = 0; i < in->nprocs; i++) {
		gp_rec_process *p = &in->procs[i];
		fprintf(f, "  pid %u ppid %u rank ", p->pid, p->ppid);
		print_rank(f, p->rank);
		fprintf(f, " host %s: %s\n", tool_text(tool_str(r, p->host_id)), tool_text(tool_str(r, p->name_id)));
		if (p->settings_id) /* since format 1.2 */
			fprintf(f, "    settings: %s\n", tool_text(tool_str(r, p->settings_id)));
	}
	fprintf(f, "threads:    %zu\n", in->nthreads);
	for (size_t i = 0; i < in->nthreads; i++)
		fprintf(f, "  pid %u tid %u: %s\n", in->threads[i].pid, in->threads[i].tid,
		       tool_text(tool_str(r, in->threads[i].name_id)));
	fprintf(f, "sources:    %zu\n", in->nsrcs);
	for (size_t i = 0; i < in->nsrcs; i++) {
		gp_rec_source *s = &in->srcs[i];
		fprintf(f, "  %u: %s pid %u tid %u%s%s\n", s->source_id, source_kind_name(s->kind),
		       s->pid, s->tid, s->name_id ? " " : "", tool_text(tool_str(r, s->name_id)));
	}
	fprintf(f, "devices:    %zu\n", in->ndevs);
	for (size_t i = 0; i < in->ndevs; i++) {
		gp_rec_device *d = &in->devs[i];
		fprintf(f, "  pid %u device %u: %s, %u SMs, %.1f GiB, cc %u.%u\n", in->dev_pid[i],
		       d->device_id, tool_text(tool_str(r, d->name_id)), d->sm_count,
		       d->global_mem_bytes / (1024.0 * 1024 * 1024), d->cc_major, d->cc_minor);
	}
	fprintf(f, "records:\n");
	for (int t = 1; t < GP_REC_TYPE_MAX; t++)
		if (in->counts[t])
			fprintf(f, "  %-11s %" PRIu64 "\n", gp_rec_type_name(t), in->counts[t]);
	fprintf(f, "dropped:    %" PRIu64, in->dropped_total);
	if (in->dropped_total) {
		const char *sep = " (";
		for (int w = 0; w < 8; w++)
			if (in->dropped[w]) {
				fprintf(f, "%s%s %" PRIu64, sep, drop_where_name(w), in->dropped[w]);
				sep = ", ";
			}
		putc(')', f);
	}
	putc('\n', f);
	struct gp_footer_info fi;
	memset(&fi, 0, sizeof(fi));
	if (gp_reader_footer(r, &fi) == 0 && fi.present)
		fprintf(f, "index:      footer present: %" PRIu64 " records in %" PRIu64 " chunks\n",
		       fi.record_count, fi.chunk_count);
	else
		fprintf(f, "index:      none (file was not closed cleanly)\n");
	fprintf(f, "integrity:  ");
	if (ig->frames_corrupt)
	{
		/* A chunk that fails to decode is skipped whole but adds no bytes
		 * to bytes_skipped: those count only the bytes passed over to find
		 * the next chunk header, said when there are some. */
		fprintf(f, "%" PRIu64 " corrupt chunk%s skipped", ig->frames_corrupt, ig->frames_corrupt == 1 ? "" : "s");
		if (ig->bytes_skipped)
			fprintf(f, " (%" PRIu64 " unreadable bytes passed over)", ig->bytes_skipped);
		fprintf(f, ", %" PRIu64 " chunks ok%s\n", ig->frames_ok, ig->truncated ? ", truncated" : "");
	}
	else if (ig->truncated)
		fprintf(f, "truncated after %" PRIu64 " frames at offset %" PRIu64 "\n", ig->frames_ok,
		       ig->truncated_at);
	else
		fprintf(f, "complete, %" PRIu64 " frames, %s\n", ig->frames_ok,
		       ig->has_footer ? "footer present" : "no footer");
}

/* The text, its lines fitted to the width (a job's command line and
 * settings can be longer than a screen). */
static void print_text_fitted(const struct trace_info *in, gp_reader *r, const char *path,
			      const struct gp_integrity *ig)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) return;
	print_text(f, in, r, path, ig);
	if (fclose(f) == 0) report_text(stdout, text, tabopt_width());
	free(text);
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ 0 },
	};
	int json = 0, strict = 0, c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': strict = 1; break;
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	const char *path;
	gp_reader *r;
	int opened = tool_open_operand(argc, argv, &path, &r);
	if (opened != EXIT_OK)
		return opened;
	struct trace_info in = { 0 };
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next(r, &rec)) > 0) {
		trace_info_add(&in, r, rec);
		progress_tick(++n);
	}
	int code = tool_finish(r, path, rc, strict);
	struct gp_integrity ig;
	memset(&ig, 0, sizeof(ig));
	gp_reader_integrity(r, &ig);
	trace_info_finish(&in);
	/* A fatal error before anything was read prints nothing: there is no
	 * intact prefix to describe. */
	if (n > 0 || gp_reader_recoverable(rc)) {
		if (json) trace_info_print_json(stdout, &in, r, path, &ig);
		else print_text_fitted(&in, r, path, &ig);
	}
	trace_info_free(&in);
	gp_reader_close(r);
	return code;
}
