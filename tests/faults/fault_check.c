/* fault_check.c — facts about one trace, one per line, for the fault tests
 * (python scripts compare them with what the workload printed):
 *   open ok | open error CAUSE          (exit 2 when the reader refuses it)
 *   integrity truncated=T footer=F frames_ok=N corrupt=N
 *   source ID KIND TID
 *   thread TID NAME
 *   api NAME TID COUNT MAX_END_NS       (per API name and thread)
 *   type TYPENAME COUNT                 (every record type seen)
 *   kernel NAME COUNT
 *   dropped WHERE SOURCE COUNT          (summed per where/source)
 * Names are printed with bytes < 0x20, 0x7f, backslash and space as \xNN so
 * a line always splits on spaces. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_trace.h"

#define MAXK 4096
struct key { uint32_t a, b, c; uint64_t n, max; };
static struct key api[MAXK], drops[MAXK], kern[MAXK];
static int napi, ndrops, nkern;
static uint64_t types[GP_REC_TYPE_MAX + 1];

static struct key *find(struct key *t, int *n, uint32_t a, uint32_t b, uint32_t c)
{
	for (int i = 0; i < *n; i++)
		if (t[i].a == a && t[i].b == b && t[i].c == c)
			return &t[i];
	if (*n >= MAXK)
		return NULL;
	struct key *k = &t[(*n)++];
	memset(k, 0, sizeof *k);
	k->a = a;
	k->b = b;
	k->c = c;
	return k;
}

static void put_name(const char *s)
{
	if (!s || !*s) {
		fputs("-", stdout);
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x21 || *p == 0x7f || *p == '\\')
			printf("\\x%02x", *p);
		else
			putchar(*p);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fault_check TRACE\n");
		return 2;
	}
	gp_reader *rd = NULL;
	int rc = gp_reader_open(argv[1], &rd);
	if (rc < 0) {
		printf("open error %s: %s\n", gp_strerror(rc), gp_reader_errmsg(NULL));
		return 2;
	}
	printf("open ok\n");
	const gp_record *r;
	while ((rc = gp_reader_next(rd, &r)) == 1) {
		if (r->type <= GP_REC_TYPE_MAX)
			types[r->type]++;
		if (r->type == GP_REC_API) {
			struct key *k = find(api, &napi, r->u.api.name_id, r->u.api.tid, 0);
			if (k) {
				k->n++;
				if (r->u.api.end_ns > k->max)
					k->max = r->u.api.end_ns;
			}
		} else if (r->type == GP_REC_KERNEL) {
			struct key *k = find(kern, &nkern, r->u.kernel.name_id, 0, 0);
			if (k)
				k->n++;
		} else if (r->type == GP_REC_DROPPED) {
			struct key *k = find(drops, &ndrops, r->u.dropped.where, r->u.dropped.source_id, 0);
			if (k)
				k->n += r->u.dropped.count;
		} else if (r->type == GP_REC_THREAD) {
			printf("thread %u ", r->u.thread.tid);
			put_name(gp_reader_string(rd, r->u.thread.name_id));
			putchar('\n');
		}
	}
	if (rc < 0) {
		printf("read error %s: %s\n", gp_strerror(rc), gp_reader_errmsg(rd));
		gp_reader_close(rd);
		return 2;
	}
	gp_reader_load_meta(rd);
	struct gp_integrity in;
	gp_reader_integrity(rd, &in);
	printf("integrity truncated=%d footer=%d frames_ok=%" PRIu64 " corrupt=%" PRIu64 "\n", in.truncated,
	       in.has_footer, in.frames_ok, in.frames_corrupt);
	for (uint32_t s = 0; s < 100000; s++) {
		const gp_rec_source *src = gp_reader_source(rd, s);
		if (src)
			printf("source %u %u %u\n", s, src->kind, src->tid);
	}
	for (int i = 0; i < napi; i++) {
		fputs("api ", stdout);
		put_name(gp_reader_string(rd, api[i].a));
		printf(" %u %" PRIu64 " %" PRIu64 "\n", api[i].b, api[i].n, api[i].max);
	}
	for (uint32_t t = 0; t <= GP_REC_TYPE_MAX; t++)
		if (types[t])
			printf("type %s %" PRIu64 "\n", gp_rec_type_name(t), types[t]);
	for (int i = 0; i < nkern; i++) {
		fputs("kernel ", stdout);
		put_name(gp_reader_string(rd, kern[i].a));
		printf(" %" PRIu64 "\n", kern[i].n);
	}
	for (int i = 0; i < ndrops; i++)
		printf("dropped %u %u %" PRIu64 "\n", drops[i].a, drops[i].b, drops[i].n);
	gp_reader_close(rd);
	return 0;
}
