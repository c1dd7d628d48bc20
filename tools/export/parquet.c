/* parquet.c — the Parquet writer of parquet.h.  The file: "PAR1", the row
 * groups (per column, its chunk: pages, each a PageHeader then its
 * compressed body), the FileMetaData, its length (4 bytes, little-endian),
 * "PAR1".  Headers and footer are Thrift structures in the compact
 * protocol (field ids and types as in parquet.thrift; only the fields
 * written here are named). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/util.h"
#include "export/parquet.h"

/* ------------------------------------------------------------ bytes */
static void bb_byte(struct bytes *b, uint8_t c) { bytes_put(b, &c, 1); }
/* v as 4 bytes, little-endian, at b->v + at (at == b->n: appended) */
static void bb_le32(struct bytes *b, size_t at, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	if (at == b->n) bytes_put(b, x, 4);
	else memcpy(b->v + at, x, 4);
}

/* ------------------------------------------------------------ Thrift compact protocol */
enum { TC_TRUE = 1, TC_FALSE = 2, TC_I16 = 4, TC_I32 = 5, TC_I64 = 6, TC_BINARY = 8, TC_LIST = 9, TC_STRUCT = 12 };

struct tc {
	struct bytes *b;
	int16_t last[8]; /* the last field id of each open struct */
	int depth;
};


static void tc_field(struct tc *t, int16_t id, uint8_t type)
{
	int d = id - t->last[t->depth];
	if (d > 0 && d <= 15) {
		bb_byte(t->b, (uint8_t)(d << 4 | type));
	} else {
		bb_byte(t->b, type);
		bytes_varint(t->b, zigzag_enc(id));
	}
	t->last[t->depth] = id;
}
static void tc_i32(struct tc *t, int16_t id, int32_t v) { tc_field(t, id, TC_I32); bytes_varint(t->b, zigzag_enc(v)); }
static void tc_i64(struct tc *t, int16_t id, int64_t v) { tc_field(t, id, TC_I64); bytes_varint(t->b, zigzag_enc(v)); }
static void tc_i16(struct tc *t, int16_t id, int16_t v) { tc_field(t, id, TC_I16); bytes_varint(t->b, zigzag_enc(v)); }
static void tc_bin(struct tc *t, int16_t id, const void *p, size_t n)
{
	tc_field(t, id, TC_BINARY);
	bytes_varint(t->b, n);
	bytes_put(t->b, p, n);
}
static void tc_str(struct tc *t, int16_t id, const char *s) { tc_bin(t, id, s, strlen(s)); }
/* A struct: as field id of the enclosing one, or (id 0) as a list element. */
static void tc_begin(struct tc *t, int16_t id)
{
	if (id) tc_field(t, id, TC_STRUCT);
	t->last[++t->depth] = 0;
}
static void tc_end(struct tc *t)
{
	bb_byte(t->b, 0); /* STOP */
	t->depth--;
}
/* A list of n elements of type etype; the elements follow. */
static void tc_list(struct tc *t, int16_t id, uint8_t etype, size_t n)
{
	tc_field(t, id, TC_LIST);
	if (n < 15) {
		bb_byte(t->b, (uint8_t)(n << 4 | etype));
	} else {
		bb_byte(t->b, 0xf0 | etype);
		bytes_varint(t->b, n);
	}
}

/* ------------------------------------------------------------ the format's numbers */
enum { TYPE_INT64 = 2, TYPE_DOUBLE = 5, TYPE_BYTE_ARRAY = 6 };
static const int32_t physical_type[] = { [XT_INT] = TYPE_INT64, [XT_REAL] = TYPE_DOUBLE, [XT_TEXT] = TYPE_BYTE_ARRAY };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1 };
enum { CONVERTED_UTF8 = 0 };
enum { ENC_PLAIN = 0, ENC_RLE = 3 };
enum { CODEC_ZSTD = 6 };
enum { PAGE_DATA = 0 };
enum { PAGE_BYTES = 1 << 20 }; /* a page closes past this many bytes of values */
enum { ZSTD_LEVEL = 3 };

/* ------------------------------------------------------------ the writer */
/* One column chunk's figures, for the footer. */
struct chunk_meta {
	int64_t offset, unc, comp, nulls, min, max;
	int have_minmax;
};

struct col {
	const struct xt_col *c;
	struct bytes vals;  /* the open page's values, PLAIN */
	uint8_t *defs;     /* the open page's definition levels, a byte each */
	size_t cdefs;
	uint32_t rows;     /* rows in the open page */
	struct bytes chunk; /* the row group's finished pages */
	struct chunk_meta m;
};

