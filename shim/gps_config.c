/* gps_config.c — GPUPROF_* environment → struct gps_config, and output path
 * pattern expansion.  Every `gpuprof run` option maps to one variable here
 * (docs/CONFIG.md is the list).  Pure functions: unit-tested without CUPTI. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gps.h"

#define DEFAULT_OUTPUT "gpuprof-%h-%p.gpuprof"

static int env_bool(const char *name, int def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") ||
	    !strcasecmp(v, "false"))
		return 0;
	return 1;
}

int gps_parse_size(const char *s, size_t *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	unsigned long long mul = 1;
	switch (tolower((unsigned char)*end)) {
	case 0: break;
	case 'k': mul = 1ull << 10; end++; break;
	case 'm': mul = 1ull << 20; end++; break;
	case 'g': mul = 1ull << 30; end++; break;
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
	*out = (size_t)(v * mul);
	return 0;
}

static const struct { const char *name; unsigned bits; } act_names[] = {
	{"kernel", GPS_ACT_KERNEL}, {"memcpy", GPS_ACT_MEMCPY}, {"memset", GPS_ACT_MEMSET},
	{"peer", GPS_ACT_PEER}, {"memcpy2", GPS_ACT_PEER}, {"sync", GPS_ACT_SYNC},
	{"memory", GPS_ACT_MEMORY}, {"device", GPS_ACT_DEVICE},
	{"default", GPS_ACT_DEFAULT}, {"all", GPS_ACT_ALL}, {"none", 0},
};

/* Appends to buf[0..n) at *used, cutting at the end; *used stays < n. */
static void describe_add(char *buf, size_t n, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void describe_add(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
	if (*used + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + *used, n - *used, fmt, ap);
	va_end(ap);
	if (m > 0)
		*used = *used + (size_t)m < n ? *used + (size_t)m : n - 1;
}

/* One line of the settings that decide what a trace holds, for the process
 * record (docs/FORMAT.md, since 1.2) and `gpuprof info`: a reader who finds
 * no sync records can tell whether the kind was off. */
size_t gps_config_describe(const struct gps_config *c, char *buf, size_t n)
{
	static const char *const api_names[] = {"default", "all", "none"};
	static const char *const stacks_names[] = {"off", "sampled", "all"};
	static const char *const clock_names[] = {"auto", "monotonic", "tsc"};
	size_t used = 0;
	if (!n)
		return 0;
	buf[0] = 0;
	describe_add(buf, n, &used, "activity=");
	unsigned named = 0; /* bits written: a kind once, by its first name (peer, not memcpy2) */
	for (size_t i = 0; i < sizeof(act_names) / sizeof(act_names[0]); i++) {
		unsigned bit = act_names[i].bits;
		if (bit && !(bit & (bit - 1)) && (c->activity & bit) && !(named & bit)) {
			describe_add(buf, n, &used, "%s%s", named ? "," : "", act_names[i].name);
			named |= bit;
		}
	}
	describe_add(buf, n, &used, "%s api=%s api_mode=%s api_driver=%d stacks=%s clock=%s", named ? "" : "none",
		     api_names[(unsigned)c->api_set % 3], c->api_mode == GPS_MODE_ACTIVITY ? "activity" : "callback",
		     c->api_driver, stacks_names[(unsigned)c->stacks % 3], clock_names[(unsigned)c->clock % 3]);
	if (c->win_on_ns)
		describe_add(buf, n, &used, " gpu_window=%" PRIu64 "ns/%" PRIu64 "ns", c->win_on_ns, c->win_period_ns);
	if (c->capture_range == GPS_CAPTURE_PROFILER_API)
		describe_add(buf, n, &used, " capture_range=cudaProfilerApi");
	if (c->gpu_metrics_hz)
		describe_add(buf, n, &used, " gpu_metrics_hz=%u", c->gpu_metrics_hz);
	if (c->pm_interval_ns)
		describe_add(buf, n, &used, " pm_sampling=%" PRIu64 "ns", c->pm_interval_ns);
	return used;
}

int gps_parse_activity(const char *s, unsigned *bits, const char **bad, size_t *badlen)
{
	unsigned b = 0;
	const char *p = s;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		if (!*p)
			break;
		const char *w = p;
		while (*p && *p != ',' && *p != ' ')
			p++;
		size_t n = (size_t)(p - w);
		size_t i;
		for (i = 0; i < sizeof act_names / sizeof act_names[0]; i++)
			if (strlen(act_names[i].name) == n && !strncasecmp(w, act_names[i].name, n))
				break;
		if (i == sizeof act_names / sizeof act_names[0]) {
			if (bad) {
				*bad = w;
				*badlen = n;
			}
			return -1;
		}
		b |= act_names[i].bits;
	}
	*bits = b;
	return 0;
}

