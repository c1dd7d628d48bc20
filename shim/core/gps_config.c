/* gps_config.c — GPUPROF_* environment → struct gps_config, through the one
 * table of settings and their parsers (libprof/gp_settings.c), and output
 * path pattern expansion.  Every `gpuprof run` option maps to one variable
 * (docs/CONFIG.md is the list).  Pure functions: unit-tested without CUPTI. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_config.h"
#include "core/gps_log.h"

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

/* An enumerated setting's value by its name ("?" if it has none). */
static const char *word(enum gp_setting_id id, unsigned value)
{
	const char *w = gp_setting_word_of(id, value);
	return w ? w : "?";
}

/* One line of the settings that decide what a trace holds, for the process
 * record (docs/FORMAT.md, since 1.2) and `gpuprof info`: a reader who finds
 * no sync records can tell whether the kind was off. */
size_t gps_config_describe(const struct gps_config *c, char *buf, size_t n)
{
	size_t used = 0;
	if (!n)
		return 0;
	buf[0] = 0;
	describe_add(buf, n, &used, "activity=");
	unsigned named = 0; /* bits written: a kind once, by its first name (peer, not memcpy2) */
	for (const struct gp_setting_word *w = gp_setting_get(GP_SET_ACTIVITY)->words; w->word; w++) {
		unsigned bit = w->value;
		if (bit && !(bit & (bit - 1)) && (c->activity & bit) && !(named & bit)) {
			describe_add(buf, n, &used, "%s%s", named ? "," : "", w->word);
			named |= bit;
		}
	}
	describe_add(buf, n, &used, "%s api=%s api_mode=%s api_driver=%d stacks=%s clock=%s", named ? "" : "none",
		     word(GP_SET_API, c->api_set), word(GP_SET_API_MODE, c->api_mode), c->api_driver,
		     word(GP_SET_STACKS, c->stacks), word(GP_SET_CLOCK, c->clock));
	if (c->win_on_ns)
		describe_add(buf, n, &used, " gpu_window=%" PRIu64 "ns/%" PRIu64 "ns", c->win_on_ns, c->win_period_ns);
	if (c->capture_range == GP_CAPTURE_PROFILER_API)
		describe_add(buf, n, &used, " capture_range=%s", word(GP_SET_CAPTURE_RANGE, c->capture_range));
	if (c->coexist != GP_COEXIST_YIELD)
		describe_add(buf, n, &used, " coexist=%s", word(GP_SET_COEXIST, c->coexist));
	if (c->gpu_metrics_hz)
		describe_add(buf, n, &used, " gpu_metrics_hz=%u", c->gpu_metrics_hz);
	if (c->pm_interval_ns)
		describe_add(buf, n, &used, " pm_sampling=%" PRIu64 "ns", c->pm_interval_ns);
	if (c->flight_ns)
		describe_add(buf, n, &used, " flight_recorder=%" PRIu64 "ns", c->flight_ns);
	if (c->sample_steps)
		describe_add(buf, n, &used, " sample_steps=1/%u", c->sample_steps);
	if (c->flight_ns || c->sample_steps)
		describe_add(buf, n, &used, " flight_api=%s", word(GP_SET_FLIGHT_API, c->flight_api));
	if ((c->flight_ns || c->sample_steps) && c->steps != GP_STEPS_AUTO)
		describe_add(buf, n, &used, " steps=%s", word(GP_SET_STEPS, c->steps));
	if (c->rules.what)
		describe_add(buf, n, &used, " trigger=%s", c->rules_text);
	return used;
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
			gps_warn(__VA_ARGS__);  \
	} while (0)

static void complain(enum gp_setting_id id, const char *text, const struct gp_setting_value *v)
{
	const struct gp_setting *s = gp_setting_get(id);
	if (s->type == GP_SETTING_TEXT)
		cfg_log("%s is too long (max %d bytes); using the default", s->name, GP_SETTING_TEXT_MAX - 1);
	else if (s->type == GP_SETTING_KINDS)
		cfg_log("%s: unknown kind '%.*s' (%s); %s%s", s->name, (int)v->badlen, v->bad, s->syntax,
			s->on_bad ? s->on_bad : "using ", s->on_bad ? "" : s->def);
	else
		cfg_log("%s=%s not understood (%s); %s%s", s->name, text, s->syntax,
			s->on_bad ? s->on_bad : "using ", s->on_bad ? "" : s->def);
}

