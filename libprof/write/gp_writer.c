/* gp_writer.c — offline single-threaded writer (merge, tests): explicit
 * source ids, one open chunk per source, same encoding as the recorder. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/gp_error.h"
#include "common/gp_format.h"
#include "codec/gp_codec.h"
#include "gp_out.h"
#include "gp_writer.h"

struct wsrc {
	uint32_t id, tid;
	int tid_known;
	int meta_kind;     /* declared GP_SOURCE_META (in source 0) before its records */
	struct gp_enc enc; /* enc.buf NULL until first record */
};

struct gp_writer {
	struct gp_out out;
	gp_header hdr;  /* as written: rewritten at close with the flag */
	int meta_mixed; /* a metadata record went to a data source */
	struct wsrc *srcs;
	size_t nsrc, cap;
	int err; /* first write error, sticky */
};

static struct wsrc *get_src(gp_writer *w, uint32_t id)
{
	for (size_t i = 0; i < w->nsrc; i++)
		if (w->srcs[i].id == id) return &w->srcs[i];
	if (w->nsrc == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 8;
		struct wsrc *ns = realloc(w->srcs, nc * sizeof(*ns));
		if (!ns) return NULL;
		w->srcs = ns;
		w->cap = nc;
	}
	struct wsrc *s = &w->srcs[w->nsrc++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	return s;
}

GP_API int gp_writer_open(const char *path, const gp_header *hdr, int zstd_level, gp_writer **out)
{
	if (!path || !hdr || !out) return GP_ERR_INVALID;
	*out = NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) return GP_ERR_IO;
	gp_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return GP_ERR_NOMEM;
	}
	int rc = gp_out_init(&w->out, fd, zstd_level ? zstd_level : 3);
	w->hdr = *hdr;
	if (!rc) rc = gp_out_header(&w->out, hdr, 0);
	if (rc) {
		gp_out_free(&w->out);
		close(fd);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* Metadata (source 0) goes out before any other chunk, so every string and
 * source a data chunk refers to precedes it in the file. */
static int flush_src(gp_writer *w, struct wsrc *s)
{
	if (s->id != 0) {
		for (size_t i = 0; i < w->nsrc; i++)
			if (w->srcs[i].id == 0 && w->srcs[i].enc.count) {
				int rc = gp_out_chunk(&w->out, &w->srcs[i].enc);
				if (rc && !w->err) w->err = rc;
			}
	}
	int rc = gp_out_chunk(&w->out, &s->enc);
	if (rc && !w->err) w->err = rc;
	return rc;
}

GP_API int gp_writer_append(gp_writer *w, uint32_t source_id, const gp_record *r)
{
	if (!w || !r || r->type == 0 || r->type >= GP_REC_TYPE_MAX || source_id == GP_SOURCE_INDEX)
		return GP_ERR_INVALID;
	struct wsrc *s = get_src(w, source_id);
	if (!s) return GP_ERR_NOMEM;
	/* metadata in a source other than 0: fine in one declared a metadata
	 * source (merge: one per later input) before its first record */
	if (source_id != 0 && gp_rec_is_meta(r->type) && !s->meta_kind) w->meta_mixed = 1;
	if (source_id == 0 && r->type == GP_REC_SOURCE && r->u.source.source_id != 0) {
		struct wsrc *t = get_src(w, r->u.source.source_id);
		s = get_src(w, source_id); /* get_src may have moved the array */
		if (!t || !s) return GP_ERR_NOMEM;
		int meta = r->u.source.kind == GP_SOURCE_META;
		if (t->meta_kind && !meta && t->enc.buf) w->meta_mixed = 1; /* its metadata would be in a data source */
		t->meta_kind = meta && (t->meta_kind || !t->enc.buf);
	}
	if (!s->enc.buf) {
		if (gp_enc_init(&s->enc, source_id, s->tid)) return GP_ERR_NOMEM;
		if (w->hdr.major == 1) gp_enc_set_major(&s->enc, 1); /* gp_writer_open: a 1.x file */
	}
	if (r->type == GP_REC_SOURCE) {
		/* learn the source's tid for the thread rule (before it has data) */
		struct wsrc *t = get_src(w, r->u.source.source_id);
		s = get_src(w, source_id); /* get_src may have moved the array */
		if (!t || !s) return GP_ERR_NOMEM;
		/* only before the source has records: chunks already encoded with
		 * another tid would decode differently */
		if (!t->enc.buf && !t->tid_known) {
			t->tid = r->u.source.tid;
			t->tid_known = 1;
		}
	}
	int rc = gp_enc_record(&s->enc, r);
	if (rc) return rc;
	if (gp_enc_full(&s->enc)) flush_src(w, s);
	return 0;
}

GP_API int gp_writer_close(gp_writer *w)
{
	if (!w) return 0;
	/* source 0 first, then the others in creation order */
	for (size_t i = 0; i < w->nsrc; i++)
		if (w->srcs[i].id == 0 && w->srcs[i].enc.buf) flush_src(w, &w->srcs[i]);
	for (size_t i = 0; i < w->nsrc; i++)
		if (w->srcs[i].enc.buf) flush_src(w, &w->srcs[i]);
	int rc = gp_out_finish(&w->out);
	if (!w->err) w->err = rc;
	/* Every metadata record went to source 0: say so, so that a windowed
	 * read may skip data chunks (a pipe keeps the header as written: the
	 * trace is only read whole). */
	if (!w->err && !w->meta_mixed) gp_out_header_rewrite(&w->out, &w->hdr, GP_HDR_FLAG_META_APART);
	if (close(w->out.fd) && !w->err) w->err = GP_ERR_IO;
	for (size_t i = 0; i < w->nsrc; i++) gp_enc_free(&w->srcs[i].enc);
	free(w->srcs);
	gp_out_free(&w->out);
	rc = w->err;
	free(w);
	return rc;
}
