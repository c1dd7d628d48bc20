/* gp_settings.c — the table of GPUPROF_* settings and the parsers of their
 * syntax (gp_settings.h).  Pure functions: unit-tested in
 * tests/shim/test_settings.c. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gp_settings.h"

static const struct gp_setting_word api_words[] = {
	{ "default", GP_API_SET_DEFAULT },
	{ "all", GP_API_SET_ALL },
	{ "none", GP_API_SET_NONE },
	{ NULL, 0 },
};
static const struct gp_setting_word api_mode_words[] = {
	{ "callback", GP_API_MODE_CALLBACK },
	{ "activity", GP_API_MODE_ACTIVITY },
	{ NULL, 0 },
};
static const struct gp_setting_word bind_words[] = {
	{ "auto", GP_BIND_AUTO },
	{ "eager", GP_BIND_EAGER },
	{ "injection", GP_BIND_INJECTION },
	{ NULL, 0 },
};
/* a kind once by its first name: "peer", not "memcpy2" */
static const struct gp_setting_word activity_words[] = {
	{ "kernel", GP_ACT_KERNEL },
	{ "memcpy", GP_ACT_MEMCPY },
	{ "memset", GP_ACT_MEMSET },
	{ "peer", GP_ACT_PEER },
	{ "memcpy2", GP_ACT_PEER },
	{ "sync", GP_ACT_SYNC },
	{ "memory", GP_ACT_MEMORY },
	{ "device", GP_ACT_DEVICE },
	{ "default", GP_ACT_DEFAULT },
	{ "all", GP_ACT_ALL },
	{ "none", 0 },
	{ NULL, 0 },
};
static const struct gp_setting_word capture_words[] = {
	{ "none", GP_CAPTURE_ALL },
	{ "cudaProfilerApi", GP_CAPTURE_PROFILER_API },
	{ NULL, 0 },
};
static const struct gp_setting_word coexist_words[] = {
	{ "yield", GP_COEXIST_YIELD },
	{ "keep", GP_COEXIST_KEEP },
	{ NULL, 0 },
};
static const struct gp_setting_word flight_api_words[] = {
	{ "always", GP_FLIGHT_API_ALWAYS },
	{ "capture", GP_FLIGHT_API_CAPTURE },
	{ "auto", GP_FLIGHT_API_AUTO },
	{ NULL, 0 },
};
static const struct gp_setting_word steps_words[] = {
	{ "auto", GP_STEPS_AUTO },
	{ "nvtx", GP_STEPS_NVTX },
	{ "off", GP_STEPS_OFF },
	{ NULL, 0 },
};
static const struct gp_setting_word stacks_words[] = {
	{ "off", GP_STACKS_OFF },
	{ "0", GP_STACKS_OFF },
	{ "no", GP_STACKS_OFF },
	{ "false", GP_STACKS_OFF },
	{ "sampled", GP_STACKS_SAMPLED },
	{ "1", GP_STACKS_SAMPLED },
	{ "on", GP_STACKS_SAMPLED },
	{ "yes", GP_STACKS_SAMPLED },
	{ "true", GP_STACKS_SAMPLED },
	{ "all", GP_STACKS_ALL },
	{ NULL, 0 },
};
static const struct gp_setting_word unwind_words[] = {
	{ "auto", GP_UNWIND_AUTO },
	{ "libunwind", GP_UNWIND_LIBUNWIND },
	{ "glibc", GP_UNWIND_GLIBC },
	{ NULL, 0 },
};
static const struct gp_setting_word clock_words[] = {
	{ "auto", GP_CLOCK_MODE_AUTO },
	{ "monotonic", GP_CLOCK_MODE_MONOTONIC },
	{ "tsc", GP_CLOCK_MODE_TSC },
	{ NULL, 0 },
};

/* The settings, LTTng-UST style: one line each.  syntax and on_bad make the
 * shim's complaint "NAME=VALUE not understood (SYNTAX); ON_BAD" (on_bad
 * NULL: "using DEF"). */