/* id's value: the environment's when it is set and understood, else (after
 * one complaint about a bad one) the table's default. */
static struct gp_setting_value setting(enum gp_setting_id id)
{
	struct gp_setting_value v;
	const char *text = getenv(gp_setting_get(id)->name);
	if (text && *text) {
		if (gp_setting_parse(id, text, &v) == 0)
			return v;
		complain(id, text, &v);
	}
	gp_setting_default(id, &v);
	return v;
}

static void setting_text(char dst[GP_SETTING_TEXT_MAX], enum gp_setting_id id)
{
	struct gp_setting_value v = setting(id);
	snprintf(dst, GP_SETTING_TEXT_MAX, "%s", v.text ? v.text : "");
}

/* docs/FLIGHT.md's settings.  Armed mode and step sampling switch the same
 * activity kinds as GPU windows and capture ranges: with either of those
 * they are off; anomaly rules need one of them (GPU activity is on all the
 * time otherwise: nothing to start). */
static void load_flight(struct gps_config *c)
{
	c->flight_ns = setting(GP_SET_FLIGHT_RECORDER).u;
	c->flight_max_memory = (size_t)setting(GP_SET_FLIGHT_MAX_MEMORY).u;
	c->flight_api = (enum gp_flight_api)setting(GP_SET_FLIGHT_API).u;
	c->flight_api_rate = (uint32_t)setting(GP_SET_FLIGHT_API_RATE).u;
	c->sample_steps = (uint32_t)setting(GP_SET_SAMPLE_STEPS).u;
	c->steps = (enum gp_steps_source)setting(GP_SET_STEPS).u;
	c->trigger_steps = (uint32_t)setting(GP_SET_TRIGGER_STEPS).u;
	c->trigger_ns = setting(GP_SET_TRIGGER_SECONDS).u;
	c->trigger_cooldown_ns = setting(GP_SET_TRIGGER_COOLDOWN).u;
	c->trigger_max = (uint32_t)setting(GP_SET_TRIGGER_MAX).u;
	c->control = (int)setting(GP_SET_CONTROL).u;
	setting_text(c->control_dir, GP_SET_CONTROL_DIR);
	const char *name = gp_setting_get(GP_SET_TRIGGER)->name, *rules = getenv(name);
	char why[160];
	if (rules && *rules && gp_parse_trigger_rules(rules, &c->rules, why, sizeof why) != 0) {
		cfg_log("%s=%s not understood: %s; no anomaly rules", name, rules, why);
		memset(&c->rules, 0, sizeof c->rules);
	} else if (rules && strlen(rules) < sizeof c->rules_text) {
		snprintf(c->rules_text, sizeof c->rules_text, "%s", rules);
	}
	if ((c->flight_ns || c->sample_steps) && (c->win_period_ns || c->capture_range)) {
		cfg_log("%s cannot be combined with %s; %s",
			c->flight_ns ? "GPUPROF_FLIGHT_RECORDER" : "GPUPROF_SAMPLE_STEPS",
			c->win_period_ns ? "GPUPROF_GPU_WINDOW" : "GPUPROF_CAPTURE_RANGE",
			c->flight_ns && c->sample_steps ? "no flight recorder, no step sampling"
			: c->flight_ns ? "no flight recorder" : "no step sampling");
		c->flight_ns = 0;
		c->sample_steps = 0;
	}
	/* armed mode's default rule, once armed mode stands: a job that runs
	 * out of device memory leaves a capture of what led to it
	 * (docs/FLIGHT.md "Anomaly rules").  A rule list given replaces it
	 * (add oom to keep it). */
	if ((!rules || !*rules) && c->flight_ns && c->api_set != GP_API_SET_NONE) {
		c->rules.what = GP_RULE_OOM;
		snprintf(c->rules_text, sizeof c->rules_text, "oom");
	}
	/* a CUDA error is seen in the API callbacks: with API calls only in
	 * captures there are none to see between them */
	if ((c->rules.what & GP_RULE_CUDA_ERROR) && c->flight_api == GP_FLIGHT_API_AUTO)
		c->flight_api = GP_FLIGHT_API_ALWAYS; /* auto never leaves them out then */
	if ((c->rules.what & GP_RULE_CUDA_ERROR) && c->flight_api == GP_FLIGHT_API_CAPTURE) {
		cfg_log("%s's cuda-error needs the API calls that GPUPROF_FLIGHT_API=capture leaves out; "
			"no cuda-error rule", name);
		c->rules.what &= ~(unsigned)GP_RULE_CUDA_ERROR;
	}
	if (c->rules.what && !c->flight_ns && !c->sample_steps) {
		cfg_log("%s needs GPUPROF_FLIGHT_RECORDER or GPUPROF_SAMPLE_STEPS (GPU activity is recorded all the time "
			"otherwise); no anomaly rules", name);
		memset(&c->rules, 0, sizeof c->rules);
	}
}

