/* flatjson.c — see flatjson.h.  A recursive-descent reader over a bounded
 * buffer; the only recursion is skipping nested values, capped at
 * MAX_DEPTH so a hostile file cannot exhaust the stack. */
#include "common/flatjson.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define MAX_DEPTH 32
#define MAX_MEMBERS 1024

struct parser {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errsz;
	int failed;
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *p, const char *fmt, ...)
{
	if (!p->failed && p->errsz) {
		char what[128];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		if (p->pos >= p->len)
			snprintf(p->err, p->errsz, "%s (unexpected end after %zu bytes)", what, p->len);
		else
			snprintf(p->err, p->errsz, "%s at byte %zu", what, p->pos);
	}
	p->failed = 1;
	return -1;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) && p->s[p->pos])
		p->pos++;
}

static int peek(struct parser *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int hex4(struct parser *p, unsigned *out)
{
	if (p->len - p->pos < 4)
		return -1;
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos + (size_t)i];
		v <<= 4;
		if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
		else return -1;
	}
	p->pos += 4;
	*out = v;
	return 0;
}

static void put_utf8(char **o, unsigned c)
{
	char *q = *o;
	if (c == 0) {
		*q++ = '?'; /* a NUL would cut the string short */
	} else if (c < 0x80) {
		*q++ = (char)c;
	} else if (c < 0x800) {
		*q++ = (char)(0xC0 | (c >> 6));
		*q++ = (char)(0x80 | (c & 0x3F));
	} else if (c < 0x10000) {
		*q++ = (char)(0xE0 | (c >> 12));
		*q++ = (char)(0x80 | ((c >> 6) & 0x3F));
		*q++ = (char)(0x80 | (c & 0x3F));
	} else {
		*q++ = (char)(0xF0 | (c >> 18));
		*q++ = (char)(0x80 | ((c >> 12) & 0x3F));
		*q++ = (char)(0x80 | ((c >> 6) & 0x3F));
		*q++ = (char)(0x80 | (c & 0x3F));
	}
	*o = q;
}

/* A string at p->pos (the opening quote); *out malloc'd and unescaped
 * (NULL: only validate).  Raw bytes >= 0x80 are copied as they are. */
static int parse_string(struct parser *p, char **out)
{
	if (peek(p) != '"')
		return fail(p, "expected a string");
	size_t start = ++p->pos;
	char *buf = out ? xmalloc(p->len - start + 1) : NULL, *o = buf;
	for (;;) {
		if (p->pos >= p->len) {
			free(buf);
			return fail(p, "unterminated string");
		}
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20) {
			free(buf);
			return fail(p, "control character in a string");
		}
		if (c != '\\') {
			if (o)
				*o++ = (char)c;
			p->pos++;
			continue;
		}
		p->pos++;
		int e = peek(p);
		p->pos++;
		unsigned u = 0;
		switch (e) {
		case '"': case '\\': case '/': u = (unsigned)e; break;
		case 'b': u = '\b'; break;
		case 'f': u = '\f'; break;
		case 'n': u = '\n'; break;
		case 'r': u = '\r'; break;
		case 't': u = '\t'; break;
		case 'u':
			if (hex4(p, &u)) {
				free(buf);
				return fail(p, "bad \\u escape");
			}
			if (u >= 0xD800 && u < 0xDC00) { /* a surrogate pair, or '?' */
				unsigned lo;
				if (p->len - p->pos >= 6 && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u') {
					p->pos += 2;
					if (hex4(p, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000)
						u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
					else
						u = '?';
				} else {
					u = '?';
				}
			} else if (u >= 0xDC00 && u < 0xE000) {
				u = '?';
			}
			break;
		default:
			p->pos--;
			free(buf);
			return fail(p, "bad escape in a string");
		}
		if (o)
			put_utf8(&o, u);
	}
	if (out) {
		*o = 0;
		*out = buf;
	}
	return 0;
}

static size_t digits(struct parser *p)
{
	size_t start = p->pos;
	while (peek(p) >= '0' && peek(p) <= '9')
		p->pos++;
	return p->pos - start;
}

