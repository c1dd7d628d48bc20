/* cmd_top.c — `gpuprof top [--once] [--interval S] FILE...`: one line per
 * job from the status files the shim rewrites every second
 * (GPUPROF_STATUS).  A file that cannot be shown gets a line saying why and
 * the others are still shown; with --once the exit status is 1 when no file
 * could be shown.  Without --once the table is redrawn every interval until
 * SIGINT/SIGTERM (cleared with ANSI codes only when stdout is a terminal,
 * otherwise blocks separated by a blank line, for logs). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/flatjson.h"
#include "common/tabopt.h"
#include "common/tool.h"

#define STATUS_MAX_BYTES (64 * 1024) /* the shim's object is < 8 KiB */
#define STALE_S 5.0                  /* "running" but not rewritten for this long */

void cmd_top_help(FILE *f)
{
	fprintf(f, "usage: gpuprof top [--once] [--interval S] STATUS_FILE...\n\n"
		   "Shows one line per job from the status files libgpuprof.so rewrites about once a\n"
		   "second when GPUPROF_STATUS (gpuprof run --status FILE) is set: host, pid, rank,\n"
		   "state (running, exited, or stale when a running job's file is older than 5 s),\n"
		   "age of the file, kernels/s and GPU busy %% over the last whole second whose\n"
		   "records have arrived, device memory, and the last NVTX range opened.  A job with\n"
		   "a flight recorder or step sampling gets a second line: its capture state (armed,\n"
		   "sampling, pending, capturing, writing), the captures written, and why the last one\n"
		   "was taken.\n\n"
		   "  --once          print the table once and exit (1 when no file could be shown)\n"
		   "  --interval S    seconds between redraws (default 1; 0.1 to 3600)\n"
		   TABOPT_WIDTH_HELP
		   "  -h, --help      this text\n\n"
		   "Without --once the table is redrawn until interrupted (Ctrl-C).\n");
}

static volatile sig_atomic_t stop_requested;
static void on_stop(int sig) { (void)sig; stop_requested = 1; }

/* Reads at most STATUS_MAX_BYTES of a regular file.  NULL with *why set. */
static char *read_small(const char *path, size_t *len, char *why, size_t whysz)
{
	/* O_NONBLOCK: a FIFO named by mistake must not hang the display */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whysz, "cannot read: %s", strerror(errno));
		return NULL;
	}
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	ssize_t k = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whysz, "not a regular file");
	} else {
		buf = xmalloc(STATUS_MAX_BYTES + 1);
		while (n <= STATUS_MAX_BYTES &&
		       ((k = read(fd, buf + n, STATUS_MAX_BYTES + 1 - n)) > 0 || (k < 0 && errno == EINTR)))
			n += k > 0 ? (size_t)k : 0;
		if (k < 0) snprintf(why, whysz, "cannot read: %s", strerror(errno));
		else if (n > STATUS_MAX_BYTES)
			snprintf(why, whysz, "not a status file (larger than %d bytes)", STATUS_MAX_BYTES);
		if (k < 0 || n > STATUS_MAX_BYTES) {
			free(buf);
			buf = NULL;
		}
	}
	close(fd);
	*len = n;
	return buf;
}

/* s shown in at most `cols` bytes (0: whole): control characters escaped
 * (tool_text), cut on a UTF-8 character boundary with "..." when longer. */
static void put_range(const char *s, int cols)
{
	const char *t = tool_text(s);
	size_t n = strlen(t);
	if (cols > 0 && cols < 4)
		cols = 4;
	if (cols <= 0 || n <= (size_t)cols) {
		fputs(t, stdout);
		return;
	}
	size_t cut = (size_t)cols - 3;
	while (cut > 0 && ((unsigned char)t[cut] & 0xC0) == 0x80)
		cut--;
	printf("%.*s...", (int)cut, t);
}

#define ROW_FMT "%-16s %8s %4s %-7s %6s %9s %6s %9s  "