struct pq_writer {
	FILE *f;
	int err; /* errno of the first failure */
	unsigned ncols;
	struct col *cols;
	uint32_t group_max, group_rows;
	int64_t offset, rows;
	struct chunk_meta *meta; /* row group g's column c: meta[g * ncols + c] */
	size_t ngroups, cmeta;
	int64_t *group_rows_of;
	size_t cgroups;
	ZSTD_CCtx *z;
	struct bytes page, comp, head;
};

pq_writer *pq_open(const char *path, const struct xt_table *t, uint32_t rows_per_group)
{
	FILE *f = fopen(path, "wb");
	if (!f) return NULL;
	pq_writer *w = xcalloc(1, sizeof(*w));
	w->f = f;
	w->ncols = t->ncols;
	w->cols = xcalloc(t->ncols ? t->ncols : 1, sizeof(*w->cols));
	for (unsigned i = 0; i < t->ncols; i++) w->cols[i].c = &t->cols[i];
	w->group_max = rows_per_group ? rows_per_group : 1;
	w->z = ZSTD_createCCtx();
	if (!w->z) {
		fclose(f);
		free(w->cols);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	if (fwrite("PAR1", 1, 4, f) != 4) w->err = errno ? errno : EIO;
	w->offset = 4;
	return w;
}

/* Definition levels of n rows (bit width 1), RLE/bit-packed hybrid with
 * its 4-byte length: one RLE run when all are equal, else bit-packed runs
 * of at most 63 groups of 8 (the header then fits one byte, as other
 * writers keep it). */
static void put_levels(struct bytes *b, const uint8_t *d, uint32_t n)
{
	size_t at = b->n;
	bb_le32(b, at, 0);
	uint32_t i = 1;
	while (i < n && d[i] == d[0]) i++;
	if (i >= n) {
		bytes_varint(b, (uint64_t)n << 1);
		bb_byte(b, n ? d[0] : 0);
	} else {
		for (uint32_t s = 0; s < n; s += 63 * 8) {
			uint32_t groups = (n - s + 7) / 8;
			if (groups > 63) groups = 63;
			bytes_varint(b, (uint64_t)groups << 1 | 1);
			for (uint32_t g = 0; g < groups; g++) {
				uint8_t byte = 0;
				for (uint32_t k = 0; k < 8 && s + 8 * g + k < n; k++) byte |= (uint8_t)(d[s + 8 * g + k] << k);
				bb_byte(b, byte);
			}
		}
	}
	bb_le32(b, at, (uint32_t)(b->n - at - 4));
}

/* Closes a column's open page: levels and values compressed, appended to
 * its chunk with the page header. */
static void page_flush(pq_writer *w, struct col *c)
{
	if (!c->rows) return;
	w->page.n = 0;
	if (!c->c->not_null) put_levels(&w->page, c->defs, c->rows);
	bytes_put(&w->page, c->vals.v, c->vals.n);
	size_t bound = ZSTD_compressBound(w->page.n);
	vec_reserve((void **)&w->comp.v, &w->comp.cap, bound, 1);
	size_t zn = ZSTD_compressCCtx(w->z, w->comp.v, w->comp.cap, w->page.v, w->page.n, ZSTD_LEVEL);
	if (ZSTD_isError(zn)) {
		/* only a bug or no memory: the bound is respected */
		fprintf(stderr, "gpuprof: zstd: %s\n", ZSTD_getErrorName(zn));
		abort();
	}
	w->head.n = 0;
	struct tc t = { &w->head, { 0 }, 0 };
	tc_i32(&t, 1, PAGE_DATA);
	tc_i32(&t, 2, (int32_t)w->page.n);
	tc_i32(&t, 3, (int32_t)zn);
	tc_begin(&t, 5); /* DataPageHeader */
	tc_i32(&t, 1, (int32_t)c->rows);
	tc_i32(&t, 2, ENC_PLAIN);
	tc_i32(&t, 3, ENC_RLE);
	tc_i32(&t, 4, ENC_RLE);
	tc_end(&t);
	bb_byte(&w->head, 0); /* PageHeader's STOP */
	bytes_put(&c->chunk, w->head.v, w->head.n);
	bytes_put(&c->chunk, w->comp.v, zn);
	c->m.unc += (int64_t)(w->head.n + w->page.n);
	c->m.comp += (int64_t)(w->head.n + zn);
	c->vals.n = 0;
	c->rows = 0;
}

static void out(pq_writer *w, const void *p, size_t n)
{
	if (w->err) return;
	if (n && fwrite(p, 1, n, w->f) != n) w->err = errno ? errno : EIO;
	w->offset += (int64_t)n;
}

/* The open row group to the file: each column's chunk in turn. */
static void group_flush(pq_writer *w)
{
	if (!w->group_rows) return;
	size_t need = (w->ngroups + 1) * w->ncols;
	if (need > w->cmeta) vec_reserve((void **)&w->meta, &w->cmeta, need, sizeof(*w->meta));
	if (w->ngroups + 1 > w->cgroups)
		vec_reserve((void **)&w->group_rows_of, &w->cgroups, w->ngroups + 1, sizeof(*w->group_rows_of));
	for (unsigned i = 0; i < w->ncols; i++) {
		struct col *c = &w->cols[i];
		page_flush(w, c);
		c->m.offset = w->offset;
		out(w, c->chunk.v, c->chunk.n);
		w->meta[w->ngroups * w->ncols + i] = c->m;
		memset(&c->m, 0, sizeof(c->m));
		c->chunk.n = 0;
	}
	w->group_rows_of[w->ngroups++] = w->group_rows;
	w->group_rows = 0;
}

/* 8 bytes of a fixed-width value, little-endian (PLAIN). */
static inline void put8(struct col *c, uint64_t u)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	u = __builtin_bswap64(u);
#endif
	bytes_put(&c->vals, &u, 8);
}

