/* gp_settings.h — every GPUPROF_* environment variable the shim reads, in
 * one table (name, type, default, syntax, help: gp_settings.c), and the
 * parsers of their syntax.  The shim reads its environment through it
 * (shim/core/gps_config.c); `gpuprof run` checks its options with the same
 * parsers before it sets the variables (tools/cmd_run.c), so the two cannot
 * disagree about what a value means.  No CUDA, no allocation, no I/O.
 *
 * Adding a setting: an id below, its line in the table (gp_settings.c), the
 * field that holds it in the shim (shim/core/gps_config.h/.c) and, when
 * `gpuprof run` has an option for it, that option (tools/cmd_run.c); the
 * user's list is docs/CONFIG.md. */
#ifndef GP_SETTINGS_H
#define GP_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* Longest text value (paths, patterns) + 1: the shim's buffers are this. */
#define GP_SETTING_TEXT_MAX 1024

enum gp_setting_id {
	GP_SET_ENABLE,
	GP_SET_QUIET,
	GP_SET_FOLLOW_EXEC,
	GP_SET_OUTPUT,
	GP_SET_API,
	GP_SET_API_MODE,
	GP_SET_API_DRIVER,
	GP_SET_BIND,
	GP_SET_ACTIVITY,
	GP_SET_FLUSH_MS,
	GP_SET_BUFFER_SIZE,
	GP_SET_RING_SIZE,
	GP_SET_MAX_MEMORY,
	GP_SET_ZSTD_LEVEL,
	GP_SET_CUPTI,
	GP_SET_SUMMARY,
	GP_SET_GPU_WINDOW,
	GP_SET_CAPTURE_RANGE,
	GP_SET_GPU_METRICS,
	GP_SET_NVML,
	GP_SET_PM_SAMPLING,
	GP_SET_STATUS,
	GP_SET_STACKS,
	GP_SET_GRAPH_SITES,
	GP_SET_LAYERS,
	GP_SET_UNWIND,
	GP_SET_CLOCK,
	GP_SET_ROOT_PID,
	GP_SET_FLIGHT_RECORDER,
	GP_SET_FLIGHT_MAX_MEMORY,
	GP_SET_FLIGHT_API,
	GP_SET_FLIGHT_API_RATE,
	GP_SET_SAMPLE_STEPS,
	GP_SET_STEPS,
	GP_SET_TRIGGER,
	GP_SET_TRIGGER_STEPS,
	GP_SET_TRIGGER_SECONDS,
	GP_SET_TRIGGER_COOLDOWN,
	GP_SET_TRIGGER_MAX,
	GP_SET_CONTROL,
	GP_SET_CONTROL_DIR,
	GP_SET_COEXIST,
	GP_SET_CACHE_DIR,
	GP_SET_COUNT
};

enum gp_setting_type {
	GP_SETTING_BOOL,     /* "0", "no", "off", "false" (any case): 0; anything else: 1 */
	GP_SETTING_TEXT,     /* a path or pattern, shorter than GP_SETTING_TEXT_MAX */
	GP_SETTING_INT,      /* atoi(): never refused */
	GP_SETTING_UINT,     /* decimal digits only, min..max */
	GP_SETTING_SIZE,     /* gp_parse_size, at least min */
	GP_SETTING_ENUM,     /* one of the words (any case) */
	GP_SETTING_KINDS,    /* gp_parse_activity */
	GP_SETTING_WINDOW,   /* gp_parse_window */
	GP_SETTING_INTERVAL, /* gp_parse_pm_interval */
	GP_SETTING_DURATION, /* gp_parse_duration (seconds when no unit), min..max ns;
				"0" or "off": 0, accepted when min is 0 */
	GP_SETTING_ONE_IN,   /* gp_parse_one_in: "1/N" or "N", min..max; "0" or "off": 0 */
	GP_SETTING_RULES,    /* gp_parse_trigger_rules */
};

/* Values of the enumerated settings. */
enum gp_api_set {
	GP_API_SET_DEFAULT = 0,
	GP_API_SET_ALL = 1,
	GP_API_SET_NONE = 2
};
enum gp_api_mode {
	GP_API_MODE_CALLBACK = 0,
	GP_API_MODE_ACTIVITY = 1
};
enum gp_bind {
	GP_BIND_AUTO = 0,
	GP_BIND_EAGER = 1,
	GP_BIND_INJECTION = 2
};
/* GPUPROF_STACKS: off, sampled (rate-limited per call site), all */
enum gp_stacks_mode {
	GP_STACKS_OFF = 0,
	GP_STACKS_SAMPLED = 1,
	GP_STACKS_ALL = 2
};
/* GPUPROF_UNWIND: libunwind when it can be loaded, else glibc backtrace() */
enum gp_unwind {
	GP_UNWIND_AUTO = 0,
	GP_UNWIND_LIBUNWIND = 1,
	GP_UNWIND_GLIBC = 2
};
/* GPUPROF_CLOCK: how the trace clock (CLOCK_MONOTONIC either way) is read;
 * not a gp_clock_id, which names the clock of a trace's timestamps */
