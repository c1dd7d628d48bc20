/* cmd_run.c — `gpuprof run [options] -- cmd ...`: runs the job with
 * libgpuprof.so injected, forwards termination signals, then prints one
 * summary line from the shim's GPUPROF_SUMMARY file(s) and exits with the
 * job's own status (128+signal when it was killed, as a shell does). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gp_settings.h"
#include "cmd/cmd.h"
#include "common/tool.h"

void cmd_run_help(FILE *f)
{
	fprintf(f, "usage: gpuprof run [options] -- command [args...]\n\n"
		   "Runs the command with libgpuprof.so preloaded (LD_PRELOAD, CUDA_INJECTION64_PATH,\n"
		   "NVTX_INJECTION64_PATH) and prints one summary line on stderr when it ends.\n"
		   "Exits with the command's status (128+N when killed by signal N).\n\n"
		   "  -o, --output PATTERN    trace file; %%p pid, %%h host, %%r rank, %%t time\n"
		   "  --api=default|all|none  which CUDA API calls to record\n"
		   "  --activity=KINDS        GPU activity kinds, comma-separated: kernel, memcpy,\n"
		   "                          memset, peer, device (= default), sync, memory\n"
		   "                          (opt-in: they cost most on launch-bound jobs), all,\n"
		   "                          none; e.g. --activity=default,sync\n"
		   "  --flush-ms N            flush interval of the recorder\n"
		   "  --buffer-size SIZE      size of each CUPTI activity buffer (e.g. 8M)\n"
		   "  --max-memory SIZE       cap on the recorder's memory\n"
		   "  --gpu-window ON/PERIOD  record GPU activity (kernels, copies, ...) only for ON\n"
		   "                          every PERIOD, from the start; API calls and NVTX all\n"
		   "                          the time. Units ns|us|ms|s, seconds when none: 1/10,\n"
		   "                          500ms/10s; 0 < ON < PERIOD. `gpuprof stats` lists the\n"
		   "                          windows\n"
		   "  --capture-range=cudaProfilerApi  record only between the job's cudaProfilerStart\n"
		   "                          and cudaProfilerStop (torch.cuda.profiler.start/stop;\n"
		   "                          nsys -c cudaProfilerApi); starts paused. Not with --gpu-window\n"
		   "  --stacks                record call stacks (native + Python) of launches and copies\n"
		   "  --layers                PyTorch jobs: mark each layer's backward with NVTX ranges\n"
		   "                          (a Python module put first on PYTHONPATH), so that `stats\n"
		   "                          --report layers` gives backward kernels their forward layer\n"
		   "                          without emit_nvtx; with --stacks (docs/STACKS.md)\n"
		   "  --gpu-metrics[=HZ]      sample NVML GPU metrics HZ times a second (1-1000, default 10)\n"
		   "  --pm-sampling[=INTERVAL] sample the GPU's performance monitors (CUPTI PM sampling:\n"
		   "                          SM active/occupancy, tensor, DRAM %%) every INTERVAL of\n"
		   "                          GPU time, 100us-10s with a unit (default 10ms)\n"
		   "  --status FILE           rewrite FILE (JSON; %%p %%h %%r as in -o) about once a second\n"
		   "                          with kernels/s, GPU busy %%, memory, last NVTX range;\n"
		   "                          `gpuprof top FILE` shows it\n"
		   "  --flight-recorder[=DURATION]  armed mode: GPU activity off, API calls and NVTX kept\n"
		   "                          in memory for the last DURATION (default 30s); `gpuprof\n"
		   "                          trigger PID` or a --trigger rule writes that history plus\n"
		   "                          K whole steps with GPU activity as FILE-capN (docs/FLIGHT.md)\n"
		   "  --sample-steps 1/N      GPU activity on for one whole step in N (NVTX 'step N' ranges,\n"
		   "                          else steps found from the job's copies and syncs: --steps)\n"
		   "  --flight-api=WHEN       with either: API calls recorded `always`, or only while\n"
		   "                          GPU activity is on (`capture`: the history before a\n"
		   "                          capture is NVTX only; cheaper on launch-bound jobs);\n"
		   "                          default `auto`: always, until an armed job makes more\n"
		   "                          than GPUPROF_FLIGHT_API_RATE (10000) records a second\n"
		   "  --steps=SOURCE          with either: where training steps come from: `nvtx` ranges\n"
		   "                          only, `off`, or default `auto`: NVTX ranges, else found\n"
		   "                          online from the job's API calls (docs/STEPS.md)\n"
		   "  --trigger RULES         start a capture on an anomaly: step>3x (a step over 3x the\n"
		   "                          rolling median), idle>50%% (NVML; with --gpu-metrics),\n"
		   "                          drop>50%%[/10s] (NVML busy of a window 50%% below the\n"
		   "                          windows' rolling median; with --gpu-metrics),\n"
		   "                          range=NAME, cuda-error, oom (a device allocation ran out\n"
		   "                          of memory; with --flight-recorder and no --trigger, the\n"
		   "                          default); comma-separated\n"
		   "  --no-follow             do not trace programs the job exec()s\n"
		   "  -q, --quiet             no messages from the tracer, no summary line\n"
		   "  -h, --help              this text\n\n"
		   "libgpuprof.so is looked up at ../lib/libgpuprof.so next to the gpuprof binary;\n"
		   "GPUPROF_LIB=/path/libgpuprof.so overrides.\n");
}

static volatile sig_atomic_t child_pid;

/* Forward a termination signal to the job.  Signals from the terminal
 * (si_code SI_KERNEL/tty) already reached the whole foreground process group,
 * the job included: forwarding those would deliver them twice. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (child_pid <= 0)
		return;
	if (si && si->si_code == SI_KERNEL)
		return;
	if (si && si->si_code <= 0 && si->si_pid == child_pid)
		return;
	kill(child_pid, sig);
}

static int find_lib(char *out, size_t n)
{
	const char *env = getenv("GPUPROF_LIB");
	char path[PATH_MAX + 32];
	if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		char exe[PATH_MAX];
		ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (l <= 0) return tool_fail(-1, "cannot find my own binary: %s", strerror(errno));
		exe[l] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) *slash = 0;
		snprintf(path, sizeof(path), "%s/../lib/libgpuprof.so", exe);
	}
	char real[PATH_MAX];
	if (!realpath(path, real) || access(real, R_OK) != 0)
		return tool_fail(-1, "cannot find libgpuprof.so at %s: %s (build it, or set GPUPROF_LIB)", path,
				 strerror(errno));
	snprintf(out, n, "%s", real);
	return 0;
}

/* ------------------------------------------------------------ summary */
/* What the shims wrote to GPUPROF_SUMMARY (shim/core/gps_core.h,
 * gps_summary_append), a line per traced process: "pid=N file=PATH" when its
 * trace file was created, "pid=N error=TEXT" when it could not be, and at
 * its final flush "pid=N events=N dropped=N bytes=N threads=N file=PATH":
 * key=value separated by spaces, "file" and "error" taking the rest of the
 * line.  The last line is made from these and from the files as they are
 * on disk. */