static void put_string(struct col *c, const char *s)
{
	size_t at = c->vals.n, n = 0;
	bb_le32(&c->vals, at, 0);
	/* valid UTF-8 as is; each byte that begins no valid sequence: U+FFFD */
	while (s[n]) {
		size_t run = n;
		int k;
		while (s[run] && (k = utf8_seq_len(s + run)) > 0) run += (size_t)k;
		bytes_put(&c->vals, s + n, run - n);
		n = run;
		if (s[n]) {
			bytes_put(&c->vals, "\xef\xbf\xbd", 3);
			n++;
		}
	}
	bb_le32(&c->vals, at, (uint32_t)(c->vals.n - at - 4));
}

/* The row being built's value of column c, its level, its statistics. */
static void put_value(struct col *c, const struct xt_val *v)
{
	if (c->rows >= c->cdefs) vec_reserve((void **)&c->defs, &c->cdefs, c->rows + 1, 1);
	c->defs[c->rows] = v->kind != XV_NULL;
	uint64_t u;
	switch (v->kind) {
	case XV_INT:
		put8(c, (uint64_t)v->i);
		if (!c->m.have_minmax || v->i < c->m.min) c->m.min = v->i;
		if (!c->m.have_minmax || v->i > c->m.max) c->m.max = v->i;
		c->m.have_minmax = 1;
		break;
	case XV_REAL:
		memcpy(&u, &v->d, 8);
		put8(c, u);
		break;
	case XV_TEXT: put_string(c, v->s); break;
	default:
		if (c->c->not_null) {
			fprintf(stderr, "gpuprof: parquet: NULL in required column %s\n", c->c->name);
			abort();
		}
		c->m.nulls++;
	}
}

int pq_row(pq_writer *w, const struct xt_val *v)
{
	for (unsigned i = 0; i < w->ncols; i++) {
		struct col *c = &w->cols[i];
		put_value(c, &v[i]);
		if (++c->rows >= PQ_PAGE_ROWS || c->vals.n >= PAGE_BYTES) page_flush(w, c);
	}
	w->rows++;
	if (++w->group_rows >= w->group_max) group_flush(w);
	if (w->err) {
		errno = w->err;
		return -1;
	}
	return 0;
}

