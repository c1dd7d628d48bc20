/* gp_control.h — the control channel between `gpuprof trigger` and the
 * traced processes of the same user (docs/FLIGHT.md, "Control channel"):
 * where it lives, who may use it, and its three small files.  Shared by the
 * shim (shim/features/gps_control.c), which owns the process's files and
 * answers requests, and the CLI (tools/cmd/cmd_trigger.c), which writes requests
 * and reads answers, so the two cannot disagree about a path or a format.
 * No CUDA, no threads, no allocation.
 *
 * The directory: GPUPROF_CONTROL_DIR when set, else $XDG_RUNTIME_DIR/gpuprof
 * (XDG_RUNTIME_DIR an absolute path), else /tmp/gpuprof-UID.  It must be a
 * directory (not a symbolic link) owned by the effective uid with no access
 * for group or others (0700): only the job's user (and root) can put a
 * request there.  Its files, for a traced process PID:
 *
 *   PID.proc    the process's registration, rewritten about once a second
 *               (state, step, step rate, captures): `gpuprof trigger --all`
 *               finds the job's processes by them
 *   PID.req     a request: written by `gpuprof trigger` as a temporary file
 *               and link()ed into place, so a second request finds the
 *               first one pending (EEXIST) and never replaces it
 *   PID.reply.ID  the answer to request ID: accepted / refused / done /
 *               failed, rewritten (rename) as the capture goes on
 *
 * Every file is "key=value" lines after a first line naming its kind and
 * version ("gpuprof-request 1").  A reader takes a regular file only
 * (O_NOFOLLOW, fstat), at most GP_CONTROL_FILE_MAX bytes, owned by the
 * effective uid or by root. */
#ifndef GP_CONTROL_H
#define GP_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GP_CONTROL_VERSION 1
#define GP_CONTROL_FILE_MAX 4096

/* The directory's path into out: `configured` (GPUPROF_CONTROL_DIR's value)
 * when not NULL or empty, else the default above.  create: mkdir (0700) when
 * missing.  0, or -1 with the reason in err ("... is owned by uid 1000",
 * "... is a symbolic link", "... is group/other accessible (mode 0755)"). */
int gp_control_dir(const char *configured, char *out, size_t n, int create, char *err, size_t errn);
/* The checks above on an existing path, for owner uid. */
int gp_control_check_dir(const char *path, uid_t uid, char *err, size_t errn);
/* DIR/PID.SUFFIX ("proc", "req"); DIR/PID.reply.ID.  0, or -1 when it does
 * not fit. */
int gp_control_path(char *out, size_t n, const char *dir, int pid, const char *suffix);
int gp_control_reply_path(char *out, size_t n, const char *dir, int pid, uint64_t id);

/* A capture request. */
struct gp_control_request {
	uint64_t id;         /* chosen by the requester, names the reply */
	uint32_t steps;      /* whole steps to capture; 0: the process's default */
	uint64_t seconds_ns; /* length in a process without steps; 0: its default */
	int64_t start_step;  /* first step number to capture; -1: the next step */
	int32_t from_pid;    /* the requester (informational) */
	uint32_t wait;       /* 1: the requester waits for the final answer (done/failed) */
};
/* "gpuprof-request 1\nid=...\nsteps=...\nseconds_ns=...\nstart_step=...\n
 * from_pid=...\nwait=0|1\n".  format: returns the length, or -1 when it does not fit.
 * parse: 0, or -1 with the reason in err: a request must have its first
 * line, an id, values in range (steps <= 100000, seconds <= 1 h), no key
 * twice, no unknown key. */
int gp_control_request_format(const struct gp_control_request *rq, char *out, size_t n);
int gp_control_request_parse(const char *text, size_t len, struct gp_control_request *rq, char *err,
			     size_t errn);

/* The value of key in a "key=value" text (first line skipped) into out
 * (cut to fit); 0, or -1 when absent. */
int gp_control_kv(const char *text, const char *key, char *out, size_t n);

/* Writes text into DIR/NAME atomically: DIR/.NAME.tmp.PID (O_CREAT|O_EXCL|
 * O_NOFOLLOW, 0600), then rename() over NAME, or with exclusive link() (a
 * NAME that exists stays, -1 with errno EEXIST).  0, or -1 with errno set. */
int gp_control_write(const char *dir, const char *name, const char *text, size_t len, int exclusive);
/* Reads a control file: a regular file (O_NOFOLLOW|O_NONBLOCK, fstat),
 * owned by uid or by root, shorter than n; NUL-terminated.  *owner: its
 * uid (also on the ownership failure).  0; -1 with the reason in err
 * (errno ENOENT when there is no such file). */
int gp_control_read(const char *path, uid_t uid, char *buf, size_t n, size_t *len, uid_t *owner, char *err,
		    size_t errn);

#endif