struct tracefile {
	char *path;
	int closed;             /* the final flush's line was seen */
	uint64_t events, dropped;
};
struct summary {
	struct tracefile *files; size_t nfiles, cfiles;
	char **errors; size_t nerrors, cerrors;
};

/* The file `path` (added at its first mention). */
static struct tracefile *file_of(struct summary *s, const char *path)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].path, path)) return &s->files[i];
	struct tracefile f = { xstrdup(path), 0, 0, 0 };
	VEC_PUSH(s->files, s->nfiles, s->cfiles, f);
	return &s->files[s->nfiles - 1];
}

/* Several processes may write the same path (a pattern without %p and a
 * shim that does not add the pid): each final line then counts. */
static void parse_summary(struct summary *s, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) return;
	char line[PATH_MAX + 256];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		const char *file = NULL, *error = NULL;
		int closed = 0;
		uint64_t events = 0, dropped = 0;
		for (char *p = line; *p;) {
			while (*p == ' ') p++;
			char *eq = strchr(p, '='), *sp = NULL;
			if (!*p || !eq) break;
			*eq = 0;
			if (strcmp(p, "file") && strcmp(p, "error") && (sp = strchr(eq + 1, ' '))) *sp = 0;
			if (!strcmp(p, "events")) { events = strtoull(eq + 1, NULL, 10); closed = 1; }
			else if (!strcmp(p, "dropped")) dropped = strtoull(eq + 1, NULL, 10);
			else if (!strcmp(p, "file")) file = eq + 1;
			else if (!strcmp(p, "error")) error = eq + 1;
			if (!sp) break;
			p = sp + 1;
		}
		struct tracefile *t = file ? file_of(s, file) : NULL;
		if (t && closed) {
			t->closed = 1;
			t->events += events;
			t->dropped += dropped;
		}
		if (error) VEC_PUSH(s->errors, s->nerrors, s->cerrors, xstrdup(error));
	}
	fclose(f);
}

