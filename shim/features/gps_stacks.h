/* gps_stacks.h — call stacks at launch, memcpy/memset and allocation call sites
 * (GPUPROF_STACKS, docs/FORMAT.md "Call stacks", docs/CONFIG.md).
 * gps_stacks.c: sampling per call site, native unwinding (libunwind bound
 * late, glibc backtrace() as the fallback), module maps, interning.
 * gps_stacks_py.c: the calling thread's own CPython frames, read without the
 * GIL from the interpreter's structures. */
#ifndef GPS_STACKS_H
#define GPS_STACKS_H

#include <stdint.h>

#include "gp_trace.h"

/* bit 63 of a frame: a symbolic frame whose low 32 bits are a string id */
#define GPS_STK_SYMBOLIC (1ull << 63)

/* 1 once the unwinder is bound and GPUPROF_STACKS asked for stacks. */
extern int gps_stacks_on;

/* At the GPU backend's bind, once per process: 1 when GPUPROF_STACKS asks
 * for stacks and API calls are recorded (else 0, after one line when API
 * calls are not); the backend then chooses its calls
 * (nvidia/gps_cupti_stacks.c) and, when it has any, calls enable: binds the
 * unwinder and the CPython frame reader (a line for each fallback) and turns
 * stacks on. */
int gps_stacks_wanted(void);
void gps_stacks_enable(void);

/* The API exit callback of a chosen call, outermost on its thread, inside
 * gps_enter (gps_in_shim = 1): returns the stack id for its GP_REC_API
 * record (0 when none), emitting GP_REC_MODULE/GP_REC_STACK records first
 * when new.  call: which API function (the backend's number for it); key:
 * what tells its call sites apart (the kernel function or graph launched;
 * 0: nothing); every: a stack at this call whatever GPUPROF_STACKS's
 * sampling (a call without a key, such as an allocation). */
uint32_t gps_stacks_for_site(gp_recorder *rec, uint32_t call, uint64_t key, int every);

/* Final flush: gpuprof.stacks_captured / _inherited / _distinct counters. */
void gps_stacks_emit_stats(gp_recorder *rec);
void gps_stacks_after_fork_child(void);

/* ---- gps_stacks_py.c ---- */
/* Detects a supported CPython in this process (3.11 to 3.13); logs one line
 * when Python is there but not supported.  Returns 1 when frames can be read. */
int gps_py_bind(void);
/* 1 when the process runs CPython (supported or not). */
int gps_py_present(void);
/* Appends the calling thread's Python frames (innermost first) as symbolic
 * frames ("py\tfile\tline\tfunc" string ids) to out[0..max).  Returns how
 * many (0: no Python on this thread, or frames off). */
int gps_py_walk(gp_recorder *rec, uint64_t *out, int max);
/* A hash of the calling thread's innermost Python frames' current
 * instructions (a few loads, no walk): part of the rate limit's call-site
 * key, so that one kernel launched from two Python lines is two sites.
 * 0 when there is no Python on this thread or its frames are not checked. */
uint64_t gps_py_site_key(void);
void gps_py_after_fork_child(void);

#endif
