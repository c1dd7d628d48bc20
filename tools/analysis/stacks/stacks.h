/* stacks.h — recorded call stacks (GP_REC_STACK, GP_REC_MODULE) turned into
 * what people read: frames root first ("func (file:line)" for Python,
 * symbol names for native code), the launch site and the innermost frame.
 * The rules (which native frames are dropped, how files are shortened, how a
 * site is picked) are in docs/CLI.md "Call stacks". */
#ifndef GPUPROF_ANALYSIS_STACKS_STACKS_H
#define GPUPROF_ANALYSIS_STACKS_STACKS_H

#include <stdint.h>

#include "gp_trace.h"

struct site_rule;
struct stacks;

/* A resolved stack.  Strings live as long as the struct stacks. */
struct stack_view {
	const char **frames;  /* root (outermost) first; no ';' or control
			       * characters (they become '_'): each fits a folded line */
	uint32_t nframes;
	const char *site;     /* by the stacks' site rule (site_rule.h): e.g.
			       * "model.py:42 forward", "GPT2Model > GPT2Block" */
	const char *site_key; /* distinct per site (full path): group by this */
	int site_frame;       /* index in frames of the site's frame; -1: none
			       * (no frame, or the layer rule) */
	const char *user_site;/* the site by the default rule (user) */
	const char *innermost; /* innermost Python frame, else innermost shown native frame; "" none */
	/* The model layers: the classes of the launching thread's own Python
	 * `forward` frames, outermost first (the class of `self` where the
	 * trace has it, else the class the method is defined in). */
	const char *const *layers;
	uint32_t nlayers;
	uint32_t own_python;  /* Python frames of the launching thread itself */
	int borrowed;         /* no Python frames of its own: a ctx marker's borrowed ones */
	const char *thread_name; /* the launching thread's name, "" unknown */
};

struct stacks *stacks_new(gp_reader *r);
/* The time shards of `stats --threads` (every slice reads every stack, as
 * metadata): s takes src's stacks when it has none (a context that read
 * no records; src gets s's, and s's address stays the one its readers
 * hold), then reads the trace's strings through r, another reader of the
 * same trace that knows all of them (iteration ended, or
 * gp_reader_load_meta): src's closes. */
void stacks_adopt(struct stacks *s, struct stacks *src, gp_reader *r);
/* s's own copy of str (one per distinct string, freed with s): for a
 * string of another stacks' that must outlive it. */
const char *stacks_intern(struct stacks *s, const char *str);
void stacks_free(struct stacks *s); /* NULL ok */

/* Which frame is a view's site: before the first stacks_view (default:
 * the user rule).  The rule is copied; a GLOB must outlive the stacks. */
void stacks_set_site_rule(struct stacks *s, const struct site_rule *rule);

/* Takes GP_REC_MODULE and GP_REC_STACK records (others ignored).  A module
 * replaces earlier modules of its process that overlap it; a stack id seen
 * again keeps its first frames (ids are unique in a well-formed trace). */
void stacks_add(struct stacks *s, const gp_record *rec);
/* Number of GP_REC_STACK records taken. */
uint64_t stacks_count(const struct stacks *s);
/* Reads every module and stack record of the trace (file order), then
 * rewinds the reader: for consumers that stream and need a stack before the
 * reader reaches it.  A format 1.4 trace has them in its metadata chunks
 * (gp_reader_meta_apart): only those are read.  The reader's time window
 * is kept.  Returns 0 or a gp_err. */
int stacks_preload(struct stacks *s, gp_reader *r);

/* The stack `stack_id` as seen from a call on thread `tid` of process `pid`
 * (native frames resolve with that process's modules; the thread names the
 * separator of a borrowed Python context).  NULL for id 0 or an id the trace
 * does not define.  Cached: repeated calls are cheap. */
const struct stack_view *stacks_view(struct stacks *s, uint32_t stack_id, uint32_t pid, uint32_t tid);
/* The name of thread tid of pid (GP_REC_THREAD or its source's); "" unknown. */
const char *stacks_thread_name(struct stacks *s, uint32_t pid, uint32_t tid);

#endif
