/* gps_config.h — the shim's configuration: the GPUPROF_* environment read
 * once, at start, through the settings table (libprof/gp_settings.h), and
 * the output-path patterns (core/gps_config.c). */
#ifndef GPS_CONFIG_H
#define GPS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gp_settings.h"

struct gps_config {
	int enabled;            /* GPUPROF_ENABLE (default 1) */
	int quiet;              /* GPUPROF_QUIET */
	int follow_exec;        /* GPUPROF_FOLLOW_EXEC (default 1) */
	int graph_sites;        /* GPUPROF_GRAPH_SITES (default 1) */
	enum gp_api_set api_set;   /* GPUPROF_API */
	enum gp_api_mode api_mode; /* GPUPROF_API_MODE */
	int api_driver;         /* GPUPROF_API_DRIVER (default 1): driver-domain calls too */
	enum gp_bind bind;      /* GPUPROF_BIND */
	unsigned activity;      /* GPUPROF_ACTIVITY: gp_activity_bits */
	uint32_t flush_ms;      /* GPUPROF_FLUSH_MS, default 500: writer, CUPTI ticker */
	size_t buffer_size;     /* CUPTI activity buffer, default 8 MiB */
	size_t ring_size;       /* per-thread ring, 0 = libprof default */
	size_t max_memory;      /* recorder cap, 0 = libprof default */
	int zstd_level;         /* 0 = libprof default */
	char output[GP_SETTING_TEXT_MAX];     /* pattern, GPUPROF_OUTPUT */
	char cupti_path[GP_SETTING_TEXT_MAX]; /* GPUPROF_CUPTI, "" = search */
	char summary[GP_SETTING_TEXT_MAX];    /* GPUPROF_SUMMARY, "" = none */
	uint64_t win_on_ns;     /* GPUPROF_GPU_WINDOW ON/PERIOD; 0 = off (always on) */
	uint64_t win_period_ns;
	uint32_t gpu_metrics_hz;  /* GPUPROF_GPU_METRICS, samples/s; 0 = off */
	char nvml_path[GP_SETTING_TEXT_MAX];  /* GPUPROF_NVML, "" = libnvidia-ml.so.1 */
	enum gp_stacks_mode stacks;           /* GPUPROF_STACKS */
	enum gp_unwind unwind;                /* GPUPROF_UNWIND */
	char unwind_lib[GP_SETTING_TEXT_MAX]; /* GPUPROF_UNWIND=/path/libunwind.so: that one only */
	char status[GP_SETTING_TEXT_MAX];     /* GPUPROF_STATUS pattern, "" = no status file */
	uint64_t pm_interval_ns;  /* GPUPROF_PM_SAMPLING, ns; 0 = off */
	enum gp_capture_range capture_range;  /* GPUPROF_CAPTURE_RANGE */
	enum gp_clock_mode clock;             /* GPUPROF_CLOCK */
	enum gp_coexist coexist;              /* GPUPROF_COEXIST */
	/* docs/FLIGHT.md */
	uint64_t flight_ns;       /* GPUPROF_FLIGHT_RECORDER: history kept; 0 = off */
	size_t flight_max_memory; /* GPUPROF_FLIGHT_MAX_MEMORY */
	enum gp_flight_api flight_api; /* GPUPROF_FLIGHT_API */
	uint32_t flight_api_rate;      /* GPUPROF_FLIGHT_API_RATE: auto's records per second */
	uint32_t sample_steps;    /* GPUPROF_SAMPLE_STEPS: one step in N; 0 = off */
	enum gp_steps_source steps; /* GPUPROF_STEPS */
	struct gp_trigger_rules rules;        /* GPUPROF_TRIGGER */
	char rules_text[GP_SETTING_TEXT_MAX]; /* as given, for the settings line */
	uint32_t trigger_steps;   /* GPUPROF_TRIGGER_STEPS */
	uint64_t trigger_ns;      /* GPUPROF_TRIGGER_SECONDS */
	uint64_t trigger_cooldown_ns; /* GPUPROF_TRIGGER_COOLDOWN */
	uint32_t trigger_max;     /* GPUPROF_TRIGGER_MAX, per hour */
	int control;              /* GPUPROF_CONTROL (default 1) */
	char control_dir[GP_SETTING_TEXT_MAX]; /* GPUPROF_CONTROL_DIR, "" = default */
};

/* Reads the GPUPROF_* environment into *c (defaults first).  Unknown values
 * are reported once and replaced by the default. */
void gps_config_load(struct gps_config *c);
/* The settings that decide what a trace holds, as one line of key=value
 * words ("activity=kernel,memcpy,... api=default ..."); returns its length
 * (cut to fit n). */
size_t gps_config_describe(const struct gps_config *c, char *buf, size_t n);
/* Expands an output pattern (%p pid, %h host, %r rank, %t start time, %%).
 * Returns 0 or -1 when it does not fit. */
int gps_expand_pattern(const char *pat, char *out, size_t outsz, int pid,
		       const char *host, int rank, time_t start);
/* RANK, else LOCAL_RANK, else -1 */
int gps_env_rank(void);

#endif