/* One line for one file; returns 1 when the file could be shown. */
static int show_file(const char *path, double now_s, int cols)
{
	char why[256];
	size_t len = 0;
	char *text = read_small(path, &len, why, sizeof(why));
	int shown = 0;
	fj_object o;
	memset(&o, 0, sizeof(o));
	if (text) {
		char err[200];
		uint64_t version = 0;
		if (fj_parse(text, len, &o, err, sizeof(err)) != 0)
			snprintf(why, sizeof(why), "not a status file (%s)", err);
		else if (fj_u64(&o, "version", &version) != 0)
			snprintf(why, sizeof(why), "not a status file (no version)");
		else if (version != 1)
			snprintf(why, sizeof(why), "status format version %" PRIu64 " (this gpuprof reads 1)",
				 version);
		else
			shown = 1;
	}
	uint64_t pid = 0, updated = 0;
	const char *state = NULL;
	if (shown && (fj_u64(&o, "pid", &pid) || fj_str(&o, "state", &state) ||
		      fj_u64(&o, "updated_realtime_ns", &updated))) {
		snprintf(why, sizeof(why), "incomplete status (pid, state or updated_realtime_ns missing)");
		shown = 0;
	}
	if (!shown) {
		printf("%s: %s\n", tool_text(path), why);
		fj_free(&o);
		free(text);
		return 0;
	}
	const char *host = "-", *range = "";
	fj_str(&o, "host", &host);
	fj_str(&o, "last_nvtx_range", &range);
	char rank[24] = "-", age[16], kps[24] = "-", busy[16] = "-", mem[24] = "-", pidbuf[24];
	uint64_t r;
	if (fj_u64(&o, "rank", &r) == 0) /* null: none */
		snprintf(rank, sizeof(rank), "%" PRIu64, r);
	snprintf(pidbuf, sizeof(pidbuf), "%" PRIu64, pid);
	double a = now_s - (double)updated / 1e9;
	if (a < 0)
		a = 0; /* clocks of two hosts (shared file system) */
	if (a < 100)
		snprintf(age, sizeof(age), "%.1fs", a);
	else if (a < 100 * 60)
		snprintf(age, sizeof(age), "%.0fm", a / 60);
	else
		snprintf(age, sizeof(age), "%.0fh", a / 3600);
	const char *shown_state = state;
	if (!strcmp(state, "running") && a > STALE_S)
		shown_state = "stale";
	uint64_t u;
	double d;
	if (fj_u64(&o, "kernels_per_s", &u) == 0)
		snprintf(kps, sizeof(kps), "%" PRIu64, u);
	if (fj_double(&o, "gpu_busy_pct", &d) == 0 && d >= 0 && d <= 1000)
		snprintf(busy, sizeof(busy), "%.1f", d);
	const char *src = NULL;
	if (fj_u64(&o, "device_mem_used_bytes", &u) == 0 &&
	    !(fj_str(&o, "device_mem_source", &src) == 0 && !strcmp(src, "none")))
		fmt_bytes(mem, sizeof(mem), u);
	char hostcut[17];
	snprintf(hostcut, sizeof(hostcut), "%s", tool_text(host));
	printf(ROW_FMT, hostcut, pidbuf, rank, tool_text(shown_state), age, kps, busy, mem);
	/* the row so far is 16+1+8+1+4+1+7+1+6+1+9+1+6+1+9+2 = 74 columns */
	put_range(range, cols ? (cols - 74 > 4 ? cols - 74 : 4) : 0);
	putchar('\n');
	/* the flight recorder (docs/FLIGHT.md): a line of its own, only for a
	 * job that has one */
	const char *cst = NULL, *cwhy = "", *cfile = "";
	if (fj_str(&o, "capture_state", &cst) == 0) {
		uint64_t ncap = 0;
		fj_u64(&o, "captures", &ncap);
		fj_str(&o, "last_capture_why", &cwhy);
		fj_str(&o, "last_capture_file", &cfile);
		printf("  capture state: %s, %" PRIu64 " capture%s", tool_text(cst), ncap, ncap == 1 ? "" : "s");
		if (*cwhy)
			printf("; last capture: %s", tool_text(cwhy));
		if (*cfile)
			printf(" -> %s", tool_text(cfile));
		/* GPUPROF_FLIGHT_API: said only when the history is NVTX only */
		const char *hist = NULL;
		uint64_t rate = 0;
		if (fj_str(&o, "api_history", &hist) == 0 && !strcmp(hist, "captures")) {
			if (fj_u64(&o, "api_switch_rate", &rate) == 0 && rate)
				printf("; API calls in captures only (from %" PRIu64 " records/s)", rate);
			else
				printf("; API calls in captures only");
		}
		putchar('\n');
		/* its steps (NVTX step ranges, or found online: docs/STEPS.md) */
		uint64_t step;
		double med = 0, per_s = 0;
		if (fj_u64(&o, "step", &step) == 0) { /* -1: none yet */
			fj_double(&o, "step_ms_median", &med);
			fj_double(&o, "steps_per_s", &per_s);
			printf("  step %" PRIu64, step);
			if (med > 0)
				printf(", step time median %.3f ms, %.2f steps/s", med, per_s);
			putchar('\n');
		}
	}
	fj_free(&o);
	free(text);
	return 1;
}

static int show_all(char **files, int n)
{
	double now_s = clock_s(CLOCK_REALTIME);
	int cols = tabopt_width(); /* the whole line fits it; 0: the range whole */
	int ok = 0;
	printf(ROW_FMT "%s\n", "HOST", "PID", "RANK", "STATE", "AGE", "KERNELS/S", "BUSY%", "MEMORY",
	       "LAST NVTX RANGE");
	for (int i = 0; i < n; i++)
		ok += show_file(files[i], now_s, cols);
	fflush(stdout);
	return ok;
}

int cmd_top(int argc, char **argv)
{
	enum { O_ONCE = 256, O_INTERVAL };
	static const struct option opts[] = {
		{ "once", no_argument, NULL, O_ONCE },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ 0 },
	};
	int once = 0, c;
	double interval = 1.0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_ONCE: once = 1; break;
		case O_INTERVAL: {
			char *end;
			errno = 0;
			interval = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(interval >= 0.1 && interval <= 3600))
				return tool_usage("--interval needs seconds from 0.1 to 3600");
			break;
		}
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	if (optind >= argc) return tool_usage_see_help("no status file given");
	char **files = argv + optind;
	int n = argc - optind;
	if (once)
		return show_all(files, n) > 0 ? EXIT_OK : 1; /* not 2: no file is "damaged", none was shown */

	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int tty = isatty(STDOUT_FILENO);
	for (int first = 1; !stop_requested; first = 0) {
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (!first)
			putchar('\n');
		show_all(files, n);
		struct timespec ts = { (time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9) };
		while (!stop_requested && nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	return EXIT_OK;
}