static const struct gp_setting settings[GP_SET_COUNT] = {
	[GP_SET_ENABLE] = { .name = "GPUPROF_ENABLE", .type = GP_SETTING_BOOL, .def = "1", .help = "0: the shim does nothing at all" },
	[GP_SET_QUIET] = { .name = "GPUPROF_QUIET", .type = GP_SETTING_BOOL, .def = "0", .help = "1: only errors and warnings are printed" },
	[GP_SET_FOLLOW_EXEC] = { .name = "GPUPROF_FOLLOW_EXEC", .type = GP_SETTING_BOOL, .def = "1", .help = "0: exec'd children are not traced" },
	[GP_SET_OUTPUT] = { .name = "GPUPROF_OUTPUT", .type = GP_SETTING_TEXT, .def = "gpuprof-%h-%p.gpuprof", .help = "trace path pattern: %p pid, %h host, %r rank, %t start time, %% a %" },
	[GP_SET_API] = { .name = "GPUPROF_API", .type = GP_SETTING_ENUM, .def = "default", .words = api_words, .syntax = "default|all|none", .help = "which CUDA API calls are recorded" },
	/* the default is the one place to flip the API capture mode (decided by
	 * GPU measurement, docs/PERFORMANCE.md) */
	[GP_SET_API_MODE] = { .name = "GPUPROF_API_MODE", .type = GP_SETTING_ENUM, .def = "callback", .words = api_mode_words, .syntax = "callback|activity", .help = "API calls from CUPTI callbacks or per-API activity records" },
	[GP_SET_API_DRIVER] = { .name = "GPUPROF_API_DRIVER", .type = GP_SETTING_BOOL, .def = "1", .help = "0: runtime API calls only" },
	[GP_SET_BIND] = { .name = "GPUPROF_BIND", .type = GP_SETTING_ENUM, .def = "auto", .words = bind_words, .syntax = "auto|eager|injection", .help = "when CUPTI is bound" },
	[GP_SET_ACTIVITY] = { .name = "GPUPROF_ACTIVITY", .type = GP_SETTING_KINDS, .def = "default", .words = activity_words, .syntax = "kernel,memcpy,memset,peer,sync,memory,device,default,all,none", .help = "GPU activity kinds, comma-separated" },
	[GP_SET_FLUSH_MS] = { .name = "GPUPROF_FLUSH_MS", .type = GP_SETTING_UINT, .def = "500", .min = 1, .max = 3600000, .syntax = "1..3600000", .help = "flush period of the writer and of CUPTI's buffers, ms" },
	[GP_SET_BUFFER_SIZE] = { .name = "GPUPROF_BUFFER_SIZE", .type = GP_SETTING_SIZE, .def = "8M", .min = 64u << 10, .syntax = "a size like 8M, at least 65536", .on_bad = "using the default", .help = "size of each CUPTI activity buffer" },
	[GP_SET_RING_SIZE] = { .name = "GPUPROF_RING_SIZE", .type = GP_SETTING_SIZE, .min = 4u << 10, .syntax = "a size like 8M, at least 4096", .on_bad = "using the default", .help = "per-thread ring (libprof's default when unset)" },
	[GP_SET_MAX_MEMORY] = { .name = "GPUPROF_MAX_MEMORY", .type = GP_SETTING_SIZE, .min = 1u << 20, .syntax = "a size like 8M, at least 1048576", .on_bad = "using the default", .help = "cap on the recorder's memory (libprof's default when unset)" },
	[GP_SET_ZSTD_LEVEL] = { .name = "GPUPROF_ZSTD_LEVEL", .type = GP_SETTING_INT, .help = "zstd level of the trace frames (libprof's default when unset)" },
	[GP_SET_CUPTI] = { .name = "GPUPROF_CUPTI", .type = GP_SETTING_TEXT, .help = "the libcupti to load; nothing else is tried" },
	[GP_SET_SUMMARY] = { .name = "GPUPROF_SUMMARY", .type = GP_SETTING_TEXT, .help = "file each traced process appends its summary line to (gpuprof run)" },
	[GP_SET_GPU_WINDOW] = { .name = "GPUPROF_GPU_WINDOW", .type = GP_SETTING_WINDOW, .syntax = "ON/PERIOD, e.g. 1/10 or 500ms/10s, 0 < ON < PERIOD", .on_bad = "GPU activity recorded all the time", .help = "GPU activity only for ON every PERIOD" },
	[GP_SET_CAPTURE_RANGE] = { .name = "GPUPROF_CAPTURE_RANGE", .type = GP_SETTING_ENUM, .def = "none", .words = capture_words, .syntax = "cudaProfilerApi|none", .on_bad = "recording all the time", .help = "record only between cudaProfilerStart and cudaProfilerStop" },
	[GP_SET_GPU_METRICS] = { .name = "GPUPROF_GPU_METRICS", .type = GP_SETTING_UINT, .def = "0", .min = 0, .max = 1000, .syntax = "samples per second, 0..1000", .on_bad = "no GPU metrics", .help = "NVML GPU metrics, samples per second (0: off)" },
	[GP_SET_NVML] = { .name = "GPUPROF_NVML", .type = GP_SETTING_TEXT, .help = "the NVML library to load (default libnvidia-ml.so.1)" },
	[GP_SET_PM_SAMPLING] = { .name = "GPUPROF_PM_SAMPLING", .type = GP_SETTING_INTERVAL, .def = "off", .syntax = "an interval with a unit, 100us..10s, e.g. 10ms; 0 = off", .on_bad = "no PM sampling", .help = "CUPTI PM sampling interval of GPU time" },
	[GP_SET_STATUS] = { .name = "GPUPROF_STATUS", .type = GP_SETTING_TEXT, .help = "live status file pattern (JSON, rewritten about once a second)" },
	[GP_SET_STACKS] = { .name = "GPUPROF_STACKS", .type = GP_SETTING_ENUM, .def = "off", .words = stacks_words, .syntax = "0|1|sampled|all", .on_bad = "no call stacks", .help = "call stacks of launches and copies" },
	[GP_SET_GRAPH_SITES] = { .name = "GPUPROF_GRAPH_SITES", .type = GP_SETTING_BOOL, .def = "1", .help = "with stacks: record CUDA graph nodes as captured (graph kernels under the layer that captured them); 0 turns it off" },
	/* read by gpuprof run (which puts shim/python/sitecustomize.py on
	 * PYTHONPATH) and by that module; the shim itself does not read it */
	[GP_SET_LAYERS] = { .name = "GPUPROF_LAYERS", .type = GP_SETTING_BOOL, .def = "0", .help = "gpuprof run: PyTorch jobs mark each layer's backward with NVTX ranges (backward kernels per layer without emit_nvtx)" },
	[GP_SET_UNWIND] = { .name = "GPUPROF_UNWIND", .type = GP_SETTING_ENUM, .def = "auto", .words = unwind_words, .path_means = "libunwind", .syntax = "auto|libunwind|glibc|/path/to/libunwind.so", .help = "how native frames are unwound" },
	[GP_SET_CLOCK] = { .name = "GPUPROF_CLOCK", .type = GP_SETTING_ENUM, .def = "auto", .words = clock_words, .syntax = "auto|tsc|monotonic", .help = "how timestamps are read" },
	[GP_SET_ROOT_PID] = { .name = "GPUPROF_ROOT_PID", .type = GP_SETTING_INT, .help = "set by the shim: pid of the job's first traced process" },
	/* docs/FLIGHT.md: armed mode, captures, step sampling, anomaly rules */
	[GP_SET_FLIGHT_RECORDER] = { .name = "GPUPROF_FLIGHT_RECORDER", .type = GP_SETTING_DURATION, .def = "0", .min = 0, .max = 24ull * 3600 * 1000000000ull, .syntax = "a duration like 30s or 5m (seconds when no unit), up to 24h; 0 = off", .on_bad = "no flight recorder", .help = "armed mode: GPU activity off, the last DURATION of records kept in memory" },
	[GP_SET_FLIGHT_MAX_MEMORY] = { .name = "GPUPROF_FLIGHT_MAX_MEMORY", .type = GP_SETTING_SIZE, .def = "64M", .min = 1u << 20, .syntax = "a size like 64M, at least 1048576", .on_bad = "using the default", .help = "cap on the flight recorder's kept (compressed) records" },
	[GP_SET_FLIGHT_API] = { .name = "GPUPROF_FLIGHT_API", .type = GP_SETTING_ENUM, .def = "auto", .words = flight_api_words, .syntax = "auto|always|capture", .help = "flight recorder, step sampling: API calls recorded always, or only while GPU activity is on (the history is NVTX only); auto: always until an armed job makes more than GPUPROF_FLIGHT_API_RATE records a second" },
	[GP_SET_FLIGHT_API_RATE] = { .name = "GPUPROF_FLIGHT_API_RATE", .type = GP_SETTING_UINT, .def = "10000", .min = 1, .max = 100000000, .syntax = "records per second, 1..100000000", .on_bad = "using the default", .help = "GPUPROF_FLIGHT_API=auto: the record rate of an armed job above which API calls are kept only in captures" },
	[GP_SET_SAMPLE_STEPS] = { .name = "GPUPROF_SAMPLE_STEPS", .type = GP_SETTING_ONE_IN, .def = "0", .min = 2, .max = 1000000, .syntax = "1/N or N, N from 2 to 1000000; 0 = off", .on_bad = "no step sampling", .help = "GPU activity on for one whole step in N" },
	[GP_SET_STEPS] = { .name = "GPUPROF_STEPS", .type = GP_SETTING_ENUM, .def = "auto", .words = steps_words, .syntax = "auto|nvtx|off", .help = "flight recorder, step sampling: training steps from NVTX step ranges; auto: without them, found online from the job's copies, synchronisations and launches" },
	[GP_SET_TRIGGER] = { .name = "GPUPROF_TRIGGER", .type = GP_SETTING_RULES, .syntax = "rules like step>3x,idle>50%,range=NAME,cuda-error,oom", .on_bad = "no anomaly rules", .help = "anomaly rules that start a capture (unset: oom with GPUPROF_FLIGHT_RECORDER)" },
	[GP_SET_TRIGGER_STEPS] = { .name = "GPUPROF_TRIGGER_STEPS", .type = GP_SETTING_UINT, .def = "5", .min = 1, .max = 100000, .syntax = "1..100000", .help = "whole steps a capture covers (rules; gpuprof trigger's default)" },
	[GP_SET_TRIGGER_SECONDS] = { .name = "GPUPROF_TRIGGER_SECONDS", .type = GP_SETTING_DURATION, .def = "5s", .min = 1000000ull, .max = 3600ull * 1000000000ull, .syntax = "a duration like 5s, 1ms to 1h (seconds when no unit)", .help = "length of a capture in a process without steps" },
	[GP_SET_TRIGGER_COOLDOWN] = { .name = "GPUPROF_TRIGGER_COOLDOWN", .type = GP_SETTING_DURATION, .def = "60s", .min = 0, .max = 24ull * 3600 * 1000000000ull, .syntax = "a duration like 60s (seconds when no unit), up to 24h; 0 = none", .help = "no rule fires for this long after a rule's capture ended" },
	[GP_SET_TRIGGER_MAX] = { .name = "GPUPROF_TRIGGER_MAX", .type = GP_SETTING_UINT, .def = "4", .min = 1, .max = 60, .syntax = "1..60", .help = "captures the rules may start per hour" },
	[GP_SET_CONTROL] = { .name = "GPUPROF_CONTROL", .type = GP_SETTING_BOOL, .def = "1", .help = "0: no control channel (gpuprof trigger cannot reach the job)" },
	[GP_SET_CONTROL_DIR] = { .name = "GPUPROF_CONTROL_DIR", .type = GP_SETTING_TEXT, .help = "the control directory (default $XDG_RUNTIME_DIR/gpuprof, else /tmp/gpuprof-UID)" },
	[GP_SET_COEXIST] = { .name = "GPUPROF_COEXIST", .type = GP_SETTING_ENUM, .def = "yield", .words = coexist_words, .syntax = "yield|keep", .help = "the job's own CUPTI profiler (torch.profiler) starting: gpuprof yields CUPTI to it and takes it back after it (yield), or keeps it (keep: the profiler records no GPU activity)" },
	/* read by the gpuprof tool, not the shim (tools/analysis/steps/step_index.h) */
	[GP_SET_CACHE_DIR] = { .name = "GPUPROF_CACHE_DIR", .type = GP_SETTING_TEXT, .help = "gpuprof: where the steps found in a trace are kept for the next --steps window (default $XDG_CACHE_HOME/gpuprof, else ~/.cache/gpuprof; off: nowhere)" },
};

