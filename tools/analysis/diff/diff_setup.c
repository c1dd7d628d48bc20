/* diff_setup.c — see diff_setup.h. */
#include "analysis/diff/diff_setup.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff/diff.h"
#include "common/util.h"

/* what an item is; the order in which the headline names them */
enum item_kind { IK_PROG, IK_OPT, IK_SET, IK_PROCS, IK_THREADS };
static const char *const kind_names[] = { "command", "command line", "settings", "processes", "threads" };

struct kv { int kind; char *key, *val; };
struct kvs { struct kv *v; size_t n, cap; };

static void kv_add(struct kvs *l, int kind, const char *key, const char *val)
{
	/* an option given twice: its values in order, one item */
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == kind && !strcmp(l->v[i].key, key)) {
			size_t n = strlen(l->v[i].val) + strlen(val) + 2;
			char *s = xmalloc(n);
			snprintf(s, n, "%s%s%s", l->v[i].val, *l->v[i].val && *val ? " " : "", val);
			free(l->v[i].val);
			l->v[i].val = s;
			return;
		}
	struct kv x = { kind, xstrdup(key), xstrdup(val) };
	VEC_PUSH(l->v, l->n, l->cap, x);
}

static int is_option(const char *tok)
{
	/* "-x", "--name"; not "-", "--" or a negative number */
	return tok[0] == '-' && tok[1] && !(tok[1] == '-' && !tok[2]) && !isdigit((unsigned char)tok[1]) &&
	       tok[1] != '.';
}

/* The command line, split at spaces (the trace keeps it space-joined): the
 * words before the first option are the command (one item); each option
 * ("--name" or "-x", "--name=value" split at "=") with the words up to the
 * next option is an item whose value is those words. */
static void split_cmd(struct kvs *l, const char *cmd)
{
	char *s = xstrdup(cmd), *save = NULL, *opt = NULL;
	char prog[1024] = "", val[1024] = "";
	for (char *tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (is_option(tok)) {
			if (opt) kv_add(l, IK_OPT, opt, val);
			char *eq = strchr(tok, '=');
			if (eq && tok[1] == '-') *eq = 0;
			opt = tok;
			snprintf(val, sizeof(val), "%s", eq && tok[1] == '-' ? eq + 1 : "");
		} else {
			char *into = opt ? val : prog;
			size_t l2 = strlen(into);
			snprintf(into + l2, sizeof(val) - l2, "%s%s", l2 ? " " : "", tok);
		}
	}
	if (opt) kv_add(l, IK_OPT, opt, val);
	if (*prog) kv_add(l, IK_PROG, "", prog);
	free(s);
}

/* "activity=kernel,memcpy api=all ...": one item per word, keyed by what is
 * before its "=" */
static void split_settings(struct kvs *l, const char *set)
{
	char *s = xstrdup(set), *save = NULL;
	for (char *tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (eq) *eq = 0;
		kv_add(l, IK_SET, tok, eq ? eq + 1 : "");
	}
	free(s);
}

static void run_items(const struct diff_run *r, struct kvs *l)
{
	char n[32];
	if (r->cmd) split_cmd(l, r->cmd);
	if (r->settings) split_settings(l, r->settings);
	snprintf(n, sizeof(n), "%zu", r->nprocs);
	kv_add(l, IK_PROCS, "", n);
	snprintf(n, sizeof(n), "%zu", r->nthreads);
	kv_add(l, IK_THREADS, "", n);
}

static void kvs_free(struct kvs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].val);
	}
	free(l->v);
}

static const char *lookup(const struct kvs *l, int kind, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == kind && !strcmp(l->v[i].key, key)) return l->v[i].val;
	return NULL;
}

/* The one value of an item over the runs l[0..n) (NULL: none has it);
 * *varies when the runs disagree. */
static const char *side_value(const struct kvs *l, size_t n, int kind, const char *key, int *varies)
{
	const char *v = lookup(&l[0], kind, key);
	for (size_t i = 1; i < n; i++) {
		const char *w = lookup(&l[i], kind, key);
		if (!v != !w || (v && strcmp(v, w))) *varies = 1;
	}
	return v;
}

static void append(char *buf, size_t n, size_t *items, const char *fmt, const char *a, const char *b,
		   const char *c)
{
	size_t l = strlen(buf);
	if (l + 4 >= n) return;
	if (*items) snprintf(buf + l, n - l, "; ");
	l = strlen(buf);
	snprintf(buf + l, n - l, fmt, a, b, c);
	(*items)++;
}

