/* layers.h — GPU kernel time per model layer (`stats --report layers`,
 * `export --format folded --site layer`; docs/STACKS.md "Layers").
 *
 * A launch's layer path is the chain of classes of its thread's own Python
 * `forward` frames, outermost first (stacks.h: stack_view.layers); the rows
 * of work without such a chain, so that the rows' self times add up to all
 * kernel time: docs/STACKS.md's table of rows ("stats --report layers").
 *
 * The tree: a node per distinct path prefix; total = kernel time of the
 * launches whose path starts with the node's, self = of those whose path
 * ends there. */
#ifndef GPUPROF_ANALYSIS_LAYERS_LAYERS_H
#define GPUPROF_ANALYSIS_LAYERS_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join/attribution.h"
#include "analysis/stacks/stacks.h"
#include "common/util.h"

#define LAYER_PATH_MAX 80  /* names in a path: GP_STACK_MAX_FRAMES + 2 at most */
#define LAYERS_CAPTURED_ROW "(CUDA graph, captured here)"
#define LAYERS_BACKWARD_ROW "(backward)"
#define LAYERS_BACKWARD_UNATTRIBUTED "(backward, unattributed)"

enum layers_work {
	LAYERS_LAUNCHED,       /* work of the call itself */
	LAYERS_GRAPH_REPLAY,   /* a graph launch's work, its node's capture not known */
	LAYERS_GRAPH_CAPTURED, /* a graph launch's work, v: the captured launch's */
};

/* The path of a launch with stack view v (NULL: no stack, or a stack the
 * trace does not define) for work of kind `work`.  Fills out[0..n) (strings
 * live as long as the stacks) and returns n >= 1. */
uint32_t layers_path(const struct stack_view *v, enum layers_work work, const char **out);
/* Whether a thread of that name is one of PyTorch's autograd engine's
 * device threads (pt_autograd_N: Engine::thread_init). */
int layers_autograd_thread(const char *thread_name);
/* Whether a launch with stack view v is backward work: its path is the
 * LAYERS_BACKWARD_UNATTRIBUTED row (v NULL: no). */
int layers_backward(const struct stack_view *v);
/* Backward work of one range or range name, given to a path by
 * autograd_seq.h or layer_ranges.h: path[0..n) (n 0: unattributed), its
 * kernel time and kernels. */
typedef void (*layers_backward_fn)(void *ctx, const char *const *path, uint32_t n, uint64_t ns, uint64_t kernels);
/* The backward work autograd_seq.h and layer_ranges.h keep: kernel time
 * and kernels by key (a range id, a range name).  Zero-initialised = empty. */
struct layer_bwd { uint32_t key; uint64_t ns, kernels; };
struct layer_bwd_table { u64map idx; struct layer_bwd *v; size_t n, cap; };
void layer_bwd_add(struct layer_bwd_table *t, uint32_t key, uint64_t ns, uint64_t kernels);
/* Adds src's (the time shards of `stats --threads`). */
void layer_bwd_merge(struct layer_bwd_table *t, const struct layer_bwd_table *src);
void layer_bwd_free(struct layer_bwd_table *t);
/* The ids of the push/pop ranges of pid open on thread tid at t
 * (attribution_open_on) into *buf (grown as needed): their number. */
size_t layers_open_on(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t **buf,
		      size_t *cbuf);

struct layer_node {
	const char *name;
	uint32_t parent;      /* the tree's own index of the parent; UINT32_MAX: a top row */
	uint32_t depth;       /* 0 for a top row */
	uint64_t total_ns, self_ns;
	uint64_t kernels, self_kernels;
};

struct layer_tree;

struct layer_tree *layer_tree_new(void);
void layer_tree_free(struct layer_tree *t); /* NULL ok */
/* Adds kernel time ns of `kernels` kernels at path[0..n). */
void layer_tree_add(struct layer_tree *t, const char *const *path, uint32_t n, uint64_t ns, uint64_t kernels);
/* The nodes depth first, each node's children by total time (most first,
 * then by name): *n of them; valid until the next add or free. */
const struct layer_node *layer_tree_rows(struct layer_tree *t, size_t *n);
/* Kernel time of all paths added (the sum of every node's self time). */
uint64_t layer_tree_total(const struct layer_tree *t);

#endif