const struct gp_setting *gp_setting_get(enum gp_setting_id id)
{
	return (unsigned)id < GP_SET_COUNT ? &settings[id] : NULL;
}

int gp_parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return -1; /* no sign, no blanks */
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned long long mul = 1;
	switch (tolower((unsigned char)*end)) {
	case 0: break;
	case 'k':
		mul = 1ull << 10;
		end++;
		break;
	case 'm':
		mul = 1ull << 20;
		end++;
		break;
	case 'g':
		mul = 1ull << 30;
		end++;
		break;
	default: return -1;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -1;
	if (v > (~0ull) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int gp_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static const struct gp_setting_word *find_word(const struct gp_setting_word *w, const char *s, size_t n)
{
	for (; w && w->word; w++)
		if (strlen(w->word) == n && !strncasecmp(s, w->word, n))
			return w;
	return NULL;
}

int gp_parse_activity(const char *s, unsigned *bits, const char **bad, size_t *badlen)
{
	unsigned b = 0;
	int words = 0;
	const char *p = s;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		if (!*p)
			break;
		const char *w = p;
		while (*p && *p != ',' && *p != ' ')
			p++;
		const struct gp_setting_word *k = find_word(activity_words, w, (size_t)(p - w));
		if (!k) {
			if (bad) {
				*bad = w;
				*badlen = (size_t)(p - w);
			}
			return -1;
		}
		b |= k->value;
		words++;
	}
	if (!words) { /* "" or ",": not a list of kinds */
		if (bad) {
			*bad = s;
			*badlen = 0;
		}
		return -1;
	}
	*bits = b;
	return 0;
}

/* s[0..n): a duration (gp_parse_duration) */
static int duration(const char *s, size_t n, int unit_required, uint64_t *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!isdigit((unsigned char)buf[0]) && buf[0] != '.')
		return -1; /* no sign, no "inf"/"nan", no leading blanks */
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno || !(v >= 0) || v > 1e7) /* > ~115 days: surely a typo */
		return -1;
	double mul;
	if (!*end && !unit_required)
		mul = 1e9;
	else if (!strcmp(end, "s"))
		mul = 1e9;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else
		return -1;
	*out = (uint64_t)(v * mul + 0.5);
	return 0;
}

