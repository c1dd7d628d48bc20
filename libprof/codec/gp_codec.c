/* gp_codec.c — record encoding and decoding inside one chunk (varints,
 * per-chunk delta state, thread rule).  Layout: docs/FORMAT.md "Records". */
#include <stdlib.h>
#include "common/gp_error.h"
#include "common/gp_format.h"
#include "gp_codec.h"

/* The encoder's template table: the cold bytes (a record's payload after
 * its first three fields) of each template of the chunk, found by hash.
 * Twice GP_TMPL_MAX slots: probes stay short. */
struct gp_enc_slot {
	uint32_t off;  /* of the cold bytes in buf; 0: free (a payload never starts at 0) */
	uint32_t len;  /* of the cold bytes */
	uint16_t idx;  /* template index */
	uint16_t type; /* record type */
};
#define ENC_SLOTS (2 * GP_TMPL_MAX)

int gp_enc_init(struct gp_enc *e, uint32_t source, uint32_t src_tid)
{
	memset(e, 0, sizeof(*e));
	e->cap = GP_CHUNK_TARGET + 4096;
	e->buf = malloc(e->cap);
	e->slots = calloc(ENC_SLOTS, sizeof(*e->slots));
	if (!e->buf || !e->slots) {
		gp_enc_free(e);
		return GP_ERR_NOMEM;
	}
	e->source = source;
	e->src_tid = src_tid;
	e->major = GP_FORMAT_MAJOR;
	gp_enc_reset(e);
	return 0;
}

void gp_enc_set_major(struct gp_enc *e, unsigned major)
{
	e->major = major;
	gp_enc_reset(e);
}

void gp_enc_free(struct gp_enc *e)
{
	free(e->buf);
	free(e->bbuf);
	free(e->slots);
	e->buf = e->bbuf = NULL;
	e->slots = NULL;
}

void gp_enc_reset(struct gp_enc *e)
{
	e->len = e->major >= 2 ? 4 : 0; /* 2.0: room for section A's length */
	e->blen = 0;
	e->count = 0;
	e->first_ts = e->last_ts = 0;
	e->has_ts = 0;
	e->prev_ts = e->prev_corr = e->prev_range = 0;
	if (e->ntmpl) memset(e->slots, 0, ENC_SLOTS * sizeof(*e->slots));
	e->ntmpl = 0;
}

size_t gp_enc_finish(struct gp_enc *e)
{
	if (e->major >= 2) gp_put32(e->buf, (uint32_t)(e->len - 4));
	return e->len + e->blen;
}

static size_t enc_bound(const gp_record *r)
{
	size_t b = 16 + 40 * 10; /* type + length + up to 40 varint fields */
	if (r->type == GP_REC_STRING) b += r->u.string.len > GP_MAX_STRING_LEN ? GP_MAX_STRING_LEN : r->u.string.len;
	if (r->type == GP_REC_STACK) b += 10u * GP_STACK_MAX_FRAMES;
	return b;
}

#define V(x) (p = gp_put_varint(p, (uint64_t)(x)))
#define Z(x) (p = gp_put_varint(p, gp_zz((int64_t)(x))))
#define TS(x) \
	do { \
		uint64_t t_ = (x); \
		Z(t_ - e->prev_ts); \
		e->prev_ts = t_; \
		if (!e->has_ts) { \
			e->first_ts = e->last_ts = t_; \
			e->has_ts = 1; \
		} else { \
			if (t_ < e->first_ts) e->first_ts = t_; \
			if (t_ > e->last_ts) e->last_ts = t_; \
		} \
	} while (0)
#define DUR(s, en) Z((uint64_t)(en) - (uint64_t)(s))
#define CORR(c) \
	do { \
		uint64_t c_ = (c); \
		Z(c_ - e->prev_corr); \
		e->prev_corr = c_; \
	} while (0)
#define TID(t) V((t) == e->src_tid ? 0u : (t))

/* ---- format 2.0: templates (docs/FORMAT.md "Templates").  An instance
 * is, in section A, a tag byte 0x80 | L << 6 | c2 << 4 | c1 << 2 | c0 and
 * the template index (1 byte, or 2 little-endian when L); in section B the
 * start's delta, the duration and the third hot value's delta.  Each value
 * takes the fewest bytes of its width code c (1, 2, 3 or 8) that hold it as
 * a signed little-endian number. */
static const uint8_t inst_width[4] = { 1, 2, 3, 8 };

static unsigned width_code(int64_t v)
{
	if (v == (int8_t)v) return 0;
	if (v == (int16_t)v) return 1;
	if (v >= -(1ll << 23) && v < (1ll << 23)) return 2;
	return 3;
}

static uint32_t cold_hash(uint32_t type, const uint8_t *p, size_t n)
{
	uint64_t h = (type + 1) * 0x9E3779B97F4A7C15ull ^ n;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, p, n);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	return (uint32_t)(h ^ (h >> 29));
}

/* The plain record of a template type just encoded at `start` (payload at
 * pl, ending at end): an instance replaces it when its cold bytes are those
 * of a template of the chunk, else it defines the next template (while
 * there is room: the decoder counts the same way).  hot: its three hot
 * values.  Returns the record's length in section A (B grows by the rest). */
static size_t enc_template(struct gp_enc *e, uint32_t type, uint8_t *start, const uint8_t *pl, const uint8_t *end,
			   const int64_t hot[3])
{
	const uint8_t *q = pl;
	for (int i = 0; i < 3; i++)
		while (*q++ & 0x80) {}
	size_t clen = (size_t)(end - q);
	uint32_t h = cold_hash(type, q, clen);
	struct gp_enc_slot *sl;
	for (uint32_t i = h & (ENC_SLOTS - 1);; i = (i + 1) & (ENC_SLOTS - 1)) {
		sl = &e->slots[i];
		if (!sl->off) break;
		if (sl->type == type && sl->len == clen && !memcmp(e->buf + sl->off, q, clen)) {
			unsigned c[3], tag = 0x80 | (sl->idx > 0xff ? 0x40 : 0);
			for (int k = 0; k < 3; k++) {
				c[k] = width_code(hot[k]);
				tag |= c[k] << (2 * k);
			}
			uint8_t *o = start;
			*o++ = (uint8_t)tag;
			*o++ = (uint8_t)sl->idx;
			if (sl->idx > 0xff) *o++ = (uint8_t)(sl->idx >> 8);
			uint8_t *b = e->bbuf + e->blen;
			for (int k = 0; k < 3; k++) {
				gp_put64(b, (uint64_t)hot[k]); /* room for 8 (gp_enc_record) */
				b += inst_width[c[k]];
			}
			e->blen = (size_t)(b - e->bbuf);
			return (size_t)(o - start);
		}
	}
	if (e->ntmpl < GP_TMPL_MAX)
		*sl = (struct gp_enc_slot){ (uint32_t)(q - e->buf), (uint32_t)clen, (uint16_t)e->ntmpl++, (uint16_t)type };
	return (size_t)(end - start);
}

