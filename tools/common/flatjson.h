/* flatjson.h — a reader for one flat JSON object, the shape of the shim's
 * status file (GPUPROF_STATUS): members whose values are strings, numbers,
 * true, false or null.  Nested objects and arrays are skipped (depth-limited)
 * so a later status version may add them.  Built for untrusted input: every
 * read is bounded by the given length, errors say where, nothing is assumed
 * about NUL termination. */
#ifndef GPUPROF_COMMON_FLATJSON_H
#define GPUPROF_COMMON_FLATJSON_H

#include <stddef.h>
#include <stdint.h>

enum fj_type { FJ_NULL, FJ_BOOL, FJ_NUMBER, FJ_STRING, FJ_NESTED };

struct fj_member {
	char *key;     /* unescaped, malloc'd */
	enum fj_type type;
	char *text;    /* FJ_STRING: unescaped UTF-8 (\u0000 becomes '?');
			* FJ_NUMBER: the literal; else NULL */
};

typedef struct fj_object {
	struct fj_member *m;
	size_t n, cap;
} fj_object;

/* Parses text[0..len) as one object (whitespace around it allowed).  0, or
 * -1 with a reason in err ("unexpected end", "bad string at byte 12", ...);
 * *o is filled either way and must be freed with fj_free. */
int fj_parse(const char *text, size_t len, fj_object *o, char *err, size_t errsz);
void fj_free(fj_object *o);
/* Typed lookups: 0 on success; -1 when absent, of another type, or (numbers)
 * not representable (negative or fractional for u64). */
int fj_str(const fj_object *o, const char *key, const char **out);
int fj_u64(const fj_object *o, const char *key, uint64_t *out);
int fj_double(const fj_object *o, const char *key, double *out);

#endif