/* One duration of GPUPROF_GPU_WINDOW: the syntax `gpuprof run --gpu-window`
 * accepts (tools/cmd_run.c), seconds when no unit is given. */
static int parse_window_duration(const char *s, size_t n, uint64_t *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!isdigit((unsigned char)buf[0]) && buf[0] != '.')
		return -1; /* no sign, no "inf"/"nan", no leading blanks */
	char *end;
	double v = strtod(buf, &end);
	if (end == buf || !(v >= 0) || v > 1e7) /* > ~115 days: surely a typo */
		return -1;
	double mul;
	if (!*end || !strcmp(end, "s"))
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

int gps_parse_window(const char *s, uint64_t *on_ns, uint64_t *period_ns)
{
	if (!s)
		return -1;
	const char *slash = strchr(s, '/');
	uint64_t on, period;
	if (!slash || parse_window_duration(s, (size_t)(slash - s), &on) ||
	    parse_window_duration(slash + 1, strlen(slash + 1), &period))
		return -1;
	if (on == 0 || on >= period)
		return -1;
	*on_ns = on;
	*period_ns = period;
	return 0;
}

int gps_parse_hz(const char *s, uint32_t *hz)
{
	if (!s || !isdigit((unsigned char)s[0]))
		return -1; /* no sign, no blanks */
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > 1000) /* above 1 kHz NVML itself does not refresh */
		return -1;
	*hz = (uint32_t)v;
	return 0;
}

int gps_parse_pm_interval(const char *s, uint64_t *ns)
{
	if (!s)
		return -1;
	if (!strcmp(s, "0") || !strcasecmp(s, "off")) {
		*ns = 0;
		return 0;
	}
	size_t n = strlen(s);
	uint64_t v;
	/* a unit is required: "10" could mean 10 ms or 10 s */
	if (n == 0 || !isalpha((unsigned char)s[n - 1]) || parse_window_duration(s, n, &v))
		return -1;
	if (v < 100000ull || v > 10000000000ull) /* 100 us .. 10 s */
		return -1;
	*ns = v;
	return 0;
}

int gps_env_rank(void)
{
	const char *v = getenv("RANK");
	if (!v || !*v)
		v = getenv("LOCAL_RANK");
	if (!v || !*v)
		return -1;
	char *end;
	long r = strtol(v, &end, 10);
	if (*end || r < 0 || r > 1 << 24)
		return -1;
	return (int)r;
}

/* Config complaints: one line per job, not per process.  Descendants (fork
 * or exec'd children, and the program a wrapper like `timeout` or `sh -c`
 * starts) inherit the same environment, and the job's first traced process
 * (GPUPROF_ROOT_PID, set by it) has already said what is wrong with it. */
static int cfg_quiet;
#define cfg_log(...)                            \
	do {                                    \
		if (!cfg_quiet)                 \
			gps_log(1, __VA_ARGS__); \
	} while (0)

static void copy_env(char *dst, size_t n, const char *name, const char *def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		v = def;
	if (strlen(v) >= n) {
		cfg_log("%s is too long (max %zu bytes); using the default", name, n - 1);
		v = def;
	}
	snprintf(dst, n, "%s", v);
}