int gp_enc_record(struct gp_enc *e, const gp_record *r)
{
	if (r->type == 0 || r->type >= GP_REC_TYPE_MAX) return GP_ERR_INVALID;
	size_t need = e->len + enc_bound(r);
	if (need > e->cap) {
		size_t nc = e->cap * 2 > need ? e->cap * 2 : need;
		uint8_t *nb = realloc(e->buf, nc);
		if (!nb) return GP_ERR_NOMEM;
		e->buf = nb;
		e->cap = nc;
	}
	if (e->major >= 2 && e->blen + 3 * 8 > e->bcap) { /* an instance's section-B bytes (stores of 8) */
		size_t nc = e->bcap ? e->bcap * 2 : 64u << 10;
		uint8_t *nb = realloc(e->bbuf, nc);
		if (!nb) return GP_ERR_NOMEM;
		e->bbuf = nb;
		e->bcap = nc;
	}
	uint8_t *start = e->buf + e->len;
	uint64_t prev_ts = e->prev_ts, prev_corr = e->prev_corr; /* before this record: an instance's bases */
	start[0] = (uint8_t)r->type;
	uint8_t *pl = start + 2; /* one length byte reserved; moved if longer */
	uint8_t *p = pl;
	const union gp_rec_body *u = &r->u;
	/* each record type's fields in their order on disk, a few to a line (docs/FORMAT.md "Records"): */
	/* clang-format off */
	switch (r->type) {
	case GP_REC_STRING: {
		uint32_t n = u->string.len > GP_MAX_STRING_LEN ? GP_MAX_STRING_LEN : u->string.len;
		V(u->string.id); V(n);
		if (n) memcpy(p, u->string.str, n);
		p += n;
		break;
	}
	case GP_REC_SOURCE:
		V(u->source.source_id); V(u->source.kind); V(u->source.pid); V(u->source.tid); V(u->source.name_id);
		break;
	case GP_REC_PROCESS:
		V(u->process.pid); V(u->process.ppid); V(u->process.name_id); V(u->process.host_id);
		Z((int64_t)u->process.rank); V(u->process.start_ns); V(u->process.settings_id);
		break;
	case GP_REC_THREAD:
		V(u->thread.pid); V(u->thread.tid); V(u->thread.name_id);
		break;
	case GP_REC_DEVICE: {
		const gp_rec_device *d = &u->device;
		V(d->device_id); V(d->name_id); V(d->cc_major); V(d->cc_minor); V(d->sm_count);
		V(d->max_threads_per_sm); V(d->max_blocks_per_sm); V(d->max_regs_per_sm);
		V(d->max_smem_per_sm); V(d->max_smem_per_block); V(d->max_threads_per_block);
		V(d->warp_size); V(d->clock_khz); V(d->mem_clock_khz); V(d->mem_bus_width);
		V(d->global_mem_bytes);
		V(16); memcpy(p, d->uuid, 16); p += 16;
		V(d->pci_bus_id);
		break;
	}
	case GP_REC_API: {
		const gp_rec_api *a = &u->api;
		TS(a->start_ns); DUR(a->start_ns, a->end_ns); CORR(a->correlation_id);
		V(a->domain); V(a->cbid); V(a->name_id); TID(a->tid); V(a->stack_id); Z((int64_t)a->status);
		break;
	}
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &u->kernel;
		TS(k->start_ns); DUR(k->start_ns, k->end_ns); CORR(k->correlation_id);
		V(k->device_id); V(k->context_id); V(k->stream_id);
		V(k->grid[0]); V(k->grid[1]); V(k->grid[2]); V(k->block[0]); V(k->block[1]); V(k->block[2]);
		V(k->registers); V(k->static_smem); V(k->dynamic_smem); V(k->local_mem);
		V(k->name_id); V(k->launch_type); V(k->graph_id); V(k->graph_node_id);
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &u->memcpy;
		TS(m->start_ns); DUR(m->start_ns, m->end_ns); CORR(m->correlation_id);
		V(m->bytes); V(m->device_id); V(m->context_id); V(m->stream_id);
		V(m->copy_kind); V(m->src_kind); V(m->dst_kind); V(m->flags);
		V(m->src_device); V(m->dst_device); V(m->graph_node_id);
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &u->memset;
		TS(m->start_ns); DUR(m->start_ns, m->end_ns); CORR(m->correlation_id);
		V(m->bytes); V(m->device_id); V(m->context_id); V(m->stream_id);
		V(m->value); V(m->mem_kind); V(m->flags); V(m->graph_node_id);
		break;
	}
	case GP_REC_NVTX_RANGE: {
		const gp_rec_nvtx_range *n = &u->nvtx_range;
		TS(n->start_ns); DUR(n->start_ns, n->end_ns); V(n->range_id); V(n->kind); V(n->flags);
		V(n->domain_id); V(n->message_id); V(n->category); V(n->color); V(n->depth);
		TID(n->tid);
		/* end_tid: 0 = same as the tid the reader will decode */
		uint32_t dec_tid = (n->tid == e->src_tid || n->tid == 0) ? e->src_tid : n->tid;
		V(n->end_tid == dec_tid ? 0u : (uint64_t)n->end_tid + 1);
		Z(n->payload);
		break;
	}
	case GP_REC_NVTX_MARK: {
		const gp_rec_nvtx_mark *m = &u->nvtx_mark;
		TS(m->ts_ns); V(m->domain_id); V(m->message_id); V(m->category); V(m->color); TID(m->tid);
		break;
	}
	case GP_REC_SYNC: {
		const gp_rec_sync *s = &u->sync;
		TS(s->start_ns); DUR(s->start_ns, s->end_ns); CORR(s->correlation_id);
		V(s->type); V(s->context_id); V(s->stream_id); V(s->event_id);
		break;
	}
	case GP_REC_MEMORY: {
		const gp_rec_memory *m = &u->memory;
		TS(m->ts_ns); CORR(m->correlation_id); V(m->address); V(m->bytes);
		V(m->device_id); V(m->context_id); V(m->stream_id); V(m->op); V(m->mem_kind);
		break;
	}
	case GP_REC_DROPPED:
		TS(u->dropped.ts_ns); V(u->dropped.count); V(u->dropped.where); V(u->dropped.source_id);
		break;
	case GP_REC_CLOCK:
		TS(u->clock.trace_ns); V(u->clock.realtime_ns); V(u->clock.gpu_ns);
		break;
	case GP_REC_COUNTER: {
		const gp_rec_counter *c = &u->counter;
		uint64_t bits;
		memcpy(&bits, &c->value, 8);
		TS(c->ts_ns); V(c->name_id); V(c->device_id); V(c->kind);
		if (c->kind == GP_COUNTER_INT) Z((int64_t)bits);
		else if (c->kind == GP_COUNTER_DOUBLE) V(__builtin_bswap64(bits));
		else V(bits);
		break;
	}
	case GP_REC_MODULE:
		TS(u->module.ts_ns); V(u->module.base); V(u->module.size); V(u->module.file_offset); V(u->module.path_id);
		break;
	case GP_REC_STACK: {
		uint32_t n = u->stack.nframes > GP_STACK_MAX_FRAMES ? GP_STACK_MAX_FRAMES : u->stack.nframes;
		if (!u->stack.frames) n = 0;
		V(u->stack.stack_id); V(n);
		uint64_t prev = 0;
		for (uint32_t i = 0; i < n; i++) { Z(u->stack.frames[i] - prev); prev = u->stack.frames[i]; }
		break;
	}
	case GP_REC_WINDOW:
		TS(u->window.start_ns); DUR(u->window.start_ns, u->window.end_ns); V(u->window.device_id);
		/* a window is selected by overlap (format 1.4): the chunk's span
		 * covers its end, so a time window that starts inside it reads it */
		if (u->window.end_ns > e->last_ts) e->last_ts = u->window.end_ns;
		break;
	case GP_REC_GRAPH_NODE: {
		const gp_rec_graph_node *g = &u->graph_node;
		TS(g->ts_ns); V(g->graph_id); V(g->node_id); V(g->origin_node_id); V(g->node_type); TID(g->tid);
		break;
	}
	case GP_REC_ALLOC_FAIL: {
		const gp_rec_alloc_fail *f = &u->alloc_fail;
		TS(f->ts_ns); CORR(f->correlation_id); V(f->bytes); V(f->total_bytes); V(f->free_bytes);
		V((uint32_t)(f->device_id + 1u)); V(f->domain); V(f->cbid); Z((int64_t)f->status); TID(f->tid);
		break;
	}
	default:
		return GP_ERR_INVALID;
	}
	/* clang-format on */
	size_t plen = (size_t)(p - pl), rlen;
	if (plen < 0x80) {
		start[1] = (uint8_t)plen;
		rlen = 2 + plen;
	} else {
		uint8_t tmp[10];
		size_t lb = (size_t)(gp_put_varint(tmp, plen) - tmp);
		memmove(start + 1 + lb, pl, plen);
		memcpy(start + 1, tmp, lb);
		pl = start + 1 + lb;
		rlen = 1 + lb + plen;
	}
	if (e->major >= 2 && ((GP_TMPL_TYPES >> r->type) & 1)) {
		/* the start, end and third field sit at the same offsets in each
		 * of these types (checked in gp_dec's table below) */
		const gp_rec_api *a = &u->api;
		int nvtx = r->type == GP_REC_NVTX_RANGE;
		int64_t hot[3] = { (int64_t)(a->start_ns - prev_ts), (int64_t)(a->end_ns - a->start_ns),
				   (int64_t)(a->correlation_id - (nvtx ? e->prev_range : prev_corr)) };
		if (nvtx) e->prev_range = a->correlation_id;
		rlen = enc_template(e, r->type, start, pl, pl + plen, hot);
	}
	e->len += rlen;
	e->count++;
	return 0;
}

