/* demangle.c — C++ kernel names for humans.  CUPTI gives mangled names;
 * libstdc++'s __cxa_demangle (linked with -lstdc++) does the real work. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* From <cxxabi.h>; declared here because this is C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *m)
{
	if (!m)
		return xstrdup("");
	/* Only Itanium-mangled names; __cxa_demangle would also "demangle" plain
	 * words like "i" into type names, which is wrong for a C kernel name. */
	if (strncmp(m, "_Z", 2) != 0)
		return xstrdup(m);
	int status = 0;
	char *d = __cxa_demangle(m, NULL, NULL, &status);
	if (status != 0 || !d) {
		free(d);
		return xstrdup(m);
	}
	return d;
}

char *short_name(const char *d)
{
	size_t n = strlen(d);
	/* 1. cut at the parameter list: first '(' at template depth 0 that is not
	 *    part of "(anonymous namespace)" */
	int depth = 0;
	size_t end = n;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		if (c == '<') depth++;
		else if (c == '>' && depth > 0) depth--;
		else if (c == '(' && depth == 0) {
			if (!strncmp(d + i, "(anonymous namespace)", 21)) { i += 20; continue; }
			end = i;
			break;
		}
	}
	/* 2. drop trailing template arguments */
	while (end > 0 && d[end - 1] == '>') {
		int dd = 0;
		size_t j = end;
		while (j > 0) {
			j--;
			if (d[j] == '>') dd++;
			else if (d[j] == '<' && --dd == 0) break;
		}
		if (dd != 0)
			break;
		end = j;
	}
	/* 3. start after the last "::" or space at depth 0 (scope, return type) */
	size_t start = 0;
	depth = 0;
	for (size_t i = 0; i < end; i++) {
		char c = d[i];
		if (c == '<') depth++;
		else if (c == '>' && depth > 0) depth--;
		else if (depth == 0 && c == ' ') start = i + 1;
		else if (depth == 0 && c == ':' && i + 1 < end && d[i + 1] == ':') { start = i + 2; i++; }
		else if (depth == 0 && c == '(' && !strncmp(d + i, "(anonymous namespace)", 21)) i += 20;
	}
	if (start >= end) { start = 0; end = n; }
	char *s = xmalloc(end - start + 1);
	memcpy(s, d + start, end - start);
	s[end - start] = 0;
	return s;
}