enum gp_clock_mode {
	GP_CLOCK_MODE_AUTO = 0,
	GP_CLOCK_MODE_MONOTONIC = 1,
	GP_CLOCK_MODE_TSC = 2
};
/* GPUPROF_FLIGHT_API: when the flight recorder and step sampling record API
 * calls (docs/FLIGHT.md "API calls only in captures") */
enum gp_flight_api {
	GP_FLIGHT_API_ALWAYS = 0,  /* as every trace: the history has them */
	GP_FLIGHT_API_CAPTURE = 1, /* only while GPU activity is on; the history is NVTX */
	GP_FLIGHT_API_AUTO = 2     /* armed: always until the job makes more than
				      GPUPROF_FLIGHT_API_RATE records a second, then capture */
};

/* GPUPROF_COEXIST: who keeps CUPTI when the job's own profiler (torch.profiler,
 * Kineto) asks for it while gpuprof holds it (docs/CONFIG.md "Beside the
 * job's own profiler") */
enum gp_coexist {
	GP_COEXIST_YIELD = 0, /* the job's profiler gets CUPTI; gpuprof resumes after it */
	GP_COEXIST_KEEP = 1   /* gpuprof keeps CUPTI; the profiler's CUPTI calls fail */
};

/* GPUPROF_STEPS: where the shim's training steps come from (docs/STEPS.md,
 * "Steps found online (shim)"); used only when a feature uses steps */
enum gp_steps_source {
	GP_STEPS_AUTO = 0, /* NVTX step ranges; without them, found online from API calls */
	GP_STEPS_NVTX = 1, /* NVTX step ranges only */
	GP_STEPS_OFF = 2   /* no steps: step features fall back to time */
};

enum gp_capture_range {
	GP_CAPTURE_ALL = 0,
	GP_CAPTURE_PROFILER_API = 1
};

/* GPUPROF_ACTIVITY kinds, a bit each */
enum gp_activity_bits {
	GP_ACT_KERNEL = 1u << 0,
	GP_ACT_MEMCPY = 1u << 1,
	GP_ACT_MEMSET = 1u << 2,
	GP_ACT_PEER = 1u << 3,
	GP_ACT_SYNC = 1u << 4,
	GP_ACT_MEMORY = 1u << 5,
	GP_ACT_DEVICE = 1u << 6,
	/* SYNCHRONIZATION and MEMORY2 are opt-in: on MNIST they cost 13 points
	 * of step time (docs/PERFORMANCE.md, run H4), and nsys leaves them off
	 * by default too. */
	GP_ACT_DEFAULT = GP_ACT_KERNEL | GP_ACT_MEMCPY | GP_ACT_MEMSET | GP_ACT_PEER | GP_ACT_DEVICE,
	GP_ACT_ALL = GP_ACT_DEFAULT | GP_ACT_SYNC | GP_ACT_MEMORY,
};

/* GPUPROF_TRIGGER: the anomaly rules (gp_parse_trigger_rules) */
enum gp_rule_bits {
	GP_RULE_STEP = 1u << 0,       /* a step longer than step_factor x the rolling median */
	GP_RULE_IDLE = 1u << 1,       /* GPU idle above idle_pct % (NVML utilisation) */
	GP_RULE_RANGE = 1u << 2,      /* an NVTX range or mark named `range` */
	GP_RULE_CUDA_ERROR = 1u << 3, /* a recorded CUDA API call returned an error */
	GP_RULE_DROP = 1u << 4,       /* GPU busy of a window drop_pct % below the windows' rolling median */
	GP_RULE_OOM = 1u << 5,        /* a device allocation call failed: out of memory (armed mode's default) */
};
#define GP_RULE_RANGE_MAX 64 /* bytes of a range name + 1 */
/* drop>P%'s window when the rule names none: 10 s */
#define GP_RULE_DROP_WINDOW_NS 10000000000ull
struct gp_trigger_rules {
	unsigned what;                 /* gp_rule_bits */
	double step_factor;            /* GP_RULE_STEP: 1.1 .. 1000 */
	unsigned idle_pct;             /* GP_RULE_IDLE: 1 .. 99 */
	char range[GP_RULE_RANGE_MAX]; /* GP_RULE_RANGE */
	unsigned drop_pct;             /* GP_RULE_DROP: 1 .. 99 */
	uint64_t drop_window_ns;       /* GP_RULE_DROP: 0.1 s .. 10 min */
};

/* A word of an ENUM or KINDS setting and its value.  A value's first word in
 * the list is its name (what `gpuprof info` shows). */
struct gp_setting_word {
	const char *word;
	unsigned value;
};

