/* gp_fields.c — the run-time view of gp_fields.h, and the compile-time
 * checks that its lists match the structs of gp_record.h. */
#include <stddef.h>
#include <string.h>
#include "gp_fields.h"

/* tables and checks made by macros: */
/* clang-format off */
#define IS_SIGNED_(e) _Generic((e), int8_t: 1, int16_t: 1, int32_t: 1, int64_t: 1, default: 0)

#define FIELD_DESC_(type, member, ctype, count, KIND, fl) \
	{ #member, offsetof(union gp_rec_body, type.member), sizeof(ctype), count, GP_FK_##KIND, \
	  (fl) | (IS_SIGNED_(((gp_rec_##type *)0)->member) ? GP_FIELD_SIGNED : 0) },
#define FIELD_ARRAY_(NAME, name, value) \
	static const struct gp_field fields_##name[] = { GP_FIELDS_##NAME(FIELD_DESC_) };
GP_REC_TYPES(FIELD_ARRAY_)

static const struct { const struct gp_field *f; unsigned n; } tables[GP_REC_TYPE_MAX] = {
#define TABLE_(NAME, name, value) [GP_REC_##NAME] = { fields_##name, sizeof(fields_##name) / sizeof(fields_##name[0]) },
	GP_REC_TYPES(TABLE_)
};

/* Each listed member has the listed C type and size... */
#define FIELD_CHECK_(type, member, ctype, count, KIND, fl) \
	_Static_assert(sizeof(((gp_rec_##type *)0)->member) == sizeof(ctype) * (count), \
		       "gp_fields.h: size of " #type "." #member); \
	_Static_assert(_Generic(((gp_rec_##type *)0)->member, ctype: 1, ctype *: 1, default: 0), \
		       "gp_fields.h: C type of " #type "." #member);
#define TYPE_CHECK_(NAME, name, value) GP_FIELDS_##NAME(FIELD_CHECK_)
GP_REC_TYPES(TYPE_CHECK_)

/* ...and each list has as many entries as its struct has members: a
 * positional initializer with one value per listed field must fill the
 * struct exactly (-Wmissing-field-initializers and the excess-elements
 * warning are errors under -Werror).  That the order is the member order
 * is tested (tests/libprof/test_fields.c: offsets increase). */
#define ZERO_1 0
#define ZERO_3 { 0 }
#define ZERO_16 { 0 }
#define FIELD_ZERO_(type, member, ctype, count, KIND, fl) ZERO_##count,
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-braces"   /* the counter's union takes a bare 0 */
#define TYPE_COMPLETE_(NAME, name, value) \
	static const gp_rec_##name complete_##name __attribute__((unused)) = { GP_FIELDS_##NAME(FIELD_ZERO_) };
GP_REC_TYPES(TYPE_COMPLETE_)
#pragma GCC diagnostic pop
/* clang-format on */

GP_API const struct gp_field *gp_rec_fields(uint32_t type, unsigned *n)
{
	if (type >= GP_REC_TYPE_MAX || !tables[type].f) {
		if (n) *n = 0;
		return NULL;
	}
	if (n) *n = tables[type].n;
	return tables[type].f;
}

GP_API const struct gp_field *gp_rec_field(uint32_t type, const char *name)
{
	unsigned n;
	const struct gp_field *f = gp_rec_fields(type, &n);
	for (unsigned i = 0; name && i < n; i++)
		if (!strcmp(f[i].name, name)) return &f[i];
	return NULL;
}

GP_API unsigned gp_rec_fields_other(uint32_t type, const char *const *names, unsigned nnames,
				    const struct gp_field **out)
{
	unsigned n, k = 0;
	const struct gp_field *f = gp_rec_fields(type, &n);
	for (unsigned i = 0; i < n; i++) {
		unsigned j = 0;
		while (j < nnames && (!names[j] || strcmp(names[j], f[i].name))) j++;
		if (j == nnames) out[k++] = &f[i];
	}
	return k;
}

GP_API const char *gp_field_kind_name(uint32_t kind)
{
	static const char *const names[GP_FK_COUNT] = {
#define KIND_NAME_(KIND, what) [GP_FK_##KIND] = #KIND,
		GP_FIELD_KINDS(KIND_NAME_)
	};
	return kind < GP_FK_COUNT ? names[kind] : "unknown";
}