/* ------------------------------------------------------------------ decode
 * Two decoders share one body (dec_body, specialised by `fast`):
 *  - the careful one bounds every varint by the record's end (a missing
 *    trailing field reads 0, a malformed varint is an error);
 *  - the fast one, used for the hot record types when the buffer is known
 *    to be readable GP_DEC_OVERREAD bytes past the record start, reads
 *    varints without end checks (1- and 2-byte fast paths) and only checks
 *    afterwards that it stayed inside the record.  If it did not (short
 *    record, malformed varint), the record is decoded again carefully, so
 *    both give the same result on every input. */

/* PEXT is one fast instruction on Intel since Haswell and AMD since Zen 3;
 * Zen 1 and 2 run it in microcode (tens to hundreds of cycles), slower than
 * the shifts.  (Those CPUs have AVX2 too, which the 2.0 loop also uses.)
 * __builtin_cpu_supports reads what libgcc found at start-up. */
int gp_dec_fast_pext(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("avx2") && !__builtin_cpu_is("znver1") &&
	       !__builtin_cpu_is("znver2");
#else
	return 0;
#endif
}

void gp_dec_free(struct gp_dec *d)
{
	free(d->tmpl);
	d->tmpl = NULL;
	d->ntmpl = d->tcap = 0;
}

/* The fast decoder's limits: records in [p, fast_lim) may be read 256
 * bytes ahead, and an instance's section-B values before fast_lim_b with
 * three 8-byte loads (at most 16 bytes in, for the third value). */
#define INST_B_READ 24
static void set_fast_lims(struct gp_dec *d, const uint8_t *readable_end)
{
	size_t room = (size_t)(readable_end - d->p);
	d->fast_lim = d->p + (room > GP_DEC_OVERREAD ? room - GP_DEC_OVERREAD : 0);
	d->fast_lim_b = readable_end - d->b > INST_B_READ ? readable_end - INST_B_READ : d->b;
}

void gp_dec_start(struct gp_dec *d, const uint8_t *buf, size_t len, uint32_t source, uint32_t src_tid,
		  unsigned major)
{
	d->p = buf;
	d->end = d->b = d->bend = buf + len;
	d->source = source;
	d->src_tid = src_tid;
	d->prev_ts = d->prev_corr = d->prev_range = 0;
	d->why = NULL;
	d->err = 0;
	d->pext = gp_dec_fast_pext();
	d->major = major;
	d->ntmpl = 0;
	if (major >= 2) {
		/* section A's length, A, then section B */
		uint32_t alen = len >= 4 ? gp_get32(buf) : 0;
		if (len < 4 || alen > len - 4) {
			d->why = "section lengths beyond the chunk";
			d->err = GP_ERR_CORRUPT;
		} else {
			d->p = buf + 4;
			d->end = d->b = buf + 4 + alen;
		}
	}
	set_fast_lims(d, buf + len);
}

