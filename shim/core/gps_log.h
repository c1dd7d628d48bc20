/* gps_log.h — the shim's only output: "gpuprof: ..." lines on stderr, one
 * write(2) each (core/gps_log.c).  Levels: a warning always prints (a
 * problem, a feature switching itself off); an info line (what is being
 * traced, the final summary) not with GPUPROF_QUIET. */
#ifndef GPS_LOG_H
#define GPS_LOG_H

enum gps_log_level { GPS_LOG_WARN = 0, GPS_LOG_INFO = 1 };

/* Lines above `level` are not printed (GPUPROF_QUIET: GPS_LOG_WARN).  Set
 * once by the lifecycle after the config is read; GPS_LOG_INFO before. */
void gps_log_set_level(enum gps_log_level level);

/* Normal context (formats with vsnprintf). */
void gps_log(enum gps_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define gps_warn(...) gps_log(GPS_LOG_WARN, __VA_ARGS__)
#define gps_info(...) gps_log(GPS_LOG_INFO, __VA_ARGS__)
/* Async-signal-safe: a fixed message, always printed. */
void gps_log_raw(const char *msg);

#endif