/* "PATH (1.2 MB)", "PATH (56.0 kB, truncated)", "PATH (missing: ...)" or
 * "PATH (3 B, unreadable: ...)", the
 * file as it is on disk now: its size, and whether it ends with the index a
 * closed trace has (libprof's footer); *truncated set. */
static void describe_file(char *out, size_t n, const struct tracefile *f, int *truncated)
{
	struct stat st;
	char size[32];
	if (stat(f->path, &st) != 0) {
		snprintf(out, n, "%s (missing: %s)", f->path, strerror(errno));
		return;
	}
	fmt_bytes(size, sizeof(size), (uint64_t)st.st_size);
	gp_reader *r = NULL;
	if (gp_reader_open(f->path, &r) != 0) {
		snprintf(out, n, "%s (%s, unreadable: %s)", f->path, size, gp_reader_errmsg(NULL));
		return;
	}
	struct gp_footer_info fi = { 0 };
	int whole = gp_reader_footer(r, &fi) == 0 && fi.present;
	gp_reader_close(r);
	if (!whole) *truncated = 1;
	snprintf(out, n, "%s (%s%s)", f->path, size, whole ? "" : ", truncated");
}

static int flight_armed(void)
{
	const char *fr = getenv("GPUPROF_FLIGHT_RECORDER");
	return fr && *fr && strcmp(fr, "0");
}

/* The last line: what the shims said, checked against the disk. */
static void print_summary(struct summary *s, int status)
{
	char sig[96] = "";
	if (WIFSIGNALED(status))
		snprintf(sig, sizeof(sig), "the job was killed by signal %d (%s); ", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	if (!s->nfiles) {
		if (s->nerrors)
			fprintf(stderr, "gpuprof: %sno trace written: %s%s\n", sig, s->errors[0],
				s->nerrors > 1 ? " (and in other processes)" : "");
		else if (flight_armed())
			/* GPUPROF_FLIGHT_RECORDER: the recorder's own file is an
			 * unlinked spool; only captures are files */
			fprintf(stderr, "gpuprof: %sflight recorder: nothing was captured, nothing written\n", sig);
		else if (*sig)
			fprintf(stderr, "gpuprof: %sno traced process had created a trace file\n", sig);
		else
			fprintf(stderr, "gpuprof: no trace written (the job made no CUDA calls, or libgpuprof.so was not loaded)\n");
		return;
	}
	uint64_t events = 0, dropped = 0;
	size_t closed = 0;
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].closed) { closed++; events += s->files[i].events; dropped += s->files[i].dropped; }
	fprintf(stderr, "gpuprof: %s", sig);
	if (closed == s->nfiles)
		fprintf(stderr, "%" PRIu64 " events, %" PRIu64 " dropped, ", events, dropped);
	else if (closed)
		fprintf(stderr, "%" PRIu64 " events, %" PRIu64 " dropped in the %zu closed trace%s, ", events, dropped,
			closed, closed > 1 ? "s" : "");
	if (s->nfiles > 1) fprintf(stderr, "wrote %zu files:", s->nfiles);
	else fputs("wrote", stderr);
	int truncated = 0;
	for (size_t i = 0; i < s->nfiles; i++) {
		char d[PATH_MAX + 128];
		describe_file(d, sizeof(d), &s->files[i], &truncated);
		fprintf(stderr, "%s %s", i ? "," : "", d);
	}
	if (truncated)
		fputs("; truncated = the process ended without closing its trace (killed, or os._exit()): "
		      "the records up to its last flush are there", stderr);
	if (s->nerrors)
		fprintf(stderr, "; %zu process%s wrote no trace: %s", s->nerrors, s->nerrors > 1 ? "es" : "", s->errors[0]);
	fputc('\n', stderr);
}

static void summary_free(struct summary *s)
{
	for (size_t i = 0; i < s->nfiles; i++) free(s->files[i].path);
	free(s->files);
	for (size_t i = 0; i < s->nerrors; i++) free(s->errors[i]);
	free(s->errors);
}

