/* gps_control.h — this process's end of the control channel
 * (features/gps_control.c; the channel itself: libprof/gp_control.h,
 * docs/FLIGHT.md): its directory, its registration file, the request it
 * polls and the answers it writes.  Pure I/O: what a request does is the
 * flight recorder's (features/gps_flight.c), the only caller.
 *
 * init: at start, with the config: the directory is made or checked (one
 * line and no channel when it cannot be used), a request left by an earlier
 * process with our pid is removed; serve: requests are taken and the
 * process registers (GPUPROF_CONTROL; the flight recorder's spool uses the
 * directory either way).  All the rest runs on the flush thread
 * (and the final flush).  poll: 1 with *rq filled when a valid request of
 * our user was taken (the file is gone then); -1 when one was refused (one
 * line said, the answer "refused" written, the file removed); 0 when none.
 * reply: writes (replaces) the answer to request id.  register: rewrites
 * the registration with the given "key=value\n" lines.  final: removes the
 * registration. */
#ifndef GPS_CONTROL_H
#define GPS_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "gp_control.h"

int gps_control_init(int serve); /* 0, or -1 (no directory) */
int gps_control_on(void);        /* the directory is usable */
int gps_control_serving(void);   /* ... and requests are taken */
const char *gps_control_dir(void); /* "" when off */
int gps_control_poll(struct gp_control_request *rq);
void gps_control_reply(uint64_t id, const char *status, const char *message, const char *file);
void gps_control_register(const char *lines);
void gps_control_final(void);
void gps_control_after_fork_child(void);

#endif