struct gp_setting {
	const char *name; /* "GPUPROF_FLUSH_MS" */
	enum gp_setting_type type;
	const char *def;                     /* the default, in the setting's syntax; NULL: 0 / "" (the
				component's own default) */
	uint64_t min, max;                   /* UINT: range; SIZE: min */
	const struct gp_setting_word *words; /* ENUM, KINDS: NULL-terminated */
	const char *path_means;              /* ENUM: a value with a '/' is a path, meaning this word
				   (GPUPROF_UNWIND=/path: "libunwind", that file) */
	const char *syntax;                  /* for a complaint: "(1..3600000)" without the parentheses */
	const char *on_bad;                  /* what a bad value leads to; NULL: "using DEF" */
	const char *help;                    /* one line */
};

/* What a setting's text means. */
struct gp_setting_value {
	uint64_t u;                /* BOOL, UINT, SIZE (bytes), ENUM, KINDS (bits), INTERVAL (ns) */
	int64_t i;                 /* INT */
	uint64_t on_ns, period_ns; /* WINDOW */
	const char *text;          /* TEXT; ENUM given a path: the path (else NULL); points into the text */
	const char *bad;           /* KINDS, refused: the word not understood (points into the text) */
	size_t badlen;
};

/* The table's line for id (never NULL for id < GP_SET_COUNT). */
const struct gp_setting *gp_setting_get(enum gp_setting_id id);
/* Parses text (not NULL; "" is refused but by BOOL, TEXT and INT) by id's
 * syntax into *v (cleared first).  0, or -1. */
int gp_setting_parse(enum gp_setting_id id, const char *text, struct gp_setting_value *v);
/* *v = id's default (its def parsed; zero when def is NULL). */
void gp_setting_default(enum gp_setting_id id, struct gp_setting_value *v);
/* The name of an ENUM value or of one KINDS bit (its first word: "peer",
 * not "memcpy2"), NULL when none. */
const char *gp_setting_word_of(enum gp_setting_id id, unsigned value);

/* The parsers, also on their own.  Each returns 0, or -1 leaving the
 * outputs untouched (but gp_parse_activity's *bad / *badlen). */

/* "8M", "512k", "1G", "4096", "4KiB", "2mb": digits, an optional k/m/g
 * (binary: 1024-based) with optional "i" and "b"; no sign, no blanks; a value
 * that does not fit 64 bits is refused. */
int gp_parse_size(const char *s, uint64_t *out);
/* Decimal digits only (no sign, no blanks), min <= value <= max. */
int gp_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* GPUPROF_ACTIVITY: kind names (GP_ACT_* bits, any case) separated by ','
 * or ' ', at least one; on -1, *bad / *badlen (when bad is not NULL) name the
 * first word not understood (empty for a list without words). */
int gp_parse_activity(const char *s, unsigned *bits, const char **bad, size_t *badlen);
/* A duration: a number (decimals allowed, no sign, at most 1e7) with a unit
 * ns|us|ms|s, seconds when unit_required is 0 and none is given. */
int gp_parse_duration(const char *s, int unit_required, uint64_t *ns);
/* GPUPROF_GPU_WINDOW "ON/PERIOD": two durations, seconds when no unit
 * ("2/30", "500ms/10s"); 0 < ON < PERIOD. */
int gp_parse_window(const char *s, uint64_t *on_ns, uint64_t *period_ns);
/* GPUPROF_GPU_METRICS "HZ": an integer 0..1000 (0 = off; above 1 kHz NVML
 * itself does not refresh). */
int gp_parse_hz(const char *s, uint32_t *hz);
/* GPUPROF_PM_SAMPLING "INTERVAL": a duration with its unit (required: "10"
 * could mean 10 ms or 10 s), 100us..10s; "0" or "off" (any case) = 0 (off). */
int gp_parse_pm_interval(const char *s, uint64_t *ns);
/* GPUPROF_SAMPLE_STEPS "1/N" (one step in N) or "N"; "0" or "off" (any
 * case): 0.  A nonzero N must lie in min..max. */
int gp_parse_one_in(const char *s, uint64_t min, uint64_t max, uint64_t *n);
/* GPUPROF_TRIGGER: rules separated by ',': "step>Kx" (K from 1.1 to 1000,
 * the x optional), "idle>P%" (P from 1 to 99, the % optional), "drop>P%"
 * or "drop>P%/W" (P from 1 to 99, the % optional; W a duration from 0.1 s
 * to 10 min, default 10 s), "range=NAME"
 * (an NVTX range or mark name, 1 to 63 bytes, no ','; one such rule),
 * "cuda-error", "oom"; "none" or "off" alone: no rule.  On -1, err (when not NULL)
 * holds the reason. */
int gp_parse_trigger_rules(const char *s, struct gp_trigger_rules *r, char *err, size_t errn);

#endif