static void cleanup_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		char p[PATH_MAX];
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.') continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* The summary files in run's directory: names that start with "summary". */
static int is_summary(const struct dirent *e) { return !strncmp(e->d_name, "summary", 7); }

static void prepend_env(const char *name, const char *val, const char *sep)
{
	const char *old = getenv(name);
	if (old && *old) {
		/* already first (nested gpuprof run): leave it */
		size_t l = strlen(val);
		if (!strncmp(old, val, l) && (old[l] == 0 || strchr(" :", old[l])))
			return;
		char *v = xmalloc(strlen(val) + strlen(sep) + strlen(old) + 1);
		sprintf(v, "%s%s%s", val, sep, old);
		setenv(name, v, 1);
		free(v);
	} else {
		setenv(name, val, 1);
	}
}

/* GPUPROF_LAYERS (--layers): the folder of the Python module that marks
 * layers' backward (shim/python/sitecustomize.py, built into
 * lib/gpuprof-python/ next to the library) goes first on PYTHONPATH.
 * 0, or -1 with a message (the module not found). */
static int layers_env(const char *lib)
{
	const char *e = getenv("GPUPROF_LAYERS");
	struct gp_setting_value v;
	if (!e || gp_setting_parse(GP_SET_LAYERS, e, &v) || !v.u) return 0;
	char dir[PATH_MAX], mod[PATH_MAX + 32];
	snprintf(dir, sizeof(dir), "%s", lib);
	char *slash = strrchr(dir, '/');
	if (slash) *slash = 0;
	size_t l = strlen(dir);
	snprintf(dir + l, sizeof(dir) - l, "/gpuprof-python");
	snprintf(mod, sizeof(mod), "%s/sitecustomize.py", dir);
	if (access(mod, R_OK) != 0)
		return tool_fail(-1, "--layers: cannot find %s: %s (make builds it next to libgpuprof.so)", mod,
				 strerror(errno));
	setenv("GPUPROF_LAYERS", "1", 1);
	prepend_env("PYTHONPATH", dir, ":");
	return 0;
}

enum { O_API = 256, O_FLUSH, O_BUF, O_MAXMEM, O_WINDOW, O_STACKS, O_METRICS, O_NOFOLLOW, O_STATUS, O_PM, O_CAPTURE,
       O_ACTIVITY, O_FLIGHT, O_SAMPLE, O_TRIGGER, O_FLIGHT_API, O_LAYERS, O_STEPS, O_END };

/* The options that are one of the shim's settings (libprof/gp_settings.h):
 * the value checked as the shim reads it (gp_setting_parse, the shim's own
 * parser, so that what `gpuprof run` accepts the shim understands the same
 * way, and a typo is a usage error, not a job run with the default and a
 * warning), then put in the job's environment under the setting's name. */
static const struct run_setting {
	int opt;
	enum gp_setting_id id;
	const char *dflt; /* an optional argument left out */
	int nonzero;      /* 0 (off) is no use here */
	const char *bad;  /* the message for a bad value (%s: the value) */
} run_settings[] = {
	{ O_API, GP_SET_API, NULL, 0, "--api must be default, all or none" },
	{ O_ACTIVITY, GP_SET_ACTIVITY, NULL, 0,
	  "--activity: '%s' is not a comma-separated list of kernel, memcpy, memset, peer, sync, memory, device, "
	  "default, all, none" },
	{ O_FLUSH, GP_SET_FLUSH_MS, NULL, 0, "--flush-ms needs a number of milliseconds (1..3600000)" },
	{ O_WINDOW, GP_SET_GPU_WINDOW, NULL, 0,
	  "--gpu-window needs ON/PERIOD with 0 < ON < PERIOD, e.g. 1/10 or 500ms/10s (seconds when no unit)" },
	{ O_CAPTURE, GP_SET_CAPTURE_RANGE, NULL, 0, "--capture-range must be cudaProfilerApi or none" },
	/* the shim takes 0..1000 samples per second */
	{ O_METRICS, GP_SET_GPU_METRICS, "10", 1, "--gpu-metrics=HZ needs a whole number from 1 to 1000" },
	/* the shim's rule: a unit, 100us..10s */
	{ O_PM, GP_SET_PM_SAMPLING, "10ms", 1,
	  "--pm-sampling=INTERVAL needs a time with a unit from 100us to 10s, e.g. 10ms" },
	{ O_FLIGHT, GP_SET_FLIGHT_RECORDER, "30s", 1,
	  "--flight-recorder=DURATION needs a duration like 30s or 5m, up to 24h" },
	{ O_SAMPLE, GP_SET_SAMPLE_STEPS, NULL, 1, "--sample-steps needs 1/N with N from 2 to 1000000" },
	{ O_FLIGHT_API, GP_SET_FLIGHT_API, NULL, 0, "--flight-api needs auto, always or capture" },
	{ O_STEPS, GP_SET_STEPS, NULL, 0, "--steps needs auto, nvtx or off" },
};