void gps_config_load(struct gps_config *c)
{
	memset(c, 0, sizeof *c);
	const char *root = getenv(gp_setting_get(GP_SET_ROOT_PID)->name);
	cfg_quiet = root && *root && atoi(root) != (int)getpid();
	c->quiet = (int)setting(GP_SET_QUIET).u;
	c->enabled = (int)setting(GP_SET_ENABLE).u;
	c->follow_exec = (int)setting(GP_SET_FOLLOW_EXEC).u;
	c->graph_sites = (int)setting(GP_SET_GRAPH_SITES).u;
	c->api_driver = (int)setting(GP_SET_API_DRIVER).u;
	setting_text(c->output, GP_SET_OUTPUT);
	setting_text(c->cupti_path, GP_SET_CUPTI);
	setting_text(c->summary, GP_SET_SUMMARY);
	setting_text(c->nvml_path, GP_SET_NVML);
	setting_text(c->status, GP_SET_STATUS);
	c->api_set = (enum gp_api_set)setting(GP_SET_API).u;
	c->api_mode = (enum gp_api_mode)setting(GP_SET_API_MODE).u;
	c->bind = (enum gp_bind)setting(GP_SET_BIND).u;
	c->activity = (unsigned)setting(GP_SET_ACTIVITY).u;
	c->flush_ms = (uint32_t)setting(GP_SET_FLUSH_MS).u;
	c->buffer_size = (size_t)setting(GP_SET_BUFFER_SIZE).u;
	c->ring_size = (size_t)setting(GP_SET_RING_SIZE).u;
	c->max_memory = (size_t)setting(GP_SET_MAX_MEMORY).u;
	struct gp_setting_value w = setting(GP_SET_GPU_WINDOW);
	c->win_on_ns = w.on_ns;
	c->win_period_ns = w.period_ns;
	c->clock = (enum gp_clock_mode)setting(GP_SET_CLOCK).u;
	c->coexist = (enum gp_coexist)setting(GP_SET_COEXIST).u;
	c->capture_range = (enum gp_capture_range)setting(GP_SET_CAPTURE_RANGE).u;
	if (c->capture_range && c->win_period_ns) {
		/* both would switch the same activity kinds */
		cfg_log("GPUPROF_CAPTURE_RANGE and GPUPROF_GPU_WINDOW cannot be combined; no GPU windows");
		c->win_on_ns = c->win_period_ns = 0;
	}
	c->gpu_metrics_hz = (uint32_t)setting(GP_SET_GPU_METRICS).u;
	c->pm_interval_ns = setting(GP_SET_PM_SAMPLING).u;
	c->stacks = (enum gp_stacks_mode)setting(GP_SET_STACKS).u;
	struct gp_setting_value u = setting(GP_SET_UNWIND);
	c->unwind = (enum gp_unwind)u.u;
	snprintf(c->unwind_lib, sizeof c->unwind_lib, "%s", u.text ? u.text : "");
	c->zstd_level = (int)setting(GP_SET_ZSTD_LEVEL).i;
	load_flight(c);
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
