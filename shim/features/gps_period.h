/* gps_period.h — the period of a sequence of API events (features/gps_period.c):
 * which event signature starts each training step.  Pure: no clock, no
 * lock, no global state; the caller gives the events and a scratch arena.
 * The online step finder (features/gps_stepfind.c) runs it on the events it
 * buffered; docs/STEPS.md, "Steps found online (shim)".
 *
 * An event's signature carries its class in bits 56..59 (GPS_SIG_CLASS):
 * a host-to-device copy's is its class and byte count, so the copy of one
 * batch has one signature from step to step. */
#ifndef GPS_PERIOD_H
#define GPS_PERIOD_H

#include <stddef.h>
#include <stdint.h>

enum gps_sig_class {
	GPS_SIG_NONE = 0,
	GPS_SIG_HTOD = 1,   /* a host-to-device copy: the step's input */
	GPS_SIG_DTOH = 2,   /* a device-to-host copy (.item(), a metric) */
	GPS_SIG_COPY = 3,   /* another copy */
	GPS_SIG_SYNC = 4,   /* a stream, device or event synchronisation */
	GPS_SIG_GRAPH = 5,  /* a CUDA graph launch (signature: the executable graph) */
	GPS_SIG_KERNEL = 6, /* a kernel launch (signature: the function) */
	GPS_SIG_NCLASS
};
#define GPS_SIG_CLASS(sig) ((enum gps_sig_class)((sig) >> 56 & 0xf))
#define GPS_SIG_MAKE(cls, v) ((uint64_t)(cls) << 56 | ((uint64_t)(v) & ((1ull << 56) - 1)))
/* a marker: anything but a kernel launch (few a step, cheap to keep seeing) */
#define GPS_SIG_MARKER(sig) (GPS_SIG_CLASS(sig) != GPS_SIG_KERNEL)
/* a copy's signature without its byte count, any other as it is (the
 * finder's second look: a batch padded to its longest sample is copied at
 * another size every step) */
static inline uint64_t gps_sig_sizeless(uint64_t sig)
{
	enum gps_sig_class c = GPS_SIG_CLASS(sig);
	return c == GPS_SIG_HTOD || c == GPS_SIG_DTOH || c == GPS_SIG_COPY ? GPS_SIG_MAKE(c, 0) : sig;
}

struct gps_period_ev {
	uint64_t sig;
	uint64_t t; /* trace time of the call */
};

struct gps_period_result {
	uint64_t sig;       /* the boundary: each step starts at this event */
	uint32_t len;       /* events in the common step */
	uint32_t alike;     /* steps whose content (as a multiset) is the common one */
	uint32_t steps;     /* steps between its first and last occurrence */
	uint32_t count;     /* its occurrences in the sequence */
};

/* A signature told apart by the k - 1 events before it: the class of
 * newest[0] and a hash of newest[0 .. k) (newest first); k <= 1: newest[0]
 * itself.  A step that repeats one signature with different neighbours
 * (an HF Trainer copies input_ids and labels, 8192 bytes each, every step,
 * each copy followed by a synchronisation) has no signature that occurs
 * once a step; its events in context do.  The one definition for the
 * finder's learning window and its tracking (features/gps_stepfind.c). */
#define GPS_PERIOD_MAX_CONTEXT 4
uint64_t gps_period_context(const uint64_t *newest, unsigned k);

/* bytes of scratch gps_period_find needs for n events */
size_t gps_period_scratch_size(size_t n);
/* 1 and *out when a boundary is found among ev[0..n), with at least
 * min_alike alike steps and occurring still at the sequence's end; 0 none.
 * scratch: gps_period_scratch_size(n) bytes, 8-aligned. */
int gps_period_find(const struct gps_period_ev *ev, size_t n, unsigned min_alike, void *scratch,
		    struct gps_period_result *out);

#endif
