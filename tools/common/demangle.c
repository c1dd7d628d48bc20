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

/* Whether m is a mangled name __cxa_demangle rejects (d: its demangle(),
 * then m itself). */
static int rejected(const char *m, const char *d) { return m && !strcmp(d, m) && !strncmp(m, "_Z", 2); }

char *name_full(const char *m)
{
	char *d = demangle(m), *scope = rejected(m, d) ? mangled_scope(m) : NULL;
	if (!scope)
		return d; /* demangled, or not a mangled name */
	char *full = xmalloc(strlen(scope) + strlen(m) + 4);
	sprintf(full, "%s [%s]", scope, m);
	free(scope);
	free(d);
	return full;
}

char *name_base(const char *m)
{
	char *d = demangle(m);
	if (!rejected(m, d)) {
		char *b = short_name(d);
		free(d);
		return b;
	}
	char *scope = mangled_scope(m);
	if (!scope)
		return d;
	const char *last = scope, *q;
	for (q = scope; (q = strstr(q, "::")); q += 2) last = q + 2;
	memmove(scope, last, strlen(last) + 1);
	free(d);
	return scope;
}

/* A C++ signature as a table shows it when it does not fit: whether s reads
 * as one (a parameter list right after a name or template arguments, or
 * template arguments), so that range names such as "load (batch 3)" are
 * elided as text, not cut as C++. */
static int looks_cxx(const char *s)
{
	size_t p = name_params_at(s), n = strlen(s);
	if (p < n && p > 0 && (isalnum((unsigned char)s[p - 1]) || s[p - 1] == '_' || s[p - 1] == '>'))
		return 1;
	const char *lt = strchr(s, '<');
	return lt && lt > s && strchr(lt, '>') != NULL;
}

/* s with its parameter list as "(...)" and, when depth >= 0, the template
 * arguments nested deeper than `depth` levels as "..." (depth 0:
 * "k<...>(...)"); malloc'd. */
static char *cxx_cut(const char *s, int depth)
{
	size_t n = strlen(s), p = name_params_at(s), o = 0;
	char *out = xmalloc(n + 8);
	int lvl = 0;
	for (size_t i = 0; i < p; i++) {
		char c = s[i];
		int keep = depth < 0 || lvl <= depth;
		if (c == '<') {
			lvl++;
			if (depth >= 0 && lvl == depth + 1) { memcpy(out + o, "<...", 4); o += 4; }
			else if (keep) out[o++] = c;
			continue;
		}
		if (c == '>' && lvl > 0) {
			if (depth >= 0 && lvl == depth + 1) out[o++] = '>';
			else if (depth < 0 || lvl <= depth) out[o++] = c;
			lvl--;
			continue;
		}
		if (keep) out[o++] = c;
	}
	if (p < n) { memcpy(out + o, "(...)", 5); o += 5; }
	out[o] = 0;
	return out;
}

/* s in at most w bytes with "..." in its middle, cut at UTF-8 character
 * boundaries (the end tells kernels apart as often as the start). */
static char *elide_middle(const char *s, size_t w)
{
	size_t n = strlen(s);
	if (n <= w) return xstrdup(s);
	if (w < 5) {
		size_t k = w;
		while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
		char *o = xmalloc(k + 1);
		memcpy(o, s, k);
		o[k] = 0;
		return o;
	}
	size_t room = w - 3, head = (room + 1) / 2, tail = room - head;
	while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80) head--;
	size_t from = n - tail;
	while (from < n && ((unsigned char)s[from] & 0xC0) == 0x80) from++;
	char *o = xmalloc(head + 3 + (n - from) + 1);
	memcpy(o, s, head);
	memcpy(o + head, "...", 3);
	memcpy(o + head + 3, s + from, n - from + 1);
	return o;
}

char *name_fit(const char *s, size_t w)
{
	if (strlen(s) <= w) return xstrdup(s);
	if (!looks_cxx(s)) return elide_middle(s, w);
	for (int depth = -1; depth <= 2; depth++) {
		/* -1: parameters only; then template depths 2, 1, 0 */
		char *c = cxx_cut(s, depth < 0 ? -1 : 2 - depth);
		if (strlen(c) <= w) return c;
		free(c);
	}
	char *b = short_name(s), *o = elide_middle(b, w);
	free(b);
	return o;
}
