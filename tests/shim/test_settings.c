/* test_settings.c — the GPUPROF_* settings table and the parsers the shim
 * and `gpuprof run` share (libprof/gp_settings.c): sizes (units, overflow),
 * durations and windows, the PM interval, hz, the activity kind names and
 * the enumerated words, each with the values it must refuse. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gp_settings.h"
#include "unit_check.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_table(void)
{
	for (int id = 0; id < GP_SET_COUNT; id++) {
		const struct gp_setting *s = gp_setting_get((enum gp_setting_id)id);
		CHECK(s && s->name && !strncmp(s->name, "GPUPROF_", 8) && s->help, "setting %d: no name/help", id);
		if (!s || !s->name)
			continue;
		for (int j = 0; j < id; j++)
			CHECK(strcmp(s->name, gp_setting_get((enum gp_setting_id)j)->name), "%s twice", s->name);
		/* every default is a value of its own syntax */
		struct gp_setting_value v;
		if (s->def)
			CHECK(gp_setting_parse((enum gp_setting_id)id, s->def, &v) == 0, "%s: default '%s' refused",
			      s->name, s->def);
		int parsed = s->type == GP_SETTING_UINT || s->type == GP_SETTING_SIZE || s->type == GP_SETTING_ENUM ||
			     s->type == GP_SETTING_KINDS || s->type == GP_SETTING_WINDOW ||
			     s->type == GP_SETTING_INTERVAL || s->type == GP_SETTING_DURATION ||
			     s->type == GP_SETTING_ONE_IN || s->type == GP_SETTING_RULES;
		/* a setting that can be refused says what it takes and what a bad
		 * value leads to (the shim's complaint) */
		CHECK(!parsed || (s->syntax && (s->on_bad || s->def)), "%s: no syntax / on_bad", s->name);
		CHECK((s->words != NULL) == (s->type == GP_SETTING_ENUM || s->type == GP_SETTING_KINDS),
		      "%s: words", s->name);
	}
	CHECK(gp_setting_get(GP_SET_COUNT) == NULL, "id out of range");
	struct gp_setting_value v;
	gp_setting_default(GP_SET_FLUSH_MS, &v);
	CHECK(v.u == 500, "flush default %" PRIu64, v.u);
	gp_setting_default(GP_SET_BUFFER_SIZE, &v);
	CHECK(v.u == 8u << 20, "buffer default %" PRIu64, v.u);
	gp_setting_default(GP_SET_RING_SIZE, &v);
	CHECK(v.u == 0, "ring default: libprof's (0)");
	gp_setting_default(GP_SET_ACTIVITY, &v);
	CHECK(v.u == GP_ACT_DEFAULT, "activity default %" PRIx64, v.u);
	gp_setting_default(GP_SET_OUTPUT, &v);
	CHECK(v.text && !strcmp(v.text, "gpuprof-%h-%p.gpuprof"), "output default");
	gp_setting_default(GP_SET_API_MODE, &v);
	CHECK(v.u == GP_API_MODE_CALLBACK, "API mode default");
	gp_setting_default(GP_SET_ENABLE, &v);
	CHECK(v.u == 1, "enabled by default");
	CHECK(!strcmp(gp_setting_word_of(GP_SET_STACKS, GP_STACKS_SAMPLED), "sampled") &&
		      !strcmp(gp_setting_word_of(GP_SET_ACTIVITY, GP_ACT_PEER), "peer") &&
		      gp_setting_word_of(GP_SET_CLOCK, 9) == NULL && gp_setting_word_of(GP_SET_FLUSH_MS, 0) == NULL,
	      "value names");
}

