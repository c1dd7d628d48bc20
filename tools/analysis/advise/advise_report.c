/* advise_report.c — see advise_report.h. */
#include "analysis/advise/advise_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "common/tool.h"
#include "common/util.h"

/* The text of a finding wraps here, or at the width when narrower. */
#define WRAP_COLS 100
#define STACK_FRAMES_SHOWN 6

/* ------------------------------------------------------------ shared */
static const struct col summary_cols[] = {
	{ "#", "rank", COL_ID, COL_EVERYWHERE }, { "Severity", "severity", COL_STR, COL_EVERYWHERE }, { "Rule", "rule", COL_STR, COL_EVERYWHERE },
	{ "Saving/Step (ms)", "saving_ms_per_step", COL_F3, COL_EVERYWHERE }, { "Saving (%)", "saving_pct", COL_F1, COL_EVERYWHERE },
	{ "Cost/Step (ms)", "cost_ms_per_step", COL_F3, COL_EVERYWHERE }, { "Cost (%)", "cost_pct", COL_F1, COL_EVERYWHERE },
	{ "Count/Step", "count_per_step", COL_F1, COL_EVERYWHERE }, { "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Finding", "title", COL_STR, COL_PROSE },
};

static const struct col flat_cols[] = {
	{ "File", "file", COL_STR, COL_EVERYWHERE }, { "#", "rank", COL_ID, COL_EVERYWHERE }, { "PID", "pid", COL_ID, COL_EVERYWHERE },
	{ "Rank", "process_rank", COL_ID, COL_EVERYWHERE }, { "Severity", "severity", COL_STR, COL_EVERYWHERE }, { "Rule", "rule", COL_STR, COL_EVERYWHERE },
	{ "Title", "title", COL_STR, COL_EVERYWHERE }, { "Count/Step", "count_per_step", COL_F3, COL_EVERYWHERE },
	{ "Cost/Step (ns)", "cost_ns_per_step", COL_INT, COL_EVERYWHERE }, { "Cost (%)", "cost_pct", COL_F3, COL_EVERYWHERE },
	{ "Saving/Step (ns)", "saving_ns_per_step", COL_INT, COL_EVERYWHERE }, { "Saving (%)", "saving_pct", COL_F3, COL_EVERYWHERE },
	{ "What", "what", COL_STR, COL_EVERYWHERE }, { "Where", "where", COL_STR, COL_EVERYWHERE }, { "Change", "change", COL_STR, COL_EVERYWHERE },
	{ "How", "saving_how", COL_STR, COL_EVERYWHERE }, { "Step", "step", COL_ID, COL_EVERYWHERE }, { "Since (ns)", "since_ns", COL_ID, COL_EVERYWHERE },
	{ "Until (ns)", "until_ns", COL_ID, COL_EVERYWHERE },
};

static const char *rank_text(int32_t rank)
{
	static char buf[24];
	if (rank < 0) return "";
	snprintf(buf, sizeof(buf), ", rank %d", rank);
	return buf;
}

/* ------------------------------------------------------------ text */
/* Prints `label` then `text` wrapped at `cols`, continuation lines
 * indented under the text. */
static void wrapped(FILE *out, int cols, const char *label, const char *text)
{
	const int indent = 13;
	fprintf(out, "    %-9s", label);
	int col = indent;
	const char *p = tool_text(text ? text : "");
	while (*p) {
		while (*p == ' ') p++;
		const char *w = p;
		while (*p && *p != ' ') p++;
		int len = (int)(p - w);
		if (!len) break;
		if (col > indent && col + 1 + len > cols) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putc(' ', out);
			col++;
		}
		fwrite(w, 1, (size_t)len, out);
		col += len;
	}
	putc('\n', out);
}