void gps_config_load(struct gps_config *c)
{
	memset(c, 0, sizeof *c);
	const char *root = getenv("GPUPROF_ROOT_PID");
	cfg_quiet = root && *root && atoi(root) != (int)getpid();
	c->quiet = env_bool("GPUPROF_QUIET", 0);
	c->enabled = env_bool("GPUPROF_ENABLE", 1);
	c->follow_exec = env_bool("GPUPROF_FOLLOW_EXEC", 1);
	c->flush_ms = 500;
	c->api_mode = GPS_DEFAULT_API_MODE;
	c->api_driver = env_bool("GPUPROF_API_DRIVER", 1);
	c->buffer_size = 8u << 20;
	c->activity = GPS_ACT_DEFAULT;
	copy_env(c->output, sizeof c->output, "GPUPROF_OUTPUT", DEFAULT_OUTPUT);
	copy_env(c->cupti_path, sizeof c->cupti_path, "GPUPROF_CUPTI", "");
	copy_env(c->summary, sizeof c->summary, "GPUPROF_SUMMARY", "");
	copy_env(c->nvml_path, sizeof c->nvml_path, "GPUPROF_NVML", "");
	copy_env(c->status, sizeof c->status, "GPUPROF_STATUS", "");

	const char *v;
	if ((v = getenv("GPUPROF_API")) && *v) {
		if (!strcasecmp(v, "all"))
			c->api_set = GPS_API_ALL;
		else if (!strcasecmp(v, "none"))
			c->api_set = GPS_API_NONE;
		else if (!strcasecmp(v, "default"))
			c->api_set = GPS_API_DEFAULT;
		else
			cfg_log("GPUPROF_API=%s not understood (default|all|none); using default", v);
	}
	if ((v = getenv("GPUPROF_API_MODE")) && *v) {
		if (!strcasecmp(v, "activity"))
			c->api_mode = GPS_MODE_ACTIVITY;
		else if (!strcasecmp(v, "callback"))
			c->api_mode = GPS_MODE_CALLBACK;
		else
			cfg_log("GPUPROF_API_MODE=%s not understood (callback|activity); using %s", v,
				GPS_DEFAULT_API_MODE == GPS_MODE_ACTIVITY ? "activity" : "callback");
	}
	if ((v = getenv("GPUPROF_BIND")) && *v) {
		if (!strcasecmp(v, "eager"))
			c->bind = GPS_BIND_EAGER;
		else if (!strcasecmp(v, "injection"))
			c->bind = GPS_BIND_INJECTION;
		else if (strcasecmp(v, "auto"))
			cfg_log("GPUPROF_BIND=%s not understood (auto|eager|injection); using auto", v);
	}
	if ((v = getenv("GPUPROF_ACTIVITY")) && *v) {
		const char *bad = NULL;
		size_t badlen = 0;
		unsigned bits;
		if (gps_parse_activity(v, &bits, &bad, &badlen) == 0)
			c->activity = bits;
		else
			cfg_log("GPUPROF_ACTIVITY: unknown kind '%.*s' (kernel,memcpy,memset,peer,sync,memory,device,default,all,none); using default",
				(int)badlen, bad);
	}
	if ((v = getenv("GPUPROF_FLUSH_MS")) && *v) {
		char *end;
		unsigned long ms = strtoul(v, &end, 10);
		if (*end || ms == 0 || ms > 3600000)
			cfg_log("GPUPROF_FLUSH_MS=%s not understood (1..3600000); using 500", v);
		else
			c->flush_ms = (uint32_t)ms;
	}
	struct { const char *name; size_t *dst; size_t min; } sizes[] = {
		{"GPUPROF_BUFFER_SIZE", &c->buffer_size, 64u << 10},
		{"GPUPROF_RING_SIZE", &c->ring_size, 4u << 10},
		{"GPUPROF_MAX_MEMORY", &c->max_memory, 1u << 20},
	};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t sz;
		if (!(v = getenv(sizes[i].name)) || !*v)
			continue;
		if (gps_parse_size(v, &sz) || sz < sizes[i].min)
			cfg_log("%s=%s not understood (a size like 8M, at least %zu); using the default",
				sizes[i].name, v, sizes[i].min);
		else
			*sizes[i].dst = sz;
	}
	if ((v = getenv("GPUPROF_GPU_WINDOW")) && *v) {
		if (gps_parse_window(v, &c->win_on_ns, &c->win_period_ns))
			cfg_log("GPUPROF_GPU_WINDOW=%s not understood (ON/PERIOD, e.g. 1/10 or 500ms/10s, 0 < ON < PERIOD); GPU activity recorded all the time",
				v);
	}
	if ((v = getenv("GPUPROF_CLOCK")) && *v) {
		if (!strcmp(v, "tsc"))
			c->clock = GPS_CLOCK_TSC;
		else if (!strcmp(v, "monotonic"))
			c->clock = GPS_CLOCK_MONOTONIC;
		else if (strcmp(v, "auto"))
			cfg_log("GPUPROF_CLOCK=%s not understood (auto|tsc|monotonic); using auto", v);
	}
	if ((v = getenv("GPUPROF_CAPTURE_RANGE")) && *v) {
		if (!strcmp(v, "cudaProfilerApi"))
			c->capture_range = GPS_CAPTURE_PROFILER_API;
		else if (strcmp(v, "none"))
			cfg_log("GPUPROF_CAPTURE_RANGE=%s not understood (cudaProfilerApi|none); recording all the time",
				v);
	}
	if (c->capture_range && c->win_period_ns) {
		/* both would switch the same activity kinds */
		cfg_log("GPUPROF_CAPTURE_RANGE and GPUPROF_GPU_WINDOW cannot be combined; no GPU windows");
		c->win_on_ns = c->win_period_ns = 0;
	}
	if ((v = getenv("GPUPROF_GPU_METRICS")) && *v) {
		if (gps_parse_hz(v, &c->gpu_metrics_hz))
			cfg_log("GPUPROF_GPU_METRICS=%s not understood (samples per second, 0..1000); no GPU metrics",
				v);
	}
	if ((v = getenv("GPUPROF_PM_SAMPLING")) && *v) {
		if (gps_parse_pm_interval(v, &c->pm_interval_ns))
			cfg_log("GPUPROF_PM_SAMPLING=%s not understood (an interval with a unit, 100us..10s, e.g. 10ms; 0 = off); no PM sampling",
				v);
	}
	if ((v = getenv("GPUPROF_STACKS")) && *v) {
		if (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") ||
		    !strcasecmp(v, "false"))
			c->stacks = GPS_STACKS_OFF;
		else if (!strcmp(v, "1") || !strcasecmp(v, "sampled") || !strcasecmp(v, "on") ||
			 !strcasecmp(v, "yes") || !strcasecmp(v, "true"))
			c->stacks = GPS_STACKS_SAMPLED;
		else if (!strcasecmp(v, "all"))
			c->stacks = GPS_STACKS_ALL;
		else
			cfg_log("GPUPROF_STACKS=%s not understood (0|1|sampled|all); no call stacks", v);
	}
	if ((v = getenv("GPUPROF_UNWIND")) && *v) {
		if (!strcasecmp(v, "libunwind"))
			c->unwind = GPS_UNWIND_LIBUNWIND;
		else if (!strcasecmp(v, "glibc"))
			c->unwind = GPS_UNWIND_GLIBC;
		else if (strchr(v, '/') && strlen(v) < sizeof c->unwind_lib) {
			c->unwind = GPS_UNWIND_LIBUNWIND;
			snprintf(c->unwind_lib, sizeof c->unwind_lib, "%s", v);
		} else if (strcasecmp(v, "auto"))
			cfg_log("GPUPROF_UNWIND=%s not understood (auto|libunwind|glibc|/path/to/libunwind.so); using auto",
				v);
	}
	if ((v = getenv("GPUPROF_ZSTD_LEVEL")) && *v)
		c->zstd_level = atoi(v);
}