/* "--amp bf16" / "--compile" */
static void opt_text(char *buf, size_t n, const char *key, const char *val)
{
	snprintf(buf, n, "%s%s%s", key, *val ? " " : "", val);
}

static void setup_row(struct report *t, int32_t rank, const char *what, const char *a, const char *b,
		      const char *differs)
{
	struct cell *c = report_row(t);
	if (rank >= 0) cell_num(&c[0], rank);
	cell_str(&c[1], what);
	cell_str(&c[2], a ? a : "(none)");
	cell_str(&c[3], b ? b : "(none)");
	cell_str(&c[4], differs);
}

/* the items of the runs: differs -> the headline and the table; varies -> the table */
static void compare_items(const struct diff_pair *d, char *buf, size_t n, size_t *items, struct report *t)
{
	const struct diff_side *side[2] = { &d->a, &d->b };
	struct kvs *l[2], keys = { 0 };
	/* every item once in keys: those of A's first run, then the others of every run */
	for (int s = 0; s < 2; s++) {
		l[s] = xcalloc(side[s]->nrun, sizeof(*l[s]));
		for (size_t i = 0; i < side[s]->nrun; i++) {
			run_items(&side[s]->run[i], &l[s][i]);
			for (size_t k = 0; k < l[s][i].n; k++) {
				const struct kv *x = &l[s][i].v[k];
				if (!lookup(&keys, x->kind, x->key)) kv_add(&keys, x->kind, x->key, "");
			}
		}
	}
	size_t more = 0, named = 0;
	for (int kind = IK_PROG; kind <= IK_THREADS; kind++)
		for (size_t k = 0; k < keys.n; k++) {
			if (keys.v[k].kind != kind) continue;
			const char *key = keys.v[k].key;
			int va = 0, vb = 0;
			const char *a = side_value(l[0], side[0]->nrun, kind, key, &va);
			const char *b = side_value(l[1], side[1]->nrun, kind, key, &vb);
			char what[256], ta[1100], tb[1100];
			snprintf(what, sizeof(what), "%s%s%s", kind_names[kind], *key ? " " : "", key);
			if (va || vb) {
				setup_row(t, d->rank, what, va ? "varies" : a, vb ? "varies" : b, "varies");
				continue;
			}
			if (a == b || (a && b && !strcmp(a, b))) continue;
			setup_row(t, d->rank, what, a, b, "yes");
			/* the headline: at most 4 items, then how many more */
			if (named >= 4) { more++; continue; }
			named++;
			if (kind == IK_OPT) {
				opt_text(ta, sizeof(ta), key, a ? a : "");
				opt_text(tb, sizeof(tb), key, b ? b : "");
				if (!a) append(buf, n, items, "%s added", tb, "", "");
				else if (!b) append(buf, n, items, "%s removed", ta, "", "");
				else append(buf, n, items, "%s -> %s", ta, b, "");
			} else if (kind == IK_SET) {
				if (!a) append(buf, n, items, "setting %s=%s added", key, b, "");
				else if (!b) append(buf, n, items, "setting %s=%s removed", key, a, "");
				else append(buf, n, items, "setting %s=%s -> %s", key, a, b);
			} else {
				append(buf, n, items, "%s %s -> %s", kind_names[kind], a ? a : "(none)", b ? b : "(none)");
			}
		}
	if (more) {
		char m[32];
		snprintf(m, sizeof(m), "%zu", more);
		append(buf, n, items, "%s more (diff_setup)", m, "", "");
	}
	kvs_free(&keys);
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < side[s]->nrun; i++) kvs_free(&l[s][i]);
		free(l[s]);
	}
}

void diff_short_name(const char *name, char *buf, size_t n)
{
	const int max = 60;
	if (!strncmp(name, "void ", 5)) name += 5;
	size_t len = name_params_at(name);
	if (len > (size_t)max) snprintf(buf, n, "%.*s...", max - 3, name);
	else snprintf(buf, n, "%.*s", (int)len, name);
}

