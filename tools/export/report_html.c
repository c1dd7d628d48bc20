/* report_html.c — see report_html.h. */
#include "export/report_html.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "report_assets.h" /* generated: $(B)/gen (scripts/embed-report-assets.sh) */

int report_html_have_charts(void) { return uplot_js[0] != 0; }

/* HTML text: & < > " escaped */
static void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* JSON text inside a <script> element: '<' can only be inside a JSON string,
 * where \u003c means the same, so no "</script" or "<!--" can end or upset
 * the element whatever the trace's names are. */
static void json_in_script(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<') fputs("\\u003c", f);
		else fputc(s[i], f);
	}
}

/* the data, written to memory first to be escaped */
#define ESCAPED(f, call) do { \
		char *buf_ = NULL; \
		size_t len_ = 0; \
		FILE *m_ = open_memstream(&buf_, &len_); \
		if (!m_) return -1; \
		call; \
		if (fclose(m_)) { free(buf_); return -1; } \
		json_in_script(f, buf_, len_); \
		free(buf_); \
	} while (0)

static int status(FILE *f)
{
	if (!ferror(f)) return 0;
	if (!errno) errno = EIO;
	return -1;
}

int report_html_head(FILE *f, const char *title, const char *command, const struct report_data_opts *opts)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"gpuprof " GP_PRODUCER_VERSION "\">\n<title>gpuprof report: ", f);
	html_text(f, title);
	fputs("</title>\n", f);
	if (report_html_have_charts()) fprintf(f, "<style>%s</style>\n", (const char *)uplot_css);
	fprintf(f, "<style>%s</style>\n</head>\n<body>\n", (const char *)report_page_css);
	fputs("<div id=\"app\"><noscript>This report is drawn by its script: open it in a browser with "
	      "JavaScript on.</noscript></div>\n<script type=\"application/json\" id=\"gpuprof-data\">", f);
	ESCAPED(f, report_data_head(m_, command, report_html_have_charts(), REPORT_UPLOT_VERSION, opts));
	return status(f);
}

int report_html_run(FILE *f, const struct report_run *run, size_t index, const struct report_data_opts *opts)
{
	ESCAPED(f, report_data_run(m_, run, index, opts));
	return status(f);
}

int report_html_tail(FILE *f)
{
	report_data_tail(f);
	fputs("</script>\n", f);
	if (report_html_have_charts()) fprintf(f, "<script>%s</script>\n", (const char *)uplot_js);
	fprintf(f, "<script>%s</script>\n</body>\n</html>\n", (const char *)report_page_js);
	return status(f);
}
