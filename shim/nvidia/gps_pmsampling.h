/* gps_pmsampling.h — CUPTI PM sampling (nvidia/gps_pmsampling.c,
 * GPUPROF_PM_SAMPLING): a thread "gpuprof-pm" that samples SM
 * activity/occupancy, tensor and DRAM activity of each device a context was
 * created on, as pm.* GP_REC_COUNTER records.
 * context_created: from the CUPTI resource callback (notes the context, wakes
 * the thread, which makes every CUPTI profiler call, and waits, bounded, for
 * that device's set-up); stop: before the final CUPTI flush (stop, last
 * decode; bounded wait; PM sampling is left enabled for the exit);
 * fork_prepare/parent: fork waits (bounded) until the thread is outside
 * CUPTI. */
#ifndef GPS_PMSAMPLING_H
#define GPS_PMSAMPLING_H

void gps_pm_context_created(void *cu_context);
void gps_pm_stop(void);
void gps_pm_fork_prepare(void);
void gps_pm_fork_parent(void);
void gps_pm_after_fork_child(void);

#endif