static void test_sizes(void)
{
	uint64_t v = 0;
	CHECK(gp_parse_size("8M", &v) == 0 && v == 8u << 20, "8M -> %" PRIu64, v);
	CHECK(gp_parse_size("512k", &v) == 0 && v == 512u << 10, "512k -> %" PRIu64, v);
	CHECK(gp_parse_size("1GiB", &v) == 0 && v == 1u << 30, "1GiB -> %" PRIu64, v);
	CHECK(gp_parse_size("2mb", &v) == 0 && v == 2u << 20, "2mb -> %" PRIu64, v);
	CHECK(gp_parse_size("4096", &v) == 0 && v == 4096, "4096 -> %" PRIu64, v);
	CHECK(gp_parse_size("0", &v) == 0 && v == 0, "0");
	/* the largest that fit, and the first that do not */
	CHECK(gp_parse_size("18446744073709551615", &v) == 0 && v == UINT64_MAX, "2^64-1");
	CHECK(gp_parse_size("17179869183G", &v) == 0 && v == 17179869183ull << 30, "17179869183G");
	v = 7;
	const char *bad[] = {"", "M", "12X", "8MM", "8Mx", "8 M", " 8M", "+8M", "-1", "-8M", "0x10",
			     "18446744073709551616", "17179869184G", "99999999999999999999G",
			     "18014398509481984K", "1.5M", "8iB", NULL};
	for (size_t i = 0; bad[i]; i++)
		CHECK(gp_parse_size(bad[i], &v) != 0, "size '%s' accepted", bad[i]);
	CHECK(gp_parse_size(NULL, &v) != 0, "NULL accepted");
	CHECK(v == 7, "a refused size changed the output");
	/* a setting adds its minimum */
	struct gp_setting_value sv;
	CHECK(gp_setting_parse(GP_SET_BUFFER_SIZE, "64k", &sv) == 0 && sv.u == 65536, "buffer 64k");
	CHECK(gp_setting_parse(GP_SET_BUFFER_SIZE, "63k", &sv) != 0, "buffer below 64k accepted");
	CHECK(gp_setting_parse(GP_SET_RING_SIZE, "4k", &sv) == 0 && gp_setting_parse(GP_SET_RING_SIZE, "1", &sv) != 0,
	      "ring minimum 4k");
	CHECK(gp_setting_parse(GP_SET_MAX_MEMORY, "1M", &sv) == 0 && gp_setting_parse(GP_SET_MAX_MEMORY, "1023k", &sv) != 0,
	      "max memory minimum 1M");
}

static void test_uint(void)
{
	struct gp_setting_value v;
	CHECK(gp_setting_parse(GP_SET_FLUSH_MS, "250", &v) == 0 && v.u == 250, "flush 250");
	CHECK(gp_setting_parse(GP_SET_FLUSH_MS, "1", &v) == 0 && gp_setting_parse(GP_SET_FLUSH_MS, "3600000", &v) == 0,
	      "flush range ends");
	const char *bad[] = {"0", "3600001", "-3", "+5", " 5", "5 ", "5ms", "2.5", "", "99999999999999999999", NULL};
	for (size_t i = 0; bad[i]; i++)
		CHECK(gp_setting_parse(GP_SET_FLUSH_MS, bad[i], &v) != 0, "flush '%s' accepted", bad[i]);
	uint32_t hz = 7;
	CHECK(gp_parse_hz("0", &hz) == 0 && hz == 0, "0 Hz = off");
	CHECK(gp_parse_hz("1000", &hz) == 0 && hz == 1000, "1000 Hz");
	hz = 7;
	const char *badhz[] = {"1001", "2.5", "10hz", "-1", "+1", " 1", "", "4294967306", NULL};
	for (size_t i = 0; badhz[i]; i++)
		CHECK(gp_parse_hz(badhz[i], &hz) != 0, "hz '%s' accepted", badhz[i]);
	CHECK(hz == 7, "a refused hz changed the output");
	CHECK(gp_setting_parse(GP_SET_ZSTD_LEVEL, "5", &v) == 0 && v.i == 5, "zstd level");
}

