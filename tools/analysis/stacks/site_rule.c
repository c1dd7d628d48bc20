/* site_rule.c — see site_rule.h. */
#include "analysis/stacks/site_rule.h"

#include <fnmatch.h>
#include <string.h>

#include "common/tool.h"

int site_rule_parse(struct site_rule *rule, const char *arg)
{
	memset(rule, 0, sizeof(*rule));
	if (!arg || !*arg) {
		tool_err("bad --site '' (user, inner, layer or a file-path GLOB)");
		return -1;
	}
	if (!strcmp(arg, "user")) rule->kind = SITE_USER;
	else if (!strcmp(arg, "inner")) rule->kind = SITE_INNER;
	else if (!strcmp(arg, "layer")) rule->kind = SITE_LAYER;
	else {
		rule->kind = SITE_GLOB;
		rule->glob = arg;
	}
	return 0;
}

int site_rule_glob_match(const char *glob, const char *path)
{
	if (!fnmatch(glob, path, 0)) return 1;
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		if (p[1] && !fnmatch(glob, p + 1, 0)) return 1;
	return 0;
}
