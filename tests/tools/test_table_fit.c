/* test_table_fit.c — a table fitted to a width (common/report.c,
 * docs/CLI.md "Table width") and the name cutter (common/demangle.c
 * name_fit), on hand-made cells:
 *  - name_fit: a name that fits is itself; a C++ signature loses its
 *    parameters, then its template arguments below depth 2, 1, 0, then is
 *    its base name; other names keep start and end around "..." (never
 *    longer than asked, whole UTF-8 characters); "load (batch 3)" is text;
 *  - a table at widths 300 (fits: one heading line, prose in place), 100
 *    (prose as notes "[N]", once each, whole), 60 and 40 (headings on two
 *    lines, names shortened, blocks of columns with the row's name): no line
 *    longer than the width, every number of every row printed whole, every
 *    heading word there; at width 0 each row on one line, a note's
 *    paragraph as written;
 *  - report_text: a long line breaks at spaces, the words in order.
 * Prints "ok" or the failed checks; exit 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/report.h"
#include "common/util.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 30) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

static void fit_is(const char *s, size_t w, const char *want)
{
	char *got = name_fit(s, w);
	CHECK(!strcmp(got, want), "name_fit(\"%s\", %zu) = \"%s\", want \"%s\"", s, w, got, want);
	CHECK(strlen(got) <= w || strlen(s) <= w, "name_fit(\"%s\", %zu): %zu bytes", s, w, strlen(got));
	free(got);
}

static void test_name_fit(void)
{
	const char *sig = "void ns::k<float, Foo<int, Bar<2>>>(float*, int)";
	fit_is(sig, strlen(sig), sig);
	fit_is(sig, strlen(sig) - 1, "void ns::k<float, Foo<int, Bar<2>>>(...)");
	fit_is(sig, 35, "void ns::k<float, Foo<...>>(...)");
	fit_is(sig, 25, "void ns::k<...>(...)");
	fit_is(sig, 15, "k");
	fit_is("sm80_xmma_gemm_f32f32_tn_n_kernel", 15, "sm80_x...kernel");
	fit_is("sm80_xmma_gemm_f32f32_tn_n_kernel", 4, "sm80");
	fit_is("load (batch 3) of the epoch", 15, "load (... epoch");
	/* eight 2-byte characters in 9 bytes: no character split */
	char *u = name_fit("\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1", 9);
	CHECK(!strcmp(u, "\xce\xb1...\xce\xb1"), "UTF-8 elided: %s", u);
	free(u);
}

static const struct col cols[] = {
	{ "Time (%)", "pct", COL_F1, COL_EVERYWHERE },
	{ "Total Time (ns)", "total", COL_INT, COL_EVERYWHERE },
	{ "Instances", "n", COL_INT, COL_EVERYWHERE },
	{ "Avg (ns)", "avg", COL_F1, COL_EVERYWHERE },
	{ "Max Delay (ns)", "max", COL_INT, COL_EVERYWHERE },
	{ "Meaning", "meaning", COL_STR, COL_PROSE },
	{ "Name", "name", COL_STR, COL_EVERYWHERE },
};
enum { NROWS = 6 };
static const char *const names[NROWS] = {
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float*)",
	"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4",
	"reduce_kernel", "vecAdd", "k", "a_rather_long_but_plain_kernel_name_without_templates",
};
static const char *const meanings[3] = { "a computation kernel runs on the device while nothing else does",
					 "idle: the next launch call came after the GPU drained", "short" };

/* The table printed at `width` into a string (malloc'd). */
__attribute__((noinline)) static char *printed(const struct report *r, int width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const struct report_style st = { .fmt = FMT_TABLE, .width = width, .unit = TU_NS };
	report_print(f, r, &st);
	fclose(f);
	return text;
}

static int longest_line(const char *t)
{
	int m = 0;
	while (*t) {
		int n = (int)strcspn(t, "\n");
		if (n > m) m = n;
		t += n + (t[n] == '\n');
	}
	return m;
}

/* t's words one space apart, a space first and last (malloc'd). */
static char *flatten(const char *t)
{
	char *flat = xmalloc(strlen(t) + 3);
	size_t o = 0;
	flat[o++] = ' ';
	for (const char *p = t; *p; p++) {
		if (*p != ' ' && *p != '\n') flat[o++] = *p;
		else if (flat[o - 1] != ' ') flat[o++] = ' ';
	}
	if (flat[o - 1] != ' ') flat[o++] = ' ';
	flat[o] = 0;
	return flat;
}

/* Whether `word` stands in t as a whole cell (spaces or line ends around). */
static int has_cell(const char *t, const char *word)
{
	size_t l = strlen(word);
	for (const char *p = t; (p = strstr(p, word)); p++)
		if ((p == t || p[-1] == ' ' || p[-1] == '\n') && (p[l] == ' ' || p[l] == '\n' || !p[l])) return 1;
	return 0;
}