static void test_activity(void)
{
	unsigned b = 0;
	const char *bad = NULL;
	size_t badlen = 0;
	CHECK(gp_parse_activity("kernel,memcpy", &b, &bad, &badlen) == 0 && b == (GP_ACT_KERNEL | GP_ACT_MEMCPY),
	      "kernel,memcpy -> %x", b);
	CHECK(gp_parse_activity("KERNEL memcpy", &b, &bad, &badlen) == 0 && b == (GP_ACT_KERNEL | GP_ACT_MEMCPY),
	      "any case, blank-separated -> %x", b);
	CHECK(gp_parse_activity("none", &b, &bad, &badlen) == 0 && b == 0, "none -> %x", b);
	CHECK(gp_parse_activity("all", &b, &bad, &badlen) == 0 && b == GP_ACT_ALL, "all -> %x", b);
	CHECK(gp_parse_activity("memcpy2", &b, &bad, &badlen) == 0 && b == GP_ACT_PEER, "memcpy2 = peer");
	CHECK(gp_parse_activity("kernel,bogus", &b, &bad, &badlen) != 0 && badlen == 5 && !strncmp(bad, "bogus", 5),
	      "bogus not reported");
	CHECK(gp_parse_activity("kernel,,memcpy", &b, NULL, NULL) == 0, "empty words between commas are skipped");
	/* a list without a word is not "none" */
	CHECK(gp_parse_activity("", &b, &bad, &badlen) != 0 && badlen == 0, "'' accepted");
	CHECK(gp_parse_activity(",", &b, &bad, &badlen) != 0 && badlen == 0, "',' accepted");
	CHECK(gp_parse_activity("kern", &b, NULL, NULL) != 0 && gp_parse_activity("kernels", &b, NULL, NULL) != 0,
	      "prefixes / plurals accepted");
	/* the default leaves SYNCHRONIZATION and MEMORY2 out; they add on */
	const unsigned dflt = GP_ACT_KERNEL | GP_ACT_MEMCPY | GP_ACT_MEMSET | GP_ACT_PEER | GP_ACT_DEVICE;
	CHECK(gp_parse_activity("default", &b, &bad, &badlen) == 0 && b == dflt, "default -> %x", b);
	CHECK(gp_parse_activity("default,sync", &b, &bad, &badlen) == 0 && b == (dflt | GP_ACT_SYNC),
	      "default,sync -> %x", b);
	CHECK(GP_ACT_ALL == (dflt | GP_ACT_SYNC | GP_ACT_MEMORY), "all = default + sync + memory: %x",
	      (unsigned)GP_ACT_ALL);
	/* every name `gpuprof run --activity` takes (tests/tools/test_run.sh) */
	static const char *const names[] = {"kernel", "memcpy", "memset", "peer", "memcpy2", "sync",
					    "memory", "device", "default", "all", "none"};
	for (size_t i = 0; i < N(names); i++)
		CHECK(gp_parse_activity(names[i], &b, &bad, &badlen) == 0, "%s refused", names[i]);
	struct gp_setting_value v;
	CHECK(gp_setting_parse(GP_SET_ACTIVITY, "sync,bogus", &v) != 0 && v.badlen == 5 && !strncmp(v.bad, "bogus", 5),
	      "setting: bad word");
}

static void test_window(void)
{
	uint64_t on = 7, per = 7;
	CHECK(gp_parse_window("2/30", &on, &per) == 0 && on == 2000000000ull && per == 30000000000ull,
	      "2/30 -> %" PRIu64 "/%" PRIu64, on, per);
	CHECK(gp_parse_window("500ms/10s", &on, &per) == 0 && on == 500000000ull && per == 10000000000ull,
	      "500ms/10s -> %" PRIu64 "/%" PRIu64, on, per);
	CHECK(gp_parse_window("100ms/300ms", &on, &per) == 0 && on == 100000000ull && per == 300000000ull,
	      "100ms/300ms");
	CHECK(gp_parse_window("0.5/1.5", &on, &per) == 0 && on == 500000000ull && per == 1500000000ull, "0.5/1.5");
	CHECK(gp_parse_window(".5/1", &on, &per) == 0 && on == 500000000ull, ".5/1");
	CHECK(gp_parse_window("250us/1000000ns", &on, &per) == 0 && on == 250000ull && per == 1000000ull,
	      "250us/1000000ns");
	on = per = 7;
	const char *bad[] = {"", "2", "2/", "/30", "30/2", "5/5", "0/10", "1x/10", "1/10x", "-1/10",
			     "inf/10", "1/nan", " 1/10", "1/10 ", "1//10", "1/2/3", "1e9/2e9", "1/10000001",
			     "1/1e-400", "1/10S", "1/10 s", NULL};
	for (size_t i = 0; bad[i]; i++)
		CHECK(gp_parse_window(bad[i], &on, &per) != 0, "window '%s' accepted", bad[i]);
	CHECK(on == 7 && per == 7, "a refused window changed the outputs");
	char longer[80];
	memset(longer, '0', sizeof longer);
	memcpy(longer + sizeof longer - 6, "1/10s", 6); /* 74 zeros, then 1/10s: one part over 63 bytes */
	CHECK(gp_parse_window(longer, &on, &per) != 0, "a part of 70+ bytes accepted");
	uint64_t ns = 7;
	CHECK(gp_parse_duration("10", 0, &ns) == 0 && ns == 10000000000ull, "10 -> seconds");
	CHECK(gp_parse_duration("10", 1, &ns) != 0, "10 with a unit required");
	CHECK(gp_parse_duration("1.25ms", 1, &ns) == 0 && ns == 1250000ull, "1.25ms");
}