void gp_dec_set_slack(struct gp_dec *d, size_t slack)
{
	set_fast_lims(d, d->bend + slack);
}

/* Bounded varint read: missing field (q at end) reads 0, malformed sets *bad. */
static inline __attribute__((always_inline)) uint64_t rd(const uint8_t **qq, const uint8_t *end, int *bad)
{
	const uint8_t *q = *qq;
	if (q >= end) return 0;
	if (GP_LIKELY(*q < 0x80)) {
		*qq = q + 1;
		return *q;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; q < end && shift < 64; shift += 7) {
		uint8_t b = *q++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*qq = q;
			return v;
		}
	}
	*bad = 1;
	*qq = end;
	return 0;
}

/* Unbounded varint read (caller guarantees 10 readable bytes): same value
 * as rd() for a well-formed varint; more than 10 bytes sets *bad.  One-byte
 * varints take a branch; longer ones up to 8 bytes are decoded without
 * data-dependent branches (timestamps and ids vary in length from record to
 * record, and mispredicted branches were the decoder's main cost). */
static inline __attribute__((always_inline)) uint64_t frd(const uint8_t **qq, int *bad)
{
	const uint8_t *q = *qq;
	uint64_t b0 = q[0];
	if (GP_LIKELY(b0 < 0x80)) {
		*qq = q + 1;
		return b0;
	}
	uint64_t b1 = q[1];
	if (GP_LIKELY(b1 < 0x80)) {
		*qq = q + 2;
		return (b0 & 0x7f) | (b1 << 7);
	}
	uint64_t w;
	memcpy(&w, q, 8);
	uint64_t stop = ~w & 0x8080808080808080ull; /* high bit clear: last byte */
	if (GP_LIKELY(stop)) {
		unsigned nb = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
		uint64_t x = w & (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
		x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
		x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
		x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
		*qq = q + nb;
		return x;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint64_t b = *q++;
		v |= (b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*qq = q;
			return v;
		}
	}
	*bad = 1;
	*qq = q;
	return 0;
}

/* Unbounded varint read without data-dependent branches (caller guarantees
 * 10 readable bytes), for the fields whose length varies from record to
 * record (timestamps, durations, names, launch shapes): frd's "one byte?
 * two bytes?" branches mispredicted on them (a third of its one-byte
 * branch and of its two-byte branch, on a training trace), and the
 * mispredicts were most of the decoder's stalls.  Up to 8 bytes: the stop
 * byte is found in one 8-byte word and the 7-bit groups are gathered by
 * PEXT where the CPU has a fast one (`px`), else by three shift-and-mask
 * steps; 9 and 10 bytes (values >= 2^56, rare) loop; more sets *bad. */
static inline __attribute__((always_inline)) uint64_t frv(const uint8_t **qq, int *bad, const int px)
{
	const uint8_t *q = *qq;
	uint64_t w;
	memcpy(&w, q, 8);
	uint64_t stop = ~w & 0x8080808080808080ull; /* high bit clear: last byte */
	if (GP_UNLIKELY(!stop)) return frd(qq, bad);
	uint64_t keep = (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full; /* the groups up to the last byte */
	uint64_t x;
#if defined(__x86_64__)
	if (px) {
		/* inline asm: the instruction is chosen at run time (gp_dec_start),
		 * not by the compiler's -march */
		__asm__("pextq %2, %1, %0"
			: "=r"(x)
			: "r"(w), "r"(keep));
	} else
#endif
	{
		x = w & keep;
		x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
		x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
		x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
	}
	*qq = q + ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
	return x;
}

/* R: a field that is nearly always one byte (kinds, flags, small ids);
 * RV: one whose length varies (frv).  Both give rd()'s value. */
#define R() (fast ? frd(&q, &bad) : rd(&q, pe, &bad))
#define RV() (fast ? frv(&q, &bad, px) : rd(&q, pe, &bad))
#define RVZ() gp_unzz(RV())
#define RZ() gp_unzz(R())
#define RTS() (*pts += (uint64_t)RVZ())
#define RCORR() (*pcorr += (uint64_t)RZ())
#define RTID() ({ uint32_t t_ = (uint32_t)R(); t_ ? t_ : d->src_tid; })

/* Decodes one record body [q, pe) of a known type into r->u.  Returns 1 ok,
 * GP_ERR_CORRUPT (d->why set) on a malformed record; in fast mode also
 * returns 0 when the fast read left the record (caller retries carefully). */
static inline __attribute__((always_inline)) int dec_body(struct gp_dec *d, gp_record *r, uint32_t type, const uint8_t *q, const uint8_t *pe, const int fast,
							  const int px, uint64_t *pts, uint64_t *pcorr)
{
	int bad = 0;
	/* each record type's fields in their order on disk, a few to a line (docs/FORMAT.md "Records"): */
	/* clang-format off */
	switch (type) {
	case GP_REC_STRING: {
		gp_rec_string *s = &r->u.string;
		s->id = (uint32_t)R();
		uint64_t n = R();
		if (n > (uint64_t)(pe - q)) { d->why = "string length beyond record"; return GP_ERR_CORRUPT; }
		s->len = (uint32_t)n; s->str = (const char *)q; q += n;
		break;
	}
	case GP_REC_SOURCE: {
		gp_rec_source *s = &r->u.source;
		s->source_id = (uint32_t)R(); s->kind = (uint32_t)R(); s->pid = (uint32_t)R();
		s->tid = (uint32_t)R(); s->name_id = (uint32_t)R();
		break;
	}
	case GP_REC_PROCESS: {
		gp_rec_process *s = &r->u.process;
		s->pid = (uint32_t)R(); s->ppid = (uint32_t)R(); s->name_id = (uint32_t)R();
		s->host_id = (uint32_t)R(); s->rank = (int32_t)RZ(); s->start_ns = R();
		s->settings_id = (uint32_t)R(); /* since 1.2: absent (0) in older files */
		break;
	}
	case GP_REC_THREAD:
		r->u.thread.pid = (uint32_t)R(); r->u.thread.tid = (uint32_t)R(); r->u.thread.name_id = (uint32_t)R();
		break;
	case GP_REC_DEVICE: {
		gp_rec_device *v = &r->u.device;
		v->device_id = (uint32_t)R(); v->name_id = (uint32_t)R(); v->cc_major = (uint32_t)R();
		v->cc_minor = (uint32_t)R(); v->sm_count = (uint32_t)R(); v->max_threads_per_sm = (uint32_t)R();
		v->max_blocks_per_sm = (uint32_t)R(); v->max_regs_per_sm = (uint32_t)R();
		v->max_smem_per_sm = (uint32_t)R(); v->max_smem_per_block = (uint32_t)R();
		v->max_threads_per_block = (uint32_t)R(); v->warp_size = (uint32_t)R();
		v->clock_khz = (uint32_t)R(); v->mem_clock_khz = (uint32_t)R(); v->mem_bus_width = (uint32_t)R();
		v->global_mem_bytes = R();
		uint64_t n = R();
		if (n > (uint64_t)(pe - q)) { d->why = "uuid length beyond record"; return GP_ERR_CORRUPT; }
		memset(v->uuid, 0, 16);
		memcpy(v->uuid, q, n < 16 ? n : 16);
		q += n;
		v->pci_bus_id = (uint32_t)R();
		break;
	}
	case GP_REC_API: {
		gp_rec_api *a = &r->u.api;
		a->start_ns = RTS(); a->end_ns = a->start_ns + (uint64_t)RVZ(); a->correlation_id = RCORR();
		a->domain = (uint32_t)R(); a->cbid = (uint32_t)RV(); a->name_id = (uint32_t)RV();
		a->tid = RTID(); a->stack_id = (uint32_t)R(); a->status = (int32_t)RZ();
		break;
	}
	case GP_REC_KERNEL: {
		gp_rec_kernel *k = &r->u.kernel;
		k->start_ns = RTS(); k->end_ns = k->start_ns + (uint64_t)RVZ(); k->correlation_id = RCORR();
		k->device_id = (uint32_t)R(); k->context_id = (uint32_t)R(); k->stream_id = (uint32_t)R();
		k->grid[0] = (uint32_t)RV(); k->grid[1] = (uint32_t)R(); k->grid[2] = (uint32_t)R();
		k->block[0] = (uint32_t)RV(); k->block[1] = (uint32_t)R(); k->block[2] = (uint32_t)R();
		k->registers = (uint32_t)RV(); k->static_smem = (uint32_t)RV(); k->dynamic_smem = (uint32_t)RV();
		k->local_mem = (uint32_t)R(); k->name_id = (uint32_t)RV(); k->launch_type = (uint32_t)R();
		k->graph_id = R(); k->graph_node_id = R();
		break;
	}
	case GP_REC_MEMCPY: {
		gp_rec_memcpy *m = &r->u.memcpy;
		m->start_ns = RTS(); m->end_ns = m->start_ns + (uint64_t)RVZ(); m->correlation_id = RCORR();
		m->bytes = RV(); m->device_id = (uint32_t)R(); m->context_id = (uint32_t)R(); m->stream_id = (uint32_t)R();
		m->copy_kind = (uint32_t)R(); m->src_kind = (uint32_t)R(); m->dst_kind = (uint32_t)R();
		m->flags = (uint32_t)R(); m->src_device = (uint32_t)R(); m->dst_device = (uint32_t)R();
		m->graph_node_id = R();
		break;
	}
	case GP_REC_MEMSET: {
		gp_rec_memset *m = &r->u.memset;
		m->start_ns = RTS(); m->end_ns = m->start_ns + (uint64_t)RVZ(); m->correlation_id = RCORR();
		m->bytes = RV(); m->device_id = (uint32_t)R(); m->context_id = (uint32_t)R(); m->stream_id = (uint32_t)R();
		m->value = (uint32_t)R(); m->mem_kind = (uint32_t)R(); m->flags = (uint32_t)R(); m->graph_node_id = R();
		break;
	}
	case GP_REC_NVTX_RANGE: {
		gp_rec_nvtx_range *n = &r->u.nvtx_range;
		n->start_ns = RTS(); n->end_ns = n->start_ns + (uint64_t)RVZ(); n->range_id = RV();
		n->kind = (uint32_t)R(); n->flags = (uint32_t)R(); n->domain_id = (uint32_t)R();
		n->message_id = (uint32_t)RV(); n->category = (uint32_t)R(); n->color = (uint32_t)RV();
		n->depth = (uint32_t)R(); n->tid = RTID();
		uint64_t et = R();
		n->end_tid = et ? (uint32_t)(et - 1) : n->tid;
		n->payload = RZ();
		break;
	}
	case GP_REC_NVTX_MARK: {
		gp_rec_nvtx_mark *m = &r->u.nvtx_mark;
		m->ts_ns = RTS(); m->domain_id = (uint32_t)R(); m->message_id = (uint32_t)R();
		m->category = (uint32_t)R(); m->color = (uint32_t)R(); m->tid = RTID();
		break;
	}
	case GP_REC_SYNC: {
		gp_rec_sync *s = &r->u.sync;
		s->start_ns = RTS(); s->end_ns = s->start_ns + (uint64_t)RVZ(); s->correlation_id = RCORR();
		s->type = (uint32_t)R(); s->context_id = (uint32_t)R(); s->stream_id = (uint32_t)R();
		s->event_id = (uint32_t)R();
		break;
	}
	case GP_REC_MEMORY: {
		gp_rec_memory *m = &r->u.memory;
		m->ts_ns = RTS(); m->correlation_id = RCORR(); m->address = RV(); m->bytes = RV();
		m->device_id = (uint32_t)R(); m->context_id = (uint32_t)R(); m->stream_id = (uint32_t)R();
		m->op = (uint32_t)R(); m->mem_kind = (uint32_t)R();
		break;
	}
	case GP_REC_DROPPED:
		r->u.dropped.ts_ns = RTS(); r->u.dropped.count = R();
		r->u.dropped.where = (uint32_t)R(); r->u.dropped.source_id = (uint32_t)R();
		break;
	case GP_REC_CLOCK:
		r->u.clock.trace_ns = RTS(); r->u.clock.realtime_ns = R(); r->u.clock.gpu_ns = R();
		break;
	case GP_REC_COUNTER: {
		gp_rec_counter *c = &r->u.counter;
		c->ts_ns = RTS(); c->name_id = (uint32_t)R(); c->device_id = (uint32_t)R(); c->kind = (uint32_t)R();
		uint64_t v = R();
		if (c->kind == GP_COUNTER_INT) v = (uint64_t)gp_unzz(v);
		else if (c->kind == GP_COUNTER_DOUBLE) v = __builtin_bswap64(v);
		memcpy(&c->value, &v, 8);
		break;
	}
	case GP_REC_MODULE:
		r->u.module.ts_ns = RTS(); r->u.module.base = R(); r->u.module.size = R();
		r->u.module.file_offset = R(); r->u.module.path_id = (uint32_t)R();
		break;
	case GP_REC_STACK: {
		gp_rec_stack *s = &r->u.stack;
		s->stack_id = (uint32_t)R();
		uint64_t n = R();
		if (n > GP_STACK_MAX_FRAMES) n = GP_STACK_MAX_FRAMES; /* extra frames: ignored trailing data */
		uint64_t prev = 0;
		for (uint64_t i = 0; i < n; i++) { prev += (uint64_t)RZ(); d->frames[i] = prev; }
		s->nframes = (uint32_t)n; s->frames = d->frames;
		break;
	}
	case GP_REC_WINDOW:
		r->u.window.start_ns = RTS(); r->u.window.end_ns = r->u.window.start_ns + (uint64_t)RVZ();
		r->u.window.device_id = (uint32_t)R();
		break;
	case GP_REC_GRAPH_NODE: {
		gp_rec_graph_node *g = &r->u.graph_node;
		g->ts_ns = RTS(); g->graph_id = R(); g->node_id = R(); g->origin_node_id = R();
		g->node_type = (uint32_t)R(); g->tid = RTID();
		break;
	}
	case GP_REC_ALLOC_FAIL: {
		gp_rec_alloc_fail *f = &r->u.alloc_fail;
		f->ts_ns = RTS(); f->correlation_id = RCORR(); f->bytes = R(); f->total_bytes = R(); f->free_bytes = R();
		f->device_id = (uint32_t)(R() - 1); f->domain = (uint32_t)R(); f->cbid = (uint32_t)R();
		f->status = (int32_t)RZ(); f->tid = RTID();
		break;
	}
	}
	/* clang-format on */
	if (fast && (bad || q > pe)) return 0;
	if (bad) {
		d->why = "malformed varint in record";
		return GP_ERR_CORRUPT;
	}
	return 1;
}

/* ---- format 2.0: instances of templates (the encoder's comment above
 * gives the layout).  The layout of each tag, from a table: the index mask
 * (1 or 2 bytes), the instance's length in A, where the duration and the
 * third value start and the values end in B, and the shifts that
 * sign-extend each value. */
struct inst_lay {
	uint32_t imask;
	uint8_t alen, b1, b2, blen, s0, s1, s2, pad;
	uint32_t pad2; /* 16 bytes: a tag becomes an offset by a shift */
};
#define IW(c) ((c) == 0 ? 1 : (c) == 1 ? 2 \
		      : (c) == 2       ? 3 \
				       : 8)
#define IC(t, k) (((t) >> (2 * (k))) & 3)
#define IL(t) \
	{ \
		((t)&0x40) ? 0xffffu : 0xffu, 2 + (((t) >> 6) & 1), IW(IC(t, 0)), IW(IC(t, 0)) + IW(IC(t, 1)), \
			IW(IC(t, 0)) + IW(IC(t, 1)) + IW(IC(t, 2)), 64 - 8 * IW(IC(t, 0)), 64 - 8 * IW(IC(t, 1)), \
			64 - 8 * IW(IC(t, 2)), 0, 0 \
	}
#define IL4(t) IL(t), IL(t + 1), IL(t + 2), IL(t + 3)
#define IL16(t) IL4(t), IL4(t + 4), IL4(t + 8), IL4(t + 12)
static const struct inst_lay inst_lay[128] = { IL16(0), IL16(16), IL16(32), IL16(48),
					       IL16(64), IL16(80), IL16(96), IL16(112) };

/* A template: the record, padded to 128 bytes (an index becomes an
 * address by a shift). */
struct gp_dec_tmpl {
	gp_record r;
	uint8_t pad[128 - sizeof(gp_record)];
};

/* the hot fields of every template type sit where the API record has them */
#define SAME_HOT(m) \
	_Static_assert(offsetof(union gp_rec_body, m.start_ns) == offsetof(union gp_rec_body, api.start_ns) && \
			       offsetof(union gp_rec_body, m.end_ns) == offsetof(union gp_rec_body, api.end_ns), \
		       #m " start/end")
SAME_HOT(kernel);
SAME_HOT(memcpy);
SAME_HOT(memset);
SAME_HOT(sync);
SAME_HOT(nvtx_range);
_Static_assert(offsetof(union gp_rec_body, kernel.correlation_id) == offsetof(union gp_rec_body, api.correlation_id) &&
		       offsetof(union gp_rec_body, memcpy.correlation_id) == offsetof(union gp_rec_body, api.correlation_id) &&
		       offsetof(union gp_rec_body, memset.correlation_id) == offsetof(union gp_rec_body, api.correlation_id) &&
		       offsetof(union gp_rec_body, sync.correlation_id) == offsetof(union gp_rec_body, api.correlation_id) &&
		       offsetof(union gp_rec_body, nvtx_range.range_id) == offsetof(union gp_rec_body, api.correlation_id),
	       "third hot field");

static inline int64_t sext(uint64_t v, unsigned sh)
{
	return (int64_t)(v << sh) >> sh;
}

/* The instance at *pp (its section-B values at *pb): 1, or GP_ERR_CORRUPT
 * (d->why) when it runs past its section or names a template not defined
 * (yet).  fast: *pp is before d->fast_lim and *pb before d->fast_lim_b
 * (loads of 8 bytes; a bad instance is left to the careful path, which
 * gives the error: returns 0). */
static inline __attribute__((always_inline)) int dec_inst(struct gp_dec *d, gp_record *r, const uint8_t **pp,
							  const uint8_t **pb, uint64_t *pts, uint64_t *pcorr,
							  const int fast)
{
	const uint8_t *p = *pp, *b = *pb;
	const struct inst_lay *L = &inst_lay[p[0] & 0x7f];
	uint32_t idx;
	uint64_t x, y, z;
	if (fast) {
		idx = (uint32_t)gp_get16(p + 1) & L->imask;
		x = gp_get64(b);
		y = gp_get64(b + L->b1);
		z = gp_get64(b + L->b2);
		if (GP_UNLIKELY(L->alen > d->end - p || L->blen > d->bend - b || idx >= d->ntmpl)) return 0;
	} else {
		if (L->alen > d->end - p || L->blen > d->bend - b) {
			d->why = "template instance beyond its section";
			return GP_ERR_CORRUPT;
		}
		idx = p[1] | (L->imask > 0xff ? (uint32_t)p[2] << 8 : 0);
		if (idx >= d->ntmpl) {
			d->why = "instance of a template not defined before it";
			return GP_ERR_CORRUPT;
		}
		x = y = z = 0;
		memcpy(&x, b, L->b1);
		memcpy(&y, b + L->b1, L->b2 - L->b1);
		memcpy(&z, b + L->b2, L->blen - L->b2);
	}
	*r = d->tmpl[idx].r;
	uint64_t ts = *pts + (uint64_t)sext(x, L->s0);
	*pts = ts;
	r->u.api.start_ns = ts;
	r->u.api.end_ns = ts + (uint64_t)sext(y, L->s1);
	if (GP_UNLIKELY(r->type == GP_REC_NVTX_RANGE)) {
		d->prev_range += (uint64_t)sext(z, L->s2);
		r->u.api.correlation_id = d->prev_range;
	} else {
		*pcorr += (uint64_t)sext(z, L->s2);
		r->u.api.correlation_id = *pcorr;
	}
	*pp = p + L->alen;
	*pb = b + L->blen;
	return 1;
}

/* A plain record of a template type defines the chunk's next template
 * (while there is room: the encoder counts the same way).  0, or
 * GP_ERR_NOMEM. */
static __attribute__((noinline)) int tmpl_add(struct gp_dec *d, const gp_record *r)
{
	if (d->ntmpl >= GP_TMPL_MAX) return 0;
	if (d->ntmpl == d->tcap) {
		uint32_t nc = d->tcap ? 2 * d->tcap : 256;
		struct gp_dec_tmpl *n = realloc(d->tmpl, nc * sizeof(*n));
		if (!n) {
			d->why = "out of memory for the chunk's templates";
			return GP_ERR_NOMEM;
		}
		d->tmpl = n;
		d->tcap = nc;
	}
	d->tmpl[d->ntmpl++].r = *r;
	return 0;
}

/* After a record of format 2.0 decoded with result rc: a record of a
 * template type defines the next template (and an NVTX range sets
 * prev_range).  Returns rc, or GP_ERR_NOMEM. */
static inline __attribute__((always_inline)) int tmpl_note(struct gp_dec *d, const gp_record *r, int rc)
{
	if (rc != 1 || !((GP_TMPL_TYPES >> r->type) & 1)) return rc;
	if (r->type == GP_REC_NVTX_RANGE) d->prev_range = r->u.nvtx_range.range_id;
	int e = tmpl_add(d, r);
	return e ? e : rc;
}

/* Types the fast decoder handles: fixed field lists, no inner lengths. */
#define FAST_TYPES ((1u << GP_REC_API) | (1u << GP_REC_KERNEL) | (1u << GP_REC_MEMCPY) | \
		    (1u << GP_REC_MEMSET) | (1u << GP_REC_NVTX_RANGE) | (1u << GP_REC_NVTX_MARK) | \
		    (1u << GP_REC_SYNC) | (1u << GP_REC_MEMORY) | (1u << GP_REC_DROPPED) | (1u << GP_REC_CLOCK) | \
		    (1u << GP_REC_WINDOW) | (1u << GP_REC_SOURCE) | (1u << GP_REC_THREAD) | \
		    (1u << GP_REC_GRAPH_NODE))

static __attribute__((noinline)) int dec_careful(struct gp_dec *d, gp_record *r, uint32_t type,
						 const uint8_t *q, const uint8_t *pe)
{
	return dec_body(d, r, type, q, pe, 0, 0, &d->prev_ts, &d->prev_corr);
}

/* The delta state (pts, pcorr) and the position (*pp) are the caller's
 * locals, kept in registers across a batch: through d they made a memory
 * round trip per record, and the 16-byte reload of two 8-byte stores
 * defeated store forwarding. */
static inline __attribute__((always_inline)) int dec_one(struct gp_dec *d, gp_record *r, const uint8_t **pp,
							 const uint8_t **pb, uint64_t *pts, uint64_t *pcorr, const int px,
							 const int v2)
{
	const uint8_t *end = d->end;
	for (;;) {
		const uint8_t *p = *pp;
		if (p >= end) return 0;
		uint32_t type = p[0];
		if (v2 && type >= 0x80) {
			if (GP_LIKELY(p < d->fast_lim && *pb < d->fast_lim_b)) {
				int rc = dec_inst(d, r, pp, pb, pts, pcorr, 1);
				if (GP_LIKELY(rc)) return rc;
			}
			return dec_inst(d, r, pp, pb, pts, pcorr, 0);
		}
		const uint8_t *q;
		uint64_t len;
		if (GP_LIKELY(end - p > 2 && p[1] < 0x80)) {
			len = p[1];
			q = p + 2;
		} else {
			q = p + 1;
			if (q >= end) {
				*pp = q;
				d->why = "record cut after its type byte";
				return GP_ERR_CORRUPT;
			}
			int bad = 0;
			len = rd(&q, end, &bad);
			if (bad) {
				*pp = q;
				d->why = "malformed record length";
				return GP_ERR_CORRUPT;
			}
		}
		if (GP_UNLIKELY(len > (uint64_t)(end - q))) {
			*pp = q;
			d->why = "record length beyond end of chunk";
			return GP_ERR_CORRUPT;
		}
		const uint8_t *pe = q + len;
		*pp = pe;
		if (GP_UNLIKELY(type == 0 || type >= GP_REC_TYPE_MAX)) continue; /* unknown type: skipped by length */
		r->type = type;
		r->source_id = d->source;
		int rc;
		if (GP_LIKELY(((FAST_TYPES >> type) & 1) && q < d->fast_lim)) {
			uint64_t t0 = *pts, c0 = *pcorr;
			rc = dec_body(d, r, type, q, pe, 1, px, pts, pcorr);
			if (GP_LIKELY(rc)) return v2 ? tmpl_note(d, r, rc) : rc;
			*pts = t0;
			*pcorr = c0; /* left the record: redo carefully */
		}
		d->prev_ts = *pts;
		d->prev_corr = *pcorr;
		rc = dec_careful(d, r, type, q, pe);
		*pts = d->prev_ts;
		*pcorr = d->prev_corr;
		return v2 ? tmpl_note(d, r, rc) : rc;
	}
}

int gp_dec_next(struct gp_dec *d, gp_record *r)
{
	if (d->err) return d->err;
	const uint8_t *p = d->p, *b = d->b;
	uint64_t ts = d->prev_ts, corr = d->prev_corr;
	int v2 = d->major >= 2, rc;
	if (d->pext) rc = v2 ? dec_one(d, r, &p, &b, &ts, &corr, 1, 1) : dec_one(d, r, &p, &b, &ts, &corr, 1, 0);
	else rc = v2 ? dec_one(d, r, &p, &b, &ts, &corr, 0, 1) : dec_one(d, r, &p, &b, &ts, &corr, 0, 0);
	d->p = p;
	d->b = b;
	d->prev_ts = ts;
	d->prev_corr = corr;
	if (rc < 0) d->err = rc;
	return rc;
}

/* Records after which a batch needs a look: strings and sources (*meta),
 * a stack (its frames live in d->frames: the batch ends). */
#define BATCH_LOOK ((1u << GP_REC_STRING) | (1u << GP_REC_SOURCE) | (1u << GP_REC_STACK))

/* A template's bytes after its three hot fields into r: 80 bytes, in 32-,
 * 32- and 16-byte moves where the function inlining this one has AVX2
 * (dec_batch2_pext), else in 16-byte ones (a vector type, not memcpy, which
 * GCC splits into 16-byte moves either way). */
typedef char v32b __attribute__((vector_size(32), aligned(1), may_alias));
typedef char v16b __attribute__((vector_size(16), aligned(1), may_alias));
enum {
	HOT_END = offsetof(gp_record, u.api.correlation_id) + 8
};
_Static_assert(sizeof(gp_record) - HOT_END == 80, "copy_tail copies 80 bytes");
static inline __attribute__((always_inline)) void copy_tail(gp_record *r, const gp_record *t)
{
	char *d = (char *)r + HOT_END;
	const char *s = (const char *)t + HOT_END;
	*(v32b *)d = *(const v32b *)s;
	*(v32b *)(d + 32) = *(const v32b *)(s + 32);
	*(v16b *)(d + 64) = *(const v16b *)(s + 64);
}

/* Up to max records into out[] (gp_dec_batch).  Format 2.0's instances
 * take a fast path in the loop itself: the decoder's limits and template
 * table in locals (a record stored through `out` might alias *d as far as
 * the compiler can tell, so it would reload them for every record), the
 * template copied but for the three hot fields, which are written next. */
static inline __attribute__((always_inline)) int dec_batch(struct gp_dec *d, gp_record *out, int max, int *meta,
							   const int px, const int v2)
{
	int m = 0;
	const uint8_t *p = d->p, *b = d->b;
	uint64_t ts = d->prev_ts, corr = d->prev_corr;
	const uint8_t *const end = d->end, *const bend = d->bend, *const blim = d->fast_lim_b;
	const uint8_t *const alim = d->fast_lim < end ? d->fast_lim : end;
	const struct gp_dec_tmpl *tmpl = d->tmpl;
	uint32_t ntmpl = d->ntmpl;
	gp_record *r = out, *const rend = out + max;
	while (r < rend) {
		if (v2 && GP_LIKELY(p < alim && *p >= 0x80 && b < blim)) {
			const struct inst_lay *L = &inst_lay[*p & 0x7f];
			uint32_t idx = (uint32_t)gp_get16(p + 1) & L->imask;
			const uint8_t *np = p + L->alen, *nb = b + L->blen;
			if (GP_LIKELY((np <= end) & (nb <= bend) & (idx < ntmpl))) {
				const gp_record *t = &tmpl[idx].r;
				enum {
					HOT_END = offsetof(gp_record, u.api.correlation_id) + 8
				};
				memcpy(r, t, offsetof(gp_record, u));
				copy_tail(r, t);
				ts += (uint64_t)sext(gp_get64(b), L->s0);
				r->u.api.start_ns = ts;
				r->u.api.end_ns = ts + (uint64_t)sext(gp_get64(b + L->b1), L->s1);
				uint64_t dz = (uint64_t)sext(gp_get64(b + L->b2), L->s2);
				if (GP_UNLIKELY(t->type == GP_REC_NVTX_RANGE)) {
					d->prev_range += dz;
					r->u.api.correlation_id = d->prev_range;
				} else {
					corr += dz;
					r->u.api.correlation_id = corr;
				}
				p = np;
				b = nb;
				r++;
				continue;
			}
		}
		int rc = dec_one(d, r, &p, &b, &ts, &corr, px, v2);
		if (rc <= 0) {
			if (rc < 0) d->err = rc;
			break;
		}
		tmpl = d->tmpl; /* a plain record may have defined a template */
		ntmpl = d->ntmpl;
		uint32_t t = (r++)->type;
		if (GP_UNLIKELY((BATCH_LOOK >> t) & 1)) {
			if (t == GP_REC_STACK) break;
			m = 1;
		}
	}
	d->p = p;
	d->b = b;
	d->prev_ts = ts;
	d->prev_corr = corr;
	*meta = m;
	return (int)(r - out);
}

/* Where PEXT is fast the CPU has BMI2 and AVX2 (gp_dec_fast_pext): the 2.0
 * loop may use BMI2's shifts by a register (the sign extensions) and copy a
 * template with 32-byte moves. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("bmi2,avx2")))
#endif
static __attribute__((noinline)) int
dec_batch2_pext(struct gp_dec *d, gp_record *out, int max, int *meta)
{
	return dec_batch(d, out, max, meta, 1, 1);
}

/* The other three copies of the loop, each a function of its own (in one
 * function they made each other's register allocation worse). */
static __attribute__((noinline)) int dec_batch2_plain(struct gp_dec *d, gp_record *out, int max, int *meta)
{
	return dec_batch(d, out, max, meta, 0, 1);
}

static __attribute__((noinline)) int dec_batch1_pext(struct gp_dec *d, gp_record *out, int max, int *meta)
{
	return dec_batch(d, out, max, meta, 1, 0);
}

static __attribute__((noinline)) int dec_batch1_plain(struct gp_dec *d, gp_record *out, int max, int *meta)
{
	return dec_batch(d, out, max, meta, 0, 0);
}

int gp_dec_batch(struct gp_dec *d, gp_record *out, int max, int *meta)
{
	*meta = 0;
	if (d->err) return 0;
	/* four copies of the loop, so that the choice of varint code and of
	 * format is made once per batch, not per field */
	if (d->major >= 2) return d->pext ? dec_batch2_pext(d, out, max, meta) : dec_batch2_plain(d, out, max, meta);
	return d->pext ? dec_batch1_pext(d, out, max, meta) : dec_batch1_plain(d, out, max, meta);
}