void side_list_fill(struct side_list *l, const struct diff_side *s, int k)
{
	memset(l, 0, sizeof(*l));
	strmap_init(&l->idx);
	for (size_t r = 0; r < s->nrun; r++) {
		if (!s->run[r].prof) continue;
		const struct sp_list *in = &s->run[r].prof->list[k];
		for (size_t i = 0; i < in->n; i++) {
			int is_new;
			size_t *slot = strmap_get(&l->idx, in->v[i].name, &is_new);
			if (is_new) {
				struct sp_entry e = { in->v[i].name, 0, 0, 0, 0, 0 };
				*slot = l->n;
				VEC_PUSH(l->v, l->n, l->cap, e);
				vec_reserve((void **)&l->runs, &l->crun, l->n, sizeof(*l->runs));
				l->runs[*slot] = 0;
			}
			struct sp_entry *e = &l->v[*slot];
			e->count += in->v[i].count;
			e->ns += in->v[i].ns;
			e->bytes += in->v[i].bytes;
			e->kernel_ns += in->v[i].kernel_ns;
			e->flags |= in->v[i].flags;
			l->runs[*slot]++;
			l->ns += in->v[i].ns;
		}
	}
}

void side_list_free(struct side_list *l)
{
	strmap_free(&l->idx);
	free(l->v);
	free(l->runs);
}

/* The kernels in every run of `own` and in no run of `other`: their share of
 * own's kernel time, the largest of them. */
static void own_kernels(struct side_list *own, size_t own_runs, struct side_list *other, size_t *count, double *pct,
			const struct sp_entry **largest)
{
	uint64_t ns = 0;
	*count = 0;
	*largest = NULL;
	for (size_t i = 0; i < own->n; i++) {
		const struct sp_entry *x = &own->v[i];
		if (own->runs[i] != own_runs || strmap_find(&other->idx, x->name)) continue;
		(*count)++;
		ns += x->ns;
		if (!*largest || x->ns > (*largest)->ns || (x->ns == (*largest)->ns && strcmp(x->name, (*largest)->name) < 0))
			*largest = x;
	}
	*pct = own->ns ? 100.0 * (double)ns / (double)own->ns : 0;
}

static void compare_kernels(const struct diff_pair *d, char *buf, size_t n, size_t *items, struct report *t)
{
	const struct diff_side *side[2] = { &d->a, &d->b };
	struct side_list k[2];
	size_t c[2];
	double pct[2];
	const struct sp_entry *big[2];
	for (int s = 0; s < 2; s++) side_list_fill(&k[s], side[s], SP_KERNEL);
	for (int s = 0; s < 2; s++) own_kernels(&k[s], side[s]->nrun, &k[!s], &c[s], &pct[s], &big[s]);
	char part[2][512] = { "", "" }, row[2][1024] = { "", "" };
	for (int s = 0; s < 2; s++) {
		size_t steps = diff_side_steps(side[s]);
		if (!c[s]) continue;
		char dur[48], sn[96];
		fmt_dur(dur, sizeof(dur), steps ? big[s]->ns / steps : 0);
		snprintf(row[s], sizeof(row[s]), "kernels: %zu, %.1f %% of its kernel time; largest %s (%s/step)", c[s],
			 pct[s], big[s]->name, dur);
		/* named when either side's own kernels are a real part of its GPU time */
		if (pct[0] < DIFF_KSET_PCT && pct[1] < DIFF_KSET_PCT) continue;
		diff_short_name(big[s]->name, sn, sizeof(sn));
		snprintf(part[s], sizeof(part[s]), "%.0f %% of %s's kernel time (largest %s)", pct[s], s ? "B" : "A", sn);
	}
	if (*row[0]) setup_row(t, d->rank, "kernels only in A", row[0], NULL, "yes");
	if (*row[1]) setup_row(t, d->rank, "kernels only in B", NULL, row[1], "yes");
	if (*part[0] && *part[1]) append(buf, n, items, "kernels only in A: %s, only in B: %s", part[0], part[1], "");
	else if (*part[0]) append(buf, n, items, "kernels only in A: %s", part[0], "", "");
	else if (*part[1]) append(buf, n, items, "kernels only in B: %s", part[1], "", "");
	for (int s = 0; s < 2; s++) side_list_free(&k[s]);
}

void diff_setup_compare(const struct diff_pair *d, char *buf, size_t n, struct report *t)
{
	size_t items = 0;
	buf[0] = 0;
	compare_items(d, buf, n, &items, t);
	compare_kernels(d, buf, n, &items, t);
}