int gp_parse_duration(const char *s, int unit_required, uint64_t *ns)
{
	return s ? duration(s, strlen(s), unit_required, ns) : -1;
}

int gp_parse_window(const char *s, uint64_t *on_ns, uint64_t *period_ns)
{
	if (!s)
		return -1;
	const char *slash = strchr(s, '/');
	uint64_t on, period;
	if (!slash || duration(s, (size_t)(slash - s), 0, &on) ||
	    duration(slash + 1, strlen(slash + 1), 0, &period))
		return -1;
	if (on == 0 || on >= period)
		return -1;
	*on_ns = on;
	*period_ns = period;
	return 0;
}

int gp_parse_hz(const char *s, uint32_t *hz)
{
	uint64_t v;
	const struct gp_setting *st = &settings[GP_SET_GPU_METRICS];
	if (gp_parse_uint(s, st->min, st->max, &v))
		return -1;
	*hz = (uint32_t)v;
	return 0;
}

int gp_parse_pm_interval(const char *s, uint64_t *ns)
{
	if (!s)
		return -1;
	if (!strcmp(s, "0") || !strcasecmp(s, "off")) {
		*ns = 0;
		return 0;
	}
	uint64_t v;
	if (gp_parse_duration(s, 1, &v))
		return -1;
	if (v < 100000ull || v > 10000000000ull) /* 100 us .. 10 s */
		return -1;
	*ns = v;
	return 0;
}