/* The FileMetaData. */
static void footer(pq_writer *w, struct bytes *b)
{
	struct tc t = { b, { 0 }, 0 };
	tc_i32(&t, 1, 1); /* version */
	tc_list(&t, 2, TC_STRUCT, w->ncols + 1);
	tc_begin(&t, 0); /* the root */
	tc_str(&t, 4, "schema");
	tc_i32(&t, 5, (int32_t)w->ncols);
	tc_end(&t);
	for (unsigned i = 0; i < w->ncols; i++) {
		const struct xt_col *c = w->cols[i].c;
		tc_begin(&t, 0);
		tc_i32(&t, 1, physical_type[c->kind]);
		tc_i32(&t, 3, c->not_null ? REP_REQUIRED : REP_OPTIONAL);
		tc_str(&t, 4, c->name);
		if (c->kind == XT_TEXT) {
			tc_i32(&t, 6, CONVERTED_UTF8);
			tc_begin(&t, 10); /* LogicalType */
			tc_begin(&t, 1);  /* STRING */
			tc_end(&t);
			tc_end(&t);
		}
		tc_end(&t);
	}
	tc_i64(&t, 3, w->rows);
	tc_list(&t, 4, TC_STRUCT, w->ngroups);
	for (size_t g = 0; g < w->ngroups; g++) {
		const struct chunk_meta *m = &w->meta[g * w->ncols];
		int64_t unc = 0, comp = 0;
		tc_begin(&t, 0); /* RowGroup */
		tc_list(&t, 1, TC_STRUCT, w->ncols);
		for (unsigned i = 0; i < w->ncols; i++) {
			const struct xt_col *c = w->cols[i].c;
			unc += m[i].unc;
			comp += m[i].comp;
			tc_begin(&t, 0); /* ColumnChunk */
			tc_i64(&t, 2, 0);  /* file_offset: no ColumnMetaData outside the footer */
			tc_begin(&t, 3); /* ColumnMetaData */
			tc_i32(&t, 1, physical_type[c->kind]);
			tc_list(&t, 2, TC_I32, c->not_null ? 1 : 2);
			bytes_varint(b, zigzag_enc(ENC_PLAIN));
			if (!c->not_null) bytes_varint(b, zigzag_enc(ENC_RLE));
			tc_list(&t, 3, TC_BINARY, 1);
			bytes_varint(b, strlen(c->name));
			bytes_put(b, c->name, strlen(c->name));
			tc_i32(&t, 4, CODEC_ZSTD);
			tc_i64(&t, 5, w->group_rows_of[g]); /* num_values: every row has one, NULL or not */
			tc_i64(&t, 6, m[i].unc);
			tc_i64(&t, 7, m[i].comp);
			tc_i64(&t, 9, m[i].offset);
			tc_begin(&t, 12); /* Statistics */
			tc_i64(&t, 3, m[i].nulls);
			if (m[i].have_minmax) {
				uint8_t mx[8], mn[8];
				for (int k = 0; k < 8; k++) {
					mx[k] = (uint8_t)((uint64_t)m[i].max >> (8 * k));
					mn[k] = (uint8_t)((uint64_t)m[i].min >> (8 * k));
				}
				tc_bin(&t, 5, mx, 8);
				tc_bin(&t, 6, mn, 8);
			}
			tc_end(&t);
			tc_end(&t);
			tc_end(&t);
		}
		tc_i64(&t, 2, unc);
		tc_i64(&t, 3, w->group_rows_of[g]);
		tc_i64(&t, 5, m[0].offset);
		tc_i64(&t, 6, comp);
		tc_i16(&t, 7, (int16_t)g);
		tc_end(&t);
	}
	tc_str(&t, 6, "gpuprof");
	/* column_orders: each column's min/max by its type's order (signed for INT64) */
	tc_list(&t, 7, TC_STRUCT, w->ncols);
	for (unsigned i = 0; i < w->ncols; i++) {
		tc_begin(&t, 0);
		tc_begin(&t, 1); /* TYPE_ORDER */
		tc_end(&t);
		tc_end(&t);
	}
	bb_byte(b, 0); /* FileMetaData's STOP */
}

int pq_close(pq_writer *w, int abandon)
{
	int rc = 0;
	if (!abandon) {
		group_flush(w);
		struct bytes b = { 0 };
		footer(w, &b);
		out(w, b.v, b.n);
		free(b.v);
		uint8_t tail[8] = { (uint8_t)b.n, (uint8_t)(b.n >> 8), (uint8_t)(b.n >> 16), (uint8_t)(b.n >> 24),
				    'P', 'A', 'R', '1' };
		out(w, tail, 8);
	}
	if (fclose(w->f) != 0 && !w->err) w->err = errno ? errno : EIO;
	if (w->err && !abandon) {
		errno = w->err;
		rc = -1;
	}
	for (unsigned i = 0; i < w->ncols; i++) {
		bytes_free(&w->cols[i].vals);
		free(w->cols[i].defs);
		bytes_free(&w->cols[i].chunk);
	}
	free(w->cols);
	free(w->meta);
	free(w->group_rows_of);
	bytes_free(&w->page);
	bytes_free(&w->comp);
	bytes_free(&w->head);
	ZSTD_freeCCtx(w->z);
	free(w);
	return rc;
}