static void test_table(void)
{
	struct report r;
	report_init(&r, "fit");
	report_define(&r, "A Table Wide Enough to Need Fitting", cols, REPORT_NCOLS(cols));
	char nums[NROWS][4][32];
	for (int i = 0; i < NROWS; i++) {
		struct cell *c = report_row(&r);
		double total = 1234567.0 * (i + 1) * (i + 1), n = 10 + i, max = 987654321.0 + i;
		cell_num(&c[0], 100.0 / (i + 1));
		cell_num(&c[1], total);
		cell_num(&c[2], n);
		cell_num(&c[3], total / n);
		cell_num(&c[4], max);
		cell_str(&c[5], meanings[i % 3]);
		cell_str(&c[6], names[i]);
		/* the numbers as the table prints them, computed here */
		snprintf(nums[i][0], 32, "%.1f", 100.0 / (i + 1));
		char plain[32];
		const double v[3] = { total, total / n, max };
		for (int k = 0; k < 3; k++) {
			snprintf(plain, sizeof(plain), k == 1 ? "%.1f" : "%.0f", v[k]);
			char *o = nums[i][k + 1];
			size_t digits = strcspn(plain, "."), q = 0;
			for (size_t d = 0; d < digits; d++) {
				if (d && (digits - d) % 3 == 0) o[q++] = ',';
				o[q++] = plain[d];
			}
			strcpy(o + q, plain + digits);
		}
	}
	static const char *const words[] = { "Time", "(%)", "Total", "Instances", "Avg", "Max", "Delay", "(ns)",
					      "Meaning", "Name" };
	const int widths[] = { 300, 100, 60, 40 };
	for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); wi++) {
		int w = widths[wi];
		char *t = printed(&r, w);
		CHECK(longest_line(t) <= w, "width %d: a line of %d", w, longest_line(t));
		for (int i = 0; i < NROWS; i++)
			for (int k = 0; k < 4; k++) CHECK(has_cell(t, nums[i][k]), "width %d: number %s cut", w, nums[i][k]);
		for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
			CHECK(strstr(t, words[k]) != NULL, "width %d: heading word %s", w, words[k]);
		if (w >= 300) {
			CHECK(strstr(t, meanings[0]) && !strstr(t, "[1]"), "width %d: prose in place", w);
			CHECK(strstr(t, names[0]) != NULL, "width %d: the whole name", w);
		} else {
			/* each text once, whole (its lines joined), after its reference */
			char *flat = flatten(t);
			for (int m = 0; m < 3; m++) {
				char ref[160];
				snprintf(ref, sizeof(ref), " [%d] %s ", m + 1, meanings[m]);
				const char *p = strstr(flat, ref);
				CHECK(p && !strstr(p + 1, ref), "width %d: note%s once", w, ref);
			}
			free(flat);
		}
		if (w == 40) /* a second block: the name column twice or more */
			CHECK(strstr(strstr(t, "Name") + 1, "Name") != NULL, "width 40: blocks repeat the name");
		free(t);
	}
	/* a note's paragraph (a line and the lines indented under it) as written */
	const char *note = "Busy: the time a kernel ran\n  on any stream of the device.\n";
	r.note = note;
	char *t = printed(&r, 0);
	int lines = 0;
	for (const char *p = t; *p; p++) lines += *p == '\n';
	CHECK(strstr(t, names[1]) && strstr(t, meanings[0]) && lines == 4 + NROWS + 3, "width 0: one line a row (%d)",
	      lines);
	CHECK(strlen(t) >= strlen(note) && !strcmp(t + strlen(t) - strlen(note), note), "width 0: the note as written");
	free(t);
	report_free(&r);
}

/* report_text's lines of s at `width` (malloc'd). */
__attribute__((noinline)) static char *wrapped(const char *s, int width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	report_text(f, s, width);
	fclose(f);
	return text;
}

static void test_text(void)
{
	char *text = wrapped(" one two three four five six seven eight nine ten eleven twelve thirteen fourteen\n", 30);
	CHECK(longest_line(text) <= 30, "report_text: a line of %d", longest_line(text));
	/* the words in order, one space apart once the breaks are undone */
	char *flat = flatten(text);
	CHECK(!strcmp(flat, " one two three four five six seven eight nine ten eleven twelve thirteen fourteen "),
	      "report_text words: %s", flat);
	free(flat);
	free(text);
}

int main(void)
{
	test_name_fit();
	test_table();
	test_text();
	if (fails) {
		printf("%d check(s) failed\n", fails);
		return 1;
	}
	printf("ok\n");
	return 0;
}