/* Option c if it is one of run_settings: 1 taken (*v its value), -1 a bad
 * value (the message printed), 0 not one of them. */
static int run_setting(int c, const char *arg, struct gp_setting_value *v)
{
	for (size_t i = 0; i < sizeof(run_settings) / sizeof(run_settings[0]); i++) {
		const struct run_setting *rs = &run_settings[i];
		if (rs->opt != c) continue;
		const char *val = arg ? arg : rs->dflt;
		if (gp_setting_parse(rs->id, val, v) || (rs->nonzero && !v->u)) return tool_fail(-1, rs->bad, val);
		setenv(gp_setting_get(rs->id)->name, val, 1);
		return 1;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "api", required_argument, NULL, O_API },
		{ "activity", required_argument, NULL, O_ACTIVITY },
		{ "flush-ms", required_argument, NULL, O_FLUSH },
		{ "buffer-size", required_argument, NULL, O_BUF },
		{ "max-memory", required_argument, NULL, O_MAXMEM },
		{ "gpu-window", required_argument, NULL, O_WINDOW },
		{ "stacks", no_argument, NULL, O_STACKS },
		{ "layers", no_argument, NULL, O_LAYERS },
		{ "capture-range", required_argument, NULL, O_CAPTURE },
		{ "gpu-metrics", optional_argument, NULL, O_METRICS },
		{ "no-follow", no_argument, NULL, O_NOFOLLOW },
		{ "status", required_argument, NULL, O_STATUS },
		{ "pm-sampling", optional_argument, NULL, O_PM },
		{ "flight-recorder", optional_argument, NULL, O_FLIGHT },
		{ "sample-steps", required_argument, NULL, O_SAMPLE },
		{ "flight-api", required_argument, NULL, O_FLIGHT_API },
		{ "steps", required_argument, NULL, O_STEPS },
		{ "trigger", required_argument, NULL, O_TRIGGER },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int quiet = 0, follow = 1, c, opt_capture = 0, opt_rules = 0;
	int given[O_END - O_API] = { 0 }; /* the options given, by O_* */
	struct gp_setting_value v;
	/* '+': stop at the first non-option, the job's own options are its own */
	while ((c = getopt_long(argc, argv, "+ho:q", opts, NULL)) != -1) {
		if (c >= O_API) given[c - O_API] = 1;
		int taken = run_setting(c, optarg, &v);
		if (taken < 0) return EXIT_USAGE;
		if (c == O_CAPTURE && taken) opt_capture = v.u == GP_CAPTURE_PROFILER_API;
		if (taken) continue;
		switch (c) {
		case 'o':
			if (!*optarg) return tool_usage("empty --output");
			setenv("GPUPROF_OUTPUT", optarg, 1);
			break;
		case O_BUF: case O_MAXMEM: {
			enum gp_setting_id id = c == O_BUF ? GP_SET_BUFFER_SIZE : GP_SET_MAX_MEMORY;
			if (gp_setting_parse(id, optarg, &v))
				return tool_usage("--%s needs a size like 4M, at least %" PRIu64,
						  c == O_BUF ? "buffer-size" : "max-memory", gp_setting_get(id)->min);
			char buf[32];
			snprintf(buf, sizeof(buf), "%" PRIu64, v.u);
			setenv(gp_setting_get(id)->name, buf, 1);
			break;
		}
		case O_STACKS: {
			/* --stacks turns stacks on; it does not take GPUPROF_STACKS=all
			 * from the environment back to sampled (docs/CLI.md says
			 * the two go together) */
			const char *e = getenv("GPUPROF_STACKS");
			if (!e || strcmp(e, "all"))
				setenv("GPUPROF_STACKS", "1", 1);
			break;
		}
		case O_LAYERS: setenv("GPUPROF_LAYERS", "1", 1); break;
		case O_NOFOLLOW: follow = 0; break;
		case O_STATUS:
			if (!*optarg) return tool_usage("empty --status");
			setenv("GPUPROF_STATUS", optarg, 1);
			break;
		case O_TRIGGER: {
			struct gp_trigger_rules r;
			char why[160];
			if (gp_parse_trigger_rules(optarg, &r, why, sizeof(why)))
				return tool_usage("--trigger: %s", why);
			setenv("GPUPROF_TRIGGER", optarg, 1);
			opt_rules = r.what != 0;
			break;
		}
		case 'q': quiet = 1; break;
		case 'h': cmd_run_help(stdout); return EXIT_OK;
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	int window = given[O_WINDOW - O_API], flight = given[O_FLIGHT - O_API];
	int armed = flight || given[O_SAMPLE - O_API]; /* GPU activity switched by the shim */
	if (window && opt_capture) {
		/* both switch the same CUPTI activity kinds */
		return tool_usage("--capture-range=cudaProfilerApi and --gpu-window cannot be combined");
	}
	if (armed && (window || opt_capture))
		return tool_usage("--%s cannot be combined with --%s (they switch the same GPU activity)",
				  flight ? "flight-recorder" : "sample-steps", window ? "gpu-window" : "capture-range");
	if (given[O_FLIGHT_API - O_API] && !armed)
		return tool_usage("--flight-api needs --flight-recorder or --sample-steps (API calls are recorded all "
				  "the time otherwise)");
	if (given[O_STEPS - O_API] && !armed)
		return tool_usage("--steps needs --flight-recorder or --sample-steps (nothing else uses steps while "
				  "the job runs)");
	if (opt_rules && !armed)
		return tool_usage("--trigger needs --flight-recorder or --sample-steps (GPU activity is recorded all "
				  "the time otherwise)");
	if (optind >= argc) return tool_usage("no command given (usage: gpuprof run [options] -- command ...)");
	char lib[PATH_MAX];
	if (find_lib(lib, sizeof(lib)) < 0)
		return EXIT_USAGE;

	if (layers_env(lib) < 0) return EXIT_USAGE;

	setenv("GPUPROF_FOLLOW_EXEC", follow ? "1" : "0", 1);
	if (quiet) setenv("GPUPROF_QUIET", "1", 1);
	prepend_env("LD_PRELOAD", lib, ":");
	setenv("CUDA_INJECTION64_PATH", lib, 1);
	setenv("NVTX_INJECTION64_PATH", lib, 1);

	/* A private directory for the summary: every traced process (forks,
	 * ranks started by the job) writes or appends there. */
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], sum[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/gpuprof-run.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int have_dir = mkdtemp(dir) != NULL;
	if (have_dir) {
		snprintf(sum, sizeof(sum), "%s/summary", dir);
		setenv("GPUPROF_SUMMARY", sum, 1);
	}

	struct sigaction sa = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART }, old[3];
	sigemptyset(&sa.sa_mask);
	const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	for (int i = 0; i < 3; i++) sigaction(sigs[i], &sa, &old[i]);

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		tool_err("fork: %s", strerror(errno));
		if (have_dir) cleanup_dir(dir);
		return EXIT_BADINPUT;
	}
	if (pid == 0) {
		for (int i = 0; i < 3; i++) sigaction(sigs[i], &old[i], NULL);
		execvp(argv[optind], argv + optind);
		int e = errno;
		fprintf(stderr, "gpuprof run: cannot execute %s: %s\n", argv[optind], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	int status = 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) { status = 0; break; }
	}
	child_pid = 0;
	int code = WIFEXITED(status) ? WEXITSTATUS(status)
		 : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

	if (have_dir) {
		struct summary s;
		memset(&s, 0, sizeof(s));
		struct dirent **names; /* in the C locale alphasort is strcmp's order */
		int nn = scandir(dir, &names, is_summary, alphasort);
		for (int i = 0; i < nn; i++) {
			char p[PATH_MAX + 300];
			snprintf(p, sizeof(p), "%s/%s", dir, names[i]->d_name);
			parse_summary(&s, p);
			free(names[i]);
		}
		if (nn >= 0) free(names);
		if (!quiet) print_summary(&s, status);
		summary_free(&s);
		cleanup_dir(dir);
	}
	return code;
}