/* GPUPROF_PM_SAMPLING: a unit required, 100us..10s, 0/off = off */
static void test_pm_interval(void)
{
	uint64_t ns = 7;
	CHECK(gp_parse_pm_interval("10ms", &ns) == 0 && ns == 10000000ull, "10ms -> %" PRIu64, ns);
	CHECK(gp_parse_pm_interval("100us", &ns) == 0 && ns == 100000ull, "100us (the minimum)");
	CHECK(gp_parse_pm_interval("10s", &ns) == 0 && ns == 10000000000ull, "10s (the maximum)");
	CHECK(gp_parse_pm_interval("2.5ms", &ns) == 0 && ns == 2500000ull, "2.5ms");
	CHECK(gp_parse_pm_interval("250000ns", &ns) == 0 && ns == 250000ull, "250000ns");
	CHECK(gp_parse_pm_interval("0", &ns) == 0 && ns == 0, "0 = off");
	CHECK(gp_parse_pm_interval("OFF", &ns) == 0 && ns == 0, "off = off");
	ns = 7;
	const char *bad[] = {"", "10", "1.5", "99us", "10.1s", "11s", "-5ms", "10 ms", " 10ms", "10ms ",
			     "10hz", "ms", "inf", "nanms", "on", "0ms", NULL};
	for (size_t i = 0; bad[i]; i++)
		CHECK(gp_parse_pm_interval(bad[i], &ns) != 0, "interval '%s' accepted", bad[i]);
	CHECK(ns == 7, "a refused interval changed the output");
}