int gp_parse_one_in(const char *s, uint64_t min, uint64_t max, uint64_t *n)
{
	if (!s)
		return -1;
	if (!strcmp(s, "0") || !strcasecmp(s, "off")) {
		*n = 0;
		return 0;
	}
	if (!strncmp(s, "1/", 2))
		s += 2;
	return gp_parse_uint(s, min, max, n);
}

static int rule_fail(char *err, size_t errn, const char *w, size_t n, const char *why)
{
	if (err && errn)
		snprintf(err, errn, "'%.*s': %s", (int)n, w, why);
	return -1;
}

/* w[0..n): one rule into *r */
static int parse_rule(const char *w, size_t n, struct gp_trigger_rules *r, char *err, size_t errn)
{
	char buf[96];
	if (n >= sizeof buf)
		return rule_fail(err, errn, w, n, "too long");
	memcpy(buf, w, n);
	buf[n] = 0;
	char *end;
	if (!strncasecmp(buf, "step>", 5)) {
		const char *v = buf + 5;
		if (!isdigit((unsigned char)*v))
			return rule_fail(err, errn, w, n, "needs a factor, e.g. step>3x");
		errno = 0;
		double k = strtod(v, &end);
		if (*end == 'x' || *end == 'X')
			end++;
		if (*end || errno || !(k >= 1.1 && k <= 1000))
			return rule_fail(err, errn, w, n, "the factor must be from 1.1 to 1000, e.g. step>3x");
		r->what |= GP_RULE_STEP;
		r->step_factor = k;
		return 0;
	}
	if (!strncasecmp(buf, "idle>", 5)) {
		const char *v = buf + 5;
		if (!isdigit((unsigned char)*v))
			return rule_fail(err, errn, w, n, "needs a percentage, e.g. idle>50%");
		errno = 0;
		unsigned long p = strtoul(v, &end, 10);
		if (*end == '%')
			end++;
		if (*end || errno || p < 1 || p > 99)
			return rule_fail(err, errn, w, n, "the percentage must be from 1 to 99, e.g. idle>50%");
		r->what |= GP_RULE_IDLE;
		r->idle_pct = (unsigned)p;
		return 0;
	}
	if (!strncasecmp(buf, "drop>", 5)) {
		const char *v = buf + 5;
		if (!isdigit((unsigned char)*v))
			return rule_fail(err, errn, w, n, "needs a percentage, e.g. drop>50% or drop>50%/10s");
		errno = 0;
		unsigned long p = strtoul(v, &end, 10);
		if (*end == '%')
			end++;
		if ((*end && *end != '/') || errno || p < 1 || p > 99)
			return rule_fail(err, errn, w, n, "the percentage must be from 1 to 99, e.g. drop>50%");
		uint64_t win = GP_RULE_DROP_WINDOW_NS;
		if (*end == '/' && (gp_parse_duration(end + 1, 0, &win) || win < 100000000ull || win > 600000000000ull))
			return rule_fail(err, errn, w, n, "the window must be a duration from 0.1s to 10min, e.g. drop>50%/10s");
		r->what |= GP_RULE_DROP;
		r->drop_pct = (unsigned)p;
		r->drop_window_ns = win;
		return 0;
	}
	if (!strncasecmp(buf, "range=", 6)) {
		const char *v = buf + 6;
		if (!*v)
			return rule_fail(err, errn, w, n, "needs a range name");
		if (strlen(v) >= GP_RULE_RANGE_MAX)
			return rule_fail(err, errn, w, n, "the name is longer than 63 bytes");
		if (r->what & GP_RULE_RANGE)
			return rule_fail(err, errn, w, n, "only one range= rule");
		r->what |= GP_RULE_RANGE;
		memcpy(r->range, v, strlen(v) + 1); /* shorter than GP_RULE_RANGE_MAX: checked above */
		return 0;
	}
	if (!strcasecmp(buf, "oom")) {
		r->what |= GP_RULE_OOM;
		return 0;
	}
	if (!strcasecmp(buf, "cuda-error")) {
		r->what |= GP_RULE_CUDA_ERROR;
		return 0;
	}
	return rule_fail(err, errn, w, n, "not a rule (step>Kx, idle>P%, drop>P%[/W], range=NAME, cuda-error, oom)");
}

