/* demangle.c — C++ kernel names for humans.  CUPTI gives mangled names;
 * libstdc++'s __cxa_demangle (linked with -lstdc++) does the real work.  It
 * rejects some real kernel names (a 1,675-character cutlass kernel of
 * cuDNN in examples/mnist-h200.gpuprof): for those the scope-qualified name
 * is read from the start of the mangling (name_full, name_base). */
#include <ctype.h>
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

size_t name_params_at(const char *d)
{
	size_t n = strlen(d);
	int depth = 0;
	for (size_t i = 1; i < n; i++) {
		char c = d[i];
		if (c == '<') depth++;
		else if (c == '>' && depth > 0) depth--;
		else if (c == '(' && depth == 0) {
			if (!strncmp(d + i, "(anonymous namespace)", 21)) { i += 20; continue; }
			return i;
		}
	}
	return n;
}

char *short_name(const char *d)
{
	size_t n = strlen(d);
	/* 1. cut at the parameter list */
	size_t end = name_params_at(d);
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
	int depth = 0;
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

/* The scope-qualified name the Itanium mangling `m` starts with:
 * _Z [L] (N [CV- and ref-qualifiers] [St] <source-name>+ | [St] <source-name>),
 * <source-name> = <length><identifier>; what follows (template arguments,
 * parameters) is not read.  "_ZN7cutlass6KernelI..." -> "cutlass::Kernel",
 * GCC's and nvcc's anonymous namespaces ("_GLOBAL__N...") ->
 * "(anonymous namespace)".  NULL when the name starts otherwise (operators,
 * constructors, substitutions, local names). */
static char *mangled_scope(const char *m)
{
	const char *p = m + 2;
	if (*p == 'L') p++;
	int nested = *p == 'N';
	if (nested) {
		p++;
		while (*p == 'r' || *p == 'V' || *p == 'K') p++;
		if (*p == 'R' || *p == 'O') p++;
	}
	size_t cap = strlen(m) + 32, n = 0;
	char *out = xmalloc(cap);
	out[0] = 0;
	if (p[0] == 'S' && p[1] == 't') {
		n += (size_t)snprintf(out, cap, "std");
		p += 2;
	}
	int parts = 0;
	while (isdigit((unsigned char)*p)) {
		char *end;
		unsigned long len = strtoul(p, &end, 10);
		if (!len || len > strlen(end)) break;
		static const char anon[] = "(anonymous namespace)";
		const char *id = end;
		int is_anon = !strncmp(id, "_GLOBAL__N", 10);
		size_t idlen = is_anon ? sizeof(anon) - 1 : len;
		if (n + idlen + 3 >= cap) break;
		if (n) { out[n++] = ':'; out[n++] = ':'; }
		memcpy(out + n, is_anon ? anon : id, idlen);
		n += idlen;
		out[n] = 0;
		parts++;
		p = end + len;
		if (!nested) break;
	}
	if (!parts) {
		free(out);
		return NULL;
	}
	return out;
}

char *name_full(const char *m)
{
	char *d = demangle(m);
	if (!m || strcmp(d, m) || strncmp(m, "_Z", 2))
		return d; /* demangled, or not a mangled name */
	char *scope = mangled_scope(m);
	if (!scope)
		return d;
	char *full = xmalloc(strlen(scope) + strlen(m) + 4);
	sprintf(full, "%s [%s]", scope, m);
	free(scope);
	free(d);
	return full;
}

char *name_base(const char *m)
{
	char *d = demangle(m);
	if (m && !strcmp(d, m) && !strncmp(m, "_Z", 2)) {
		char *scope = mangled_scope(m);
		if (scope) {
			const char *last = scope, *q;
			for (q = scope; (q = strstr(q, "::")); q += 2) last = q + 2;
			char *b = xstrdup(last);
			free(scope);
			free(d);
			return b;
		}
		return d;
	}
	char *b = short_name(d);
	free(d);
	return b;
}
