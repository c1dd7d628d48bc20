/* gps_coexist.h — living beside the job's own CUPTI profiler (torch.profiler,
 * Kineto): GPUPROF_COEXIST, docs/CONFIG.md "Beside the job's own profiler".
 * nvidia/gps_coexist.c watches the job's CUPTI calls; nvidia/gps_cupti.c
 * gives up and takes back the subscription and the activity buffers. */
#ifndef GPS_COEXIST_H
#define GPS_COEXIST_H

#include <stdatomic.h>
#include <stdint.h>

/* The coexistence lock (recursive): held while the job's CUPTI call and our
 * giving up or taking back run, and by gps_cupti.c's switches of API records
 * and activity kinds.  Order: cap_lock, fl_lock -> it -> CUPTI. */
void gps_coexist_lock(void);
void gps_coexist_unlock(void);
/* The flush thread's tick: takes CUPTI back when the job's profiler has let
 * go (a resume is not done on the job's thread inside its CUPTI call). */
void gps_coexist_tick(void);
void gps_coexist_after_fork_child(void);
/* The object (file name) of the job's code that holds the CUPTI
 * subscription through us, NULL when none: names the other tool when our
 * own cuptiSubscribe is refused. */
const char *gps_coexist_job_subscriber(void);

/* Sharing our subscription with the job's profiler (its cuptiSubscribe got
 * a handle of ours in name): set while it holds one.  The API callback's
 * first test (hot path: one relaxed load). */
extern atomic_int gps_coexist_sharing;
/* The callback (dom, cbid, CUPTI's data) to the job's profiler if it
 * enabled it; 1 when ours is enabled too (record it), 0 when only its. */
int gps_coexist_forward(int dom, uint32_t cbid, const void *data);
/* Right after our cuptiSubscribe: our callback switches go through the
 * coexistence layer from here on (what is ours, what is the job's). */
void gps_coexist_bound(void);

/* gps_cupti.c, under the lock */
void *gps_cupti_subscriber(void);
void gps_cupti_release_callbacks(void);
int gps_cupti_resume_callbacks(void);
void gps_cupti_release_activity(void);
void gps_cupti_resume_activity(int after_finalize);
void gps_cupti_lost_all(void);

#endif