int gp_parse_trigger_rules(const char *s, struct gp_trigger_rules *out, char *err, size_t errn)
{
	struct gp_trigger_rules r;
	memset(&r, 0, sizeof r);
	if (err && errn)
		err[0] = 0;
	if (!s)
		return -1;
	if (!strcasecmp(s, "none") || !strcasecmp(s, "off")) {
		*out = r;
		return 0;
	}
	int words = 0;
	for (const char *p = s; *p;) {
		const char *w = p;
		while (*p && *p != ',')
			p++;
		if (p == w)
			return rule_fail(err, errn, s, strlen(s), "an empty rule");
		if (parse_rule(w, (size_t)(p - w), &r, err, errn))
			return -1;
		words++;
		if (*p == ',' && !*++p)
			return rule_fail(err, errn, s, strlen(s), "an empty rule");
	}
	if (!words)
		return rule_fail(err, errn, s, 0, "no rule");
	*out = r;
	return 0;
}

static int parse_bool(const char *s)
{
	return !(!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !strcasecmp(s, "false"));
}

int gp_setting_parse(enum gp_setting_id id, const char *text, struct gp_setting_value *v)
{
	const struct gp_setting *s = gp_setting_get(id);
	memset(v, 0, sizeof *v);
	if (!s || !text)
		return -1;
	switch (s->type) {
	case GP_SETTING_BOOL:
		v->u = (uint64_t)parse_bool(text);
		return 0;
	case GP_SETTING_TEXT:
		if (strlen(text) >= GP_SETTING_TEXT_MAX)
			return -1;
		v->text = text;
		return 0;
	case GP_SETTING_INT:
		v->i = atoi(text);
		return 0;
	case GP_SETTING_UINT:
		return gp_parse_uint(text, s->min, s->max, &v->u);
	case GP_SETTING_SIZE:
		return gp_parse_size(text, &v->u) || v->u < s->min ? -1 : 0;
	case GP_SETTING_ENUM: {
		const struct gp_setting_word *w = find_word(s->words, text, strlen(text));
		if (w) {
			v->u = w->value;
			return 0;
		}
		/* GPUPROF_UNWIND=/path/libunwind.so: that library */
		if (s->path_means && strchr(text, '/') && strlen(text) < GP_SETTING_TEXT_MAX &&
		    (w = find_word(s->words, s->path_means, strlen(s->path_means)))) {
			v->u = w->value;
			v->text = text;
			return 0;
		}
		return -1;
	}
	case GP_SETTING_KINDS: {
		unsigned bits;
		if (gp_parse_activity(text, &bits, &v->bad, &v->badlen))
			return -1;
		v->u = bits;
		return 0;
	}
	case GP_SETTING_WINDOW:
		return gp_parse_window(text, &v->on_ns, &v->period_ns);
	case GP_SETTING_INTERVAL:
		return gp_parse_pm_interval(text, &v->u);
	case GP_SETTING_DURATION:
		if (!strcmp(text, "0") || !strcasecmp(text, "off")) {
			v->u = 0;
			return s->min == 0 ? 0 : -1;
		}
		if (gp_parse_duration(text, 0, &v->u) || v->u < s->min || v->u > s->max || !v->u)
			return -1;
		return 0;
	case GP_SETTING_ONE_IN:
		return gp_parse_one_in(text, s->min, s->max, &v->u);
	case GP_SETTING_RULES: {
		struct gp_trigger_rules r;
		if (gp_parse_trigger_rules(text, &r, NULL, 0))
			return -1;
		v->text = text;
		v->u = r.what;
		return 0;
	}
	}
	return -1;
}

void gp_setting_default(enum gp_setting_id id, struct gp_setting_value *v)
{
	const struct gp_setting *s = gp_setting_get(id);
	if (!s || !s->def || gp_setting_parse(id, s->def, v) != 0)
		memset(v, 0, sizeof *v);
}

const char *gp_setting_word_of(enum gp_setting_id id, unsigned value)
{
	const struct gp_setting *s = gp_setting_get(id);
	for (const struct gp_setting_word *w = s ? s->words : NULL; w && w->word; w++)
		if (w->value == value)
			return w->word;
	return NULL;
}
