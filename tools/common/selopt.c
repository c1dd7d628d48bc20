/* selopt.c — see selopt.h. */
#include "common/selopt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/tool.h"
#include "common/util.h"

void sel_opts_init(struct sel_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->until = UINT64_MAX;
	o->step_a = INT64_MIN;
	o->step_b = INT64_MAX;
}

/* A step number: digits, optionally signed; 0 or -1. */
static int step_number(const char *s, size_t n, int64_t *out)
{
	char buf[32];
	if (!n || n >= sizeof(buf)) return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	if (errno || *end || end == buf) return -1;
	*out = v;
	return 0;
}

/* "A:B", "A:", ":B", "A" */
static int parse_steps(struct sel_opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');
	if (!colon) {
		if (step_number(arg, strlen(arg), &o->step_a)) return -1;
		o->step_b = o->step_a;
		return 0;
	}
	if (colon > arg && step_number(arg, (size_t)(colon - arg), &o->step_a)) return -1;
	if (colon[1] && step_number(colon + 1, strlen(colon + 1), &o->step_b)) return -1;
	if (colon == arg && !colon[1]) return -1;   /* ":" alone */
	return o->step_a <= o->step_b ? 0 : -1;
}

int sel_opts_parse(struct sel_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case SELOPT_SINCE:
		if (parse_duration_ns(arg, &o->since)) return tool_fail(-1, "bad --since '%s'", arg);
		o->have_since = 1;
		return 1;
	case SELOPT_UNTIL:
		if (parse_duration_ns(arg, &o->until)) return tool_fail(-1, "bad --until '%s'", arg);
		o->have_until = 1;
		return 1;
	case SELOPT_STEPS:
		if (parse_steps(o, arg))
			return tool_fail(-1, "bad --steps '%s' (A:B with A <= B, A:, :B or A; step numbers as in the "
					 "steps report)", arg);
		o->have_steps = 1;
		o->steps_arg = arg;
		return 1;
	case SELOPT_RANGE:
		if (!*arg) return tool_fail(-1, "--range needs a name");
		o->range = arg;
		return 1;
	case SELOPT_ABS_TIME:
		o->abs_time = 1;
		return 1;
	}
	return 0;
}

int sel_opts_check(const struct sel_opts *o)
{
	if (o->have_since && o->have_until && o->since >= o->until) {
		char a[32], b[32];
		fmt_dur(a, sizeof(a), o->since);
		fmt_dur(b, sizeof(b), o->until);
		return tool_fail(-1, "--since (%s) must be before --until (%s): nothing would be selected", a, b);
	}
	return 0;
}

int sel_opts_any(const struct sel_opts *o)
{
	return o->have_since || o->have_until || o->have_steps || o->range;
}