/* A JSON number literal; *out a malloc'd copy. */
static int parse_number(struct parser *p, char **out)
{
	size_t start = p->pos;
	if (peek(p) == '-')
		p->pos++;
	if (peek(p) == '0')
		p->pos++;
	else if (peek(p) < '1' || peek(p) > '9' || !digits(p))
		return fail(p, "bad number");
	if (peek(p) == '.' && (p->pos++, !digits(p)))
		return fail(p, "bad number");
	if (peek(p) == 'e' || peek(p) == 'E') {
		p->pos++;
		if (peek(p) == '+' || peek(p) == '-')
			p->pos++;
		if (!digits(p))
			return fail(p, "bad number");
	}
	size_t n = p->pos - start;
	if (n > 64)
		return fail(p, "number too long");
	if (out) {
		*out = xmalloc(n + 1);
		memcpy(*out, p->s + start, n);
		(*out)[n] = 0;
	}
	return 0;
}

static int literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n))
		return fail(p, "unexpected character");
	p->pos += n;
	return 0;
}

static int value(struct parser *p, int depth, struct fj_member *m);

/* An object or array at p->pos (its opening bracket), `depth` deep.  The
 * members of the top object (o) are kept; nested ones only validated. */
static int container(struct parser *p, int depth, char close, fj_object *o)
{
	if (depth >= MAX_DEPTH)
		return fail(p, "nested too deeply");
	p->pos++;
	skip_ws(p);
	if (peek(p) == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		skip_ws(p);
		struct fj_member m = { 0 };
		if (o && o->n >= MAX_MEMBERS)
			return fail(p, "too many members");
		if (close == '}') {
			if (parse_string(p, o ? &m.key : NULL))
				return -1;
			skip_ws(p);
			if (peek(p) != ':') {
				free(m.key);
				return fail(p, "expected ':'");
			}
			p->pos++;
			skip_ws(p);
		}
		int rc = value(p, depth + 1, o ? &m : NULL);
		if (o)
			VEC_PUSH(o->m, o->n, o->cap, m); /* freed by fj_free even when bad */
		if (rc)
			return -1;
		skip_ws(p);
		int c = peek(p);
		p->pos++;
		if (c == close)
			return 0;
		if (c != ',') {
			p->pos--;
			return fail(p, "expected ',' or '%c'", close);
		}
	}
}

/* A value at p->pos into m (NULL: only validated). */
static int value(struct parser *p, int depth, struct fj_member *m)
{
	struct fj_member skip;
	int c = peek(p), keep = m != NULL;
	if (!m)
		m = &skip;
	switch (c) {
	case '{': case '[':
		m->type = FJ_NESTED;
		return container(p, depth, c == '{' ? '}' : ']', NULL);
	case '"':
		m->type = FJ_STRING;
		return parse_string(p, keep ? &m->text : NULL);
	case 't': case 'f':
		m->type = FJ_BOOL;
		return literal(p, c == 't' ? "true" : "false");
	case 'n':
		m->type = FJ_NULL;
		return literal(p, "null");
	default:
		m->type = FJ_NUMBER;
		return parse_number(p, keep ? &m->text : NULL);
	}
}

int fj_parse(const char *text, size_t len, fj_object *o, char *err, size_t errsz)
{
	memset(o, 0, sizeof(*o));
	struct parser p = { text, len, 0, err, errsz, 0 };
	if (errsz)
		err[0] = 0;
	skip_ws(&p);
	if (peek(&p) != '{')
		return fail(&p, len ? "not a JSON object" : "empty");
	if (container(&p, 0, '}', o))
		return -1;
	skip_ws(&p);
	if (p.pos != p.len)
		return fail(&p, "data after the object");
	return 0;
}

void fj_free(fj_object *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->m[i].key);
		free(o->m[i].text);
	}
	free(o->m);
	memset(o, 0, sizeof(*o));
}

/* The last member named key, or NULL. */
static const struct fj_member *fj_get(const fj_object *o, const char *key)
{
	for (size_t i = o->n; i > 0; i--)
		if (o->m[i - 1].key && !strcmp(o->m[i - 1].key, key))
			return &o->m[i - 1];
	return NULL;
}

int fj_str(const fj_object *o, const char *key, const char **out)
{
	const struct fj_member *m = fj_get(o, key);
	if (!m || m->type != FJ_STRING)
		return -1;
	*out = m->text;
	return 0;
}

int fj_u64(const fj_object *o, const char *key, uint64_t *out)
{
	const struct fj_member *m = fj_get(o, key);
	if (!m || m->type != FJ_NUMBER || m->text[0] == '-' || strpbrk(m->text, ".eE"))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(m->text, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int fj_double(const fj_object *o, const char *key, double *out)
{
	const struct fj_member *m = fj_get(o, key);
	if (!m || m->type != FJ_NUMBER)
		return -1;
	char *end;
	double v = strtod(m->text, &end);
	if (*end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}