static void print_stack(FILE *out, const struct adv_site *s)
{
	const struct stack_view *v = s->stack;
	if (!v || !v->nframes) return;
	fprintf(out, "    %-9s%s%s:\n", "stack", s->after_site ? "of the launch before, " : "", tool_text(s->label));
	uint32_t first = v->nframes > STACK_FRAMES_SHOWN ? v->nframes - STACK_FRAMES_SHOWN : 0;
	if (first) fprintf(out, "%13s... %u outer frames\n", "", first);
	for (uint32_t i = first; i < v->nframes; i++) fprintf(out, "%13s%s\n", "", tool_text(v->frames[i]));
}

/* The command that shows a finding's records: `gpuprof CMD --since A
 * --until B FILE` (dump or stats); the characters it took, as snprintf. */
static size_t records_cmd(char *buf, size_t n, const char *cmd, const char *path, const struct adv_finding *x)
{
	int k = snprintf(buf, n, "gpuprof %s --since %" PRIu64 " --until %" PRIu64 " %s", cmd, x->since_ns,
			 x->until_ns, path);
	return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

static void records_text(char *buf, size_t n, const char *path, const struct adv_finding *x)
{
	size_t k = 0;
	if (x->step_number >= 0) k += (size_t)snprintf(buf + k, n - k, "step %" PRId64 ": ", x->step_number);
	if (k >= n) return;
	k += records_cmd(buf + k, n - k, "dump", path, x);
	snprintf(buf + k, n - k, " (stats takes the same flags); Perfetto (gpuprof export) %.3f..%.3f ms",
		 (double)x->since_ns / 1e6, (double)x->until_ns / 1e6);
}

static void print_text(FILE *out, const char *path, const struct adv_result *res, int width)
{
	int cols = width > 0 && width < WRAP_COLS ? width : WRAP_COLS;
	fprintf(out, "gpuprof advise: %s\n", tool_text(path));
	for (size_t i = 0; i < res->nprocs; i++) {
		const struct adv_proc_summary *ps = &res->procs[i];
		if (!ps->ncounted) {
			fprintf(out, " pid %u%s: no counted steps (%s): advise judges training steps (docs/STEPS.md)\n",
				ps->pid, rank_text(ps->rank), tool_text(ps->steps_are));
			continue;
		}
		if (*ps->not_judged) {
			fprintf(out, " pid %u%s: %zu steps (%s), %zu counted: %s; not judged (docs/ADVISE.md)\n",
				ps->pid, rank_text(ps->rank), ps->nsteps, tool_text(ps->steps_are), ps->ncounted,
				ps->not_judged);
			continue;
		}
		fprintf(out, " pid %u%s: %zu steps (%s), %zu warm-up, %zu counted; step mean %.3f ms, median %.3f ms; GPU "
			     "busy %.1f %%, waiting for the host %.1f %%\n", ps->pid, rank_text(ps->rank), ps->nsteps,
			tool_text(ps->steps_are), ps->nwarm, ps->ncounted, ps->step_mean_ns / 1e6, ps->step_median_ns / 1e6,
			ps->busy_pct, ps->host_wait_pct);
		if (ps->runs_ahead)
			fprintf(out, "   The GPU work launched per step (%.3f ms) is longer than the step: the host runs ahead of "
				     "the GPU (nothing makes it wait), so the steps are the host's; the shares below are of "
				     "that GPU work.\n", ps->gpu_work_ns / 1e6);
	}
	if (!res->n) {
		const char *why = advise_nothing_judged(res);
		fprintf(out, "\n %s\n", why ? why : "no findings");
		if (res->hidden)
			fprintf(out, " (%zu finding%s saving 0.000 ms per step hidden: --all shows them)\n", res->hidden,
				res->hidden == 1 ? "" : "s");
		return;
	}
	struct report rep;
	report_init(&rep, "advise");
	report_define(&rep, "Findings, ranked by severity and estimated saving per step", summary_cols,
		      REPORT_NCOLS(summary_cols));
	for (size_t i = 0; i < res->n; i++) {
		const struct adv_finding *x = &res->v[i];
		struct cell *c = report_row(&rep);
		cell_num(&c[0], (double)(i + 1));
		cell_str(&c[1], adv_severity_names[x->sev]);
		cell_str(&c[2], adv_rule_names[x->rule]);
		if (x->has_saving) { cell_num(&c[3], x->saving_ns / 1e6); cell_num(&c[4], x->saving_pct); }
		cell_num(&c[5], x->cost_ns / 1e6);
		cell_num(&c[6], x->cost_pct);
		if (x->count_per_step >= 0) cell_num(&c[7], x->count_per_step);
		cell_num(&c[8], x->pid);
		cell_str(&c[9], x->title);
	}
	/* what the two columns mean against each other: costs that add up to
	 * several times the step next to small savings read as a contradiction */
	int stacks = 0;
	for (size_t i = 0; i < res->n && !stacks; i++)
		for (size_t k = 0; k < res->v[i].nsites && !stacks; k++) stacks = res->v[i].sites[k].stack != NULL;
	char note[1024];
	snprintf(note, sizeof(note), "%s%s",
		 " Saving: how much shorter the step would be with that change alone (estimates do not add up:\n"
		 "   two can count the same idle time).  Cost: the time the cause takes per step whether or not\n"
		 "   the step waits for it (the host blocked in the calls, the GPU in the kernels); costs overlap\n"
		 "   each other and the GPU's work, so they can add up to more than 100 % and a large cost can\n"
		 "   save little (docs/ADVISE.md).\n",
		 stacks ? "" : " Where: the trace has no call stacks, so calls are named by their API (cudaStreamSynchronize)\n"
			       "   and kernels by name; gpuprof run --stacks records the Python file:line of each call.\n");
	rep.note = note;
	putc('\n', out);
	const struct report_style table = { .fmt = FMT_TABLE, .width = width, .unit = TU_NS };
	report_print(out, &rep, &table);
	report_free(&rep);
	if (res->hidden)
		fprintf(out, "\n %zu finding%s saving 0.000 ms per step hidden (--all shows them).\n", res->hidden,
			res->hidden == 1 ? "" : "s");
	char buf[4096];
	for (size_t i = 0; i < res->n; i++) {
		const struct adv_finding *x = &res->v[i];
		fprintf(out, "\n %zu. [%s] %s (pid %u%s): %s\n", i + 1, adv_severity_names[x->sev], adv_rule_names[x->rule],
			x->pid, rank_text(x->rank), tool_text(x->title));
		wrapped(out, cols, "what", x->what);
		wrapped(out, cols, "where", x->where && *x->where ? x->where : "-");
		for (size_t k = 0; k < x->nsites && k < 1; k++) print_stack(out, &x->sites[k]);
		snprintf(buf, sizeof(buf), "%.3f ms per step (%.1f %% of the step time)", x->cost_ns / 1e6, x->cost_pct);
		wrapped(out, cols, "cost", buf);
		wrapped(out, cols, "change", x->change);
		if (x->has_saving)
			snprintf(buf, sizeof(buf), "%.3f ms per step (%.1f %%). %s", x->saving_ns / 1e6, x->saving_pct,
				 x->how ? x->how : "");
		else
			snprintf(buf, sizeof(buf), "%s", x->how ? x->how : "not estimated");
		wrapped(out, cols, "saving", buf);
		if (x->until_ns) {
			records_text(buf, sizeof(buf), path, x);
			wrapped(out, cols, "records", buf);
		}
	}
}

/* The text, then its lines fitted to the width (the stack frames, the
 * summary lines): one place for every line. */
void advise_print_text(FILE *out, const char *path, const struct adv_result *res, int width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = width > 0 ? open_memstream(&text, &len) : NULL;
	if (!f) {
		print_text(out, path, res, width);
		return;
	}
	print_text(f, path, res, width);
	if (fclose(f) == 0) report_text(out, text, width);
	free(text);
}

/* ------------------------------------------------------------ JSON */
/* integral values exactly, others to 6 significant digits */
static void jnum(FILE *out, const char *key, double v, int first)
{
	if (v == floor(v) && fabs(v) < 1e15) fprintf(out, "%s\"%s\":%.0f", first ? "" : ",", key, v);
	else fprintf(out, "%s\"%s\":%.6g", first ? "" : ",", key, v);
}

static void jstr(FILE *out, const char *key, const char *s, int first)
{
	fprintf(out, "%s\"%s\":", first ? "" : ",", key);
	json_str(out, s ? s : "");
}

static void jint(FILE *out, const char *key, double v, int first)
{
	fprintf(out, "%s\"%s\":%.0f", first ? "" : ",", key, v);
}

static void json_site(FILE *out, const struct adv_site *s)
{
	putc('{', out);
	jstr(out, "label", s->label, 1);
	jstr(out, "name", s->name, 0);
	jstr(out, "phase", s->phase, 0);
	fprintf(out, ",\"after_site\":%s,\"dataloader\":%s", s->after_site ? "true" : "false",
		s->dataloader ? "true" : "false");
	jnum(out, "count_per_step", s->count_per_step, 0);
	jint(out, "cost_ns_per_step", s->cost_ns_per_step, 0);
	if (s->blocks_max) {
		jint(out, "blocks_min", (double)s->blocks_min, 0);
		jint(out, "blocks_max", (double)s->blocks_max, 0);
		jint(out, "threads_per_block", s->threads, 0);
		if (s->occ >= 0) jnum(out, "theoretical_occupancy", s->occ, 0);
	}
	if (s->pm_pct >= 0) jnum(out, "pm_pct", s->pm_pct, 0);
	fputs(",\"frames\":[", out);
	for (uint32_t i = 0; s->stack && i < s->stack->nframes; i++) {
		if (i) putc(',', out);
		json_str(out, s->stack->frames[i]);
	}
	putc(']', out);
	putc('}', out);
}

void advise_print_json(FILE *out, const char *path, const struct adv_result *res)
{
	putc('{', out);
	jstr(out, "file", path, 1);
	fputs(",\"processes\":[", out);
	for (size_t i = 0; i < res->nprocs; i++) {
		const struct adv_proc_summary *ps = &res->procs[i];
		fputs(i ? ",\n  {" : "\n  {", out);
		jint(out, "pid", ps->pid, 1);
		if (ps->rank >= 0) jint(out, "rank", ps->rank, 0);
		else fputs(",\"rank\":null", out);
		jstr(out, "method", ps->method, 0);
		jstr(out, "steps_are", ps->steps_are, 0);
		jint(out, "steps", (double)ps->nsteps, 0);
		jint(out, "warmup", (double)ps->nwarm, 0);
		jint(out, "counted", (double)ps->ncounted, 0);
		jint(out, "outliers", (double)ps->noutliers, 0);
		jint(out, "step_mean_ns", ps->step_mean_ns, 0);
		jint(out, "step_median_ns", ps->step_median_ns, 0);
		jnum(out, "gpu_busy_pct", ps->busy_pct, 0);
		jnum(out, "gpu_waited_for_host_pct", ps->host_wait_pct, 0);
		jnum(out, "unexplained_idle_pct", ps->unexplained_pct, 0);
		jint(out, "gpu_work_ns_per_step", ps->gpu_work_ns, 0);
		fprintf(out, ",\"host_runs_ahead\":%s", ps->runs_ahead ? "true" : "false");
		if (*ps->not_judged) jstr(out, "not_judged", ps->not_judged, 0);
		putc('}', out);
	}
	putc(']', out);
	const char *nothing = advise_nothing_judged(res);
	if (nothing) jstr(out, "nothing_judged", nothing, 0);
	if (res->hidden) jint(out, "hidden_nothing_saved", (double)res->hidden, 0);
	fputs(",\n \"findings\":[", out);
	for (size_t i = 0; i < res->n; i++) {
		const struct adv_finding *x = &res->v[i];
		fputs(i ? ",\n  {" : "\n  {", out);
		jint(out, "rank", (double)(i + 1), 1);
		jint(out, "pid", x->pid, 0);
		if (x->rank >= 0) jint(out, "process_rank", x->rank, 0);
		else fputs(",\"process_rank\":null", out);
		jstr(out, "severity", adv_severity_names[x->sev], 0);
		jstr(out, "rule", adv_rule_names[x->rule], 0);
		jstr(out, "title", x->title, 0);
		jstr(out, "what", x->what, 0);
		jstr(out, "where", x->where, 0);
		fputs(",\"sites\":[", out);
		for (size_t k = 0; k < x->nsites; k++) {
			if (k) putc(',', out);
			json_site(out, &x->sites[k]);
		}
		putc(']', out);
		if (x->count_per_step >= 0) jnum(out, "count_per_step", x->count_per_step, 0);
		else fputs(",\"count_per_step\":null", out);
		jint(out, "cost_ns_per_step", x->cost_ns, 0);
		jnum(out, "cost_pct", x->cost_pct, 0);
		if (x->has_saving) {
			jint(out, "saving_ns_per_step", x->saving_ns, 0);
			jnum(out, "saving_pct", x->saving_pct, 0);
		} else {
			fputs(",\"saving_ns_per_step\":null,\"saving_pct\":null", out);
		}
		jstr(out, "saving_how", x->how, 0);
		jstr(out, "change", x->change, 0);
		fputs(",\"records\":{", out);
		if (x->step_number >= 0) jint(out, "step", (double)x->step_number, 1);
		else fputs("\"step\":null", out);
		jint(out, "since_ns", (double)x->since_ns, 0);
		jint(out, "until_ns", (double)x->until_ns, 0);
		char cmd[2048];
		records_cmd(cmd, sizeof(cmd), "stats", path, x);
		jstr(out, "stats", cmd, 0);
		records_cmd(cmd, sizeof(cmd), "dump", path, x);
		jstr(out, "dump", cmd, 0);
		fprintf(out, ",\"perfetto_ms\":[%.6f,%.6f]}", (double)x->since_ns / 1e6, (double)x->until_ns / 1e6);
		fputs(",\"evidence\":{", out);
		for (size_t k = 0; k < x->nev; k++) jnum(out, x->ev[k].key, x->ev[k].v, k == 0);
		fputs("}}", out);
	}
	fputs(res->n ? "\n ]}" : "]}", out);
}

/* ------------------------------------------------------------ CSV */
void advise_findings_rows(struct report *rep, const char *path, const struct adv_result *res)
{
	if (!rep->cols) {
		report_init(rep, "advise");
		report_define(rep, "Findings (advise)", flat_cols, REPORT_NCOLS(flat_cols));
	}
	for (size_t i = 0; i < res->n; i++) {
		const struct adv_finding *x = &res->v[i];
		struct cell *c = report_row(rep);
		cell_str(&c[0], path);
		cell_num(&c[1], (double)(i + 1));
		cell_num(&c[2], x->pid);
		if (x->rank >= 0) cell_num(&c[3], x->rank);
		cell_str(&c[4], adv_severity_names[x->sev]);
		cell_str(&c[5], adv_rule_names[x->rule]);
		cell_str(&c[6], x->title);
		if (x->count_per_step >= 0) cell_num(&c[7], x->count_per_step);
		cell_num(&c[8], x->cost_ns);
		cell_num(&c[9], x->cost_pct);
		if (x->has_saving) { cell_num(&c[10], x->saving_ns); cell_num(&c[11], x->saving_pct); }
		cell_str(&c[12], x->what);
		cell_str(&c[13], x->where);
		cell_str(&c[14], x->change);
		cell_str(&c[15], x->how);
		if (x->step_number >= 0) cell_num(&c[16], (double)x->step_number);
		cell_num(&c[17], (double)x->since_ns);
		cell_num(&c[18], (double)x->until_ns);
	}
}