static void test_enums(void)
{
	struct gp_setting_value v;
	struct { enum gp_setting_id id; const char *text; unsigned want; } ok[] = {
		{GP_SET_API, "all", GP_API_SET_ALL}, {GP_SET_API, "NONE", GP_API_SET_NONE},
		{GP_SET_API_MODE, "activity", GP_API_MODE_ACTIVITY}, {GP_SET_BIND, "Eager", GP_BIND_EAGER},
		{GP_SET_STACKS, "1", GP_STACKS_SAMPLED}, {GP_SET_STACKS, "on", GP_STACKS_SAMPLED},
		{GP_SET_STACKS, "ALL", GP_STACKS_ALL}, {GP_SET_STACKS, "false", GP_STACKS_OFF},
		{GP_SET_CLOCK, "tsc", GP_CLOCK_MODE_TSC}, {GP_SET_CLOCK, "monotonic", GP_CLOCK_MODE_MONOTONIC},
		{GP_SET_CAPTURE_RANGE, "cudaProfilerApi", GP_CAPTURE_PROFILER_API},
		{GP_SET_CAPTURE_RANGE, "none", GP_CAPTURE_ALL}, {GP_SET_UNWIND, "glibc", GP_UNWIND_GLIBC},
	};
	for (size_t i = 0; i < N(ok); i++)
		CHECK(gp_setting_parse(ok[i].id, ok[i].text, &v) == 0 && v.u == ok[i].want && !v.text, "%s=%s -> %" PRIu64,
		      gp_setting_get(ok[i].id)->name, ok[i].text, v.u);
	struct { enum gp_setting_id id; const char *text; } bad[] = {
		{GP_SET_API, "some"}, {GP_SET_API, ""}, {GP_SET_API, "all "}, {GP_SET_API_MODE, "callbacks"},
		{GP_SET_STACKS, "everything"}, {GP_SET_STACKS, "2"}, {GP_SET_CLOCK, "rdtsc"},
		{GP_SET_CAPTURE_RANGE, "nvtx"}, {GP_SET_UNWIND, "frames"}, {GP_SET_BIND, "late"},
	};
	for (size_t i = 0; i < N(bad); i++)
		CHECK(gp_setting_parse(bad[i].id, bad[i].text, &v) != 0, "%s=%s accepted", gp_setting_get(bad[i].id)->name,
		      bad[i].text);
	/* GPUPROF_UNWIND=/path: that libunwind; only a path that fits */
	CHECK(gp_setting_parse(GP_SET_UNWIND, "/opt/lib/libunwind.so.8", &v) == 0 && v.u == GP_UNWIND_LIBUNWIND &&
		      v.text && !strcmp(v.text, "/opt/lib/libunwind.so.8"), "unwind path");
	char path[GP_SETTING_TEXT_MAX + 1];
	memset(path, 'a', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = 0;
	CHECK(gp_setting_parse(GP_SET_UNWIND, path, &v) != 0, "a path too long for the shim accepted");
	CHECK(gp_setting_parse(GP_SET_OUTPUT, path, &v) != 0, "an output pattern too long accepted");
	path[sizeof path - 2] = 0;
	CHECK(gp_setting_parse(GP_SET_OUTPUT, path, &v) == 0 && v.text == path, "the longest output pattern");
	/* booleans: only the four "no" words are 0 */
	const char *no[] = {"0", "no", "OFF", "False"}, *yes[] = {"1", "yes", "on", "2", "whatever"};
	for (size_t i = 0; i < N(no); i++)
		CHECK(gp_setting_parse(GP_SET_ENABLE, no[i], &v) == 0 && v.u == 0, "bool %s", no[i]);
	for (size_t i = 0; i < N(yes); i++)
		CHECK(gp_setting_parse(GP_SET_ENABLE, yes[i], &v) == 0 && v.u == 1, "bool %s", yes[i]);
}

/* docs/FLIGHT.md's settings: durations with "0"/"off", one step in N,
 * the anomaly rules */
static void test_flight(void)
{
	struct gp_setting_value v;
	CHECK(gp_setting_parse(GP_SET_FLIGHT_RECORDER, "30s", &v) == 0 && v.u == 30000000000ull, "30s");
	CHECK(gp_setting_parse(GP_SET_FLIGHT_RECORDER, "2.5", &v) == 0 && v.u == 2500000000ull, "2.5 -> seconds");
	CHECK(gp_setting_parse(GP_SET_FLIGHT_RECORDER, "off", &v) == 0 && v.u == 0, "off");
	CHECK(gp_setting_parse(GP_SET_FLIGHT_RECORDER, "0", &v) == 0 && v.u == 0, "0");
	gp_setting_default(GP_SET_FLIGHT_RECORDER, &v);
	CHECK(v.u == 0, "off by default");
	const char *bad[] = {"", "30x", "-1", "24h", "86401", "0ms", NULL};
	for (size_t i = 0; bad[i]; i++)
		CHECK(gp_setting_parse(GP_SET_FLIGHT_RECORDER, bad[i], &v) != 0, "flight '%s' accepted", bad[i]);
	CHECK(gp_setting_parse(GP_SET_FLIGHT_RECORDER, "86400", &v) == 0, "24 h (the maximum)");
	/* a duration whose minimum is not 0 takes no "off" */
	CHECK(gp_setting_parse(GP_SET_TRIGGER_SECONDS, "0", &v) != 0 && gp_setting_parse(GP_SET_TRIGGER_SECONDS, "500us", &v) != 0 &&
		      gp_setting_parse(GP_SET_TRIGGER_SECONDS, "1ms", &v) == 0, "trigger seconds 1ms..");
	CHECK(gp_setting_parse(GP_SET_TRIGGER_COOLDOWN, "0", &v) == 0 && v.u == 0, "no cool-down");
	uint64_t n = 7;
	CHECK(gp_parse_one_in("1/50", 2, 1000000, &n) == 0 && n == 50, "1/50");
	CHECK(gp_parse_one_in("50", 2, 1000000, &n) == 0 && n == 50, "50");
	CHECK(gp_parse_one_in("off", 2, 1000000, &n) == 0 && n == 0, "off");
	n = 7;
	const char *badn[] = {"1/1", "1", "2/50", "1/", "/50", "1/50x", "1/-5", "1/1000001", "", " 1/5", NULL};
	for (size_t i = 0; badn[i]; i++)
		CHECK(gp_parse_one_in(badn[i], 2, 1000000, &n) != 0, "one-in '%s' accepted", badn[i]);
	CHECK(n == 7, "a refused ratio changed the output");
	CHECK(gp_setting_parse(GP_SET_SAMPLE_STEPS, "1/3", &v) == 0 && v.u == 3, "setting 1/3");
	struct gp_trigger_rules r;
	char err[160];
	CHECK(gp_parse_trigger_rules("step>3x,idle>50%,range=bad batch,cuda-error", &r, err, sizeof err) == 0 &&
		      r.what == (GP_RULE_STEP | GP_RULE_IDLE | GP_RULE_RANGE | GP_RULE_CUDA_ERROR) &&
		      r.step_factor == 3.0 && r.idle_pct == 50 && !strcmp(r.range, "bad batch"),
	      "all four rules: %s", err);
	CHECK(gp_parse_trigger_rules("STEP>2.5", &r, err, sizeof err) == 0 && r.what == GP_RULE_STEP &&
		      r.step_factor == 2.5, "step>2.5 without x, any case");
	CHECK(gp_parse_trigger_rules("none", &r, err, sizeof err) == 0 && r.what == 0, "none");
	CHECK(gp_parse_trigger_rules("OOM,cuda-error", &r, err, sizeof err) == 0 &&
		      r.what == (GP_RULE_OOM | GP_RULE_CUDA_ERROR), "oom, any case: %s", err);
	CHECK(gp_parse_trigger_rules("drop>50%", &r, err, sizeof err) == 0 && r.what == GP_RULE_DROP &&
		      r.drop_pct == 50 && r.drop_window_ns == 10000000000ull,
	      "drop>50%% takes the 10 s window: %s", err);
	CHECK(gp_parse_trigger_rules("idle>80%,drop>30/0.5s", &r, err, sizeof err) == 0 &&
		      r.what == (GP_RULE_IDLE | GP_RULE_DROP) && r.drop_pct == 30 && r.drop_window_ns == 500000000ull &&
		      r.idle_pct == 80,
	      "drop>30/0.5s: %s", err);
	static const struct { const char *text, *why; } badr[] = {
		{"", "no rule"}, {"step>", "factor"}, {"step>1x", "1.1"}, {"step>3y", "1.1"}, {"idle>0%", "1 to 99"},
		{"idle>100", "1 to 99"}, {"idle>5.5%", "1 to 99"}, {"range=", "name"}, {"range=a,range=b", "one range"},
		{"step>3x,", "empty"}, {",cuda-error", "empty"}, {"cuda-errors", "not a rule"}, {"step<3x", "not a rule"},
		{"ooms", "not a rule"},
		{"range=0123456789012345678901234567890123456789012345678901234567890123", "63"},
		{"drop>", "percentage"}, {"drop>0%", "1 to 99"}, {"drop>100%", "1 to 99"}, {"drop>50%x", "1 to 99"},
		{"drop>50%/", "window"}, {"drop>50%/0.05s", "window"}, {"drop>50%/11min", "window"},
		{"drop>50%/ten", "window"},
	};
	for (size_t i = 0; i < N(badr); i++) {
		err[0] = 0;
		CHECK(gp_parse_trigger_rules(badr[i].text, &r, err, sizeof err) != 0 && strstr(err, badr[i].why),
		      "rules '%s' accepted or reason '%s' lacks '%s'", badr[i].text, err, badr[i].why);
	}
	CHECK(gp_setting_parse(GP_SET_TRIGGER, "step>3x,cuda-error", &v) == 0 &&
		      v.u == (GP_RULE_STEP | GP_RULE_CUDA_ERROR), "setting: rules");
	CHECK(gp_setting_parse(GP_SET_TRIGGER, "step", &v) != 0, "setting: a bad rule accepted");
}

int main(void)
{
	test_table();
	test_sizes();
	test_uint();
	test_activity();
	test_window();
	test_pm_interval();
	test_enums();
	test_flight();
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	else
		printf("settings: all checks passed\n");
	return failures ? 1 : 0;
}
