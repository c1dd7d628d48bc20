/* site_rule.h — which frame of a call stack is a launch's "site" (`--site`
 * of stats, advise, export --format folded and report; docs/CLI.md "Call
 * stacks": user, inner, GLOB, layer).  Written once here; stacks.c applies
 * it to every stack view. */
#ifndef GPUPROF_ANALYSIS_STACKS_SITE_RULE_H
#define GPUPROF_ANALYSIS_STACKS_SITE_RULE_H

enum site_kind { SITE_USER = 0, SITE_INNER, SITE_GLOB, SITE_LAYER };

struct site_rule {
	enum site_kind kind;  /* zero-initialised: SITE_USER */
	const char *glob;     /* SITE_GLOB: the pattern (points into the argument) */
};

/* The --help lines (two spaces, 20 columns of option). */
#define SITE_RULE_HELP \
	"  --site RULE       the launch site of a stack: user (default: the user's\n" \
	"                    innermost Python frame), inner (innermost Python frame),\n" \
	"                    layer (the model layer: classes of the forward frames),\n" \
	"                    or a GLOB on the file path ('transformers/models/*')\n"

/* Parses a --site argument: 0, or -1 with a message printed.  arg must
 * outlive the rule (a GLOB points into it). */
int site_rule_parse(struct site_rule *rule, const char *arg);
/* Whether a Python file path matches the rule's GLOB (see above). */
int site_rule_glob_match(const char *glob, const char *path);

#endif