int gps_expand_pattern(const char *pat, char *out, size_t outsz, int pid,
		       const char *host, int rank, time_t start)
{
	size_t o = 0;
	char tmp[64];
	for (const char *p = pat; *p; p++) {
		const char *add = NULL;
		if (*p == '%' && p[1]) {
			p++;
			switch (*p) {
			case 'p': snprintf(tmp, sizeof tmp, "%d", pid); add = tmp; break;
			case 'h': add = host; break;
			case 'r': snprintf(tmp, sizeof tmp, "%d", rank < 0 ? 0 : rank); add = tmp; break;
			case 't': {
				struct tm tm;
				localtime_r(&start, &tm);
				strftime(tmp, sizeof tmp, "%Y%m%d-%H%M%S", &tm);
				add = tmp;
				break;
			}
			case '%': add = "%"; break;
			default: /* unknown: keep it literally */
				tmp[0] = '%'; tmp[1] = *p; tmp[2] = 0; add = tmp; break;
			}
		} else {
			tmp[0] = *p; tmp[1] = 0; add = tmp;
		}
		size_t n = strlen(add);
		if (o + n >= outsz)
			return -1;
		memcpy(out + o, add, n);
		o += n;
	}
	if (o >= outsz)
		return -1;
	out[o] = 0;
	return 0;
}
