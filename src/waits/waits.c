/*
 * waits.c - the wait-state analysis's core (waits.h): pairs messages and completes
 * collectives as their parts are fed, hands each to the pattern table (patterns.h) and sums
 * what the patterns report. Pending parts are items of a pool found through ktab (ktab.h);
 * a part leaves the pool when its partner (or its collective's last member) comes.
 */
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "util/grow.h"
#include "util/msgmatch.h"
#include "waits/ktab.h"
#include "waits/patterns.h"

#define WAITS_PATTERN(name) &name##_pattern,
const struct waits_pattern *const waits_patterns[] = {
#include "waits/patterns.def"
};
#undef WAITS_PATTERN
const int waits_npatterns = (int)(sizeof(waits_patterns) / sizeof(waits_patterns[0]));

/* a part waiting for the rest: one end of a message, or a collective's members so far */
struct pend {
	int kind;                /* 0: a send, 1: a receive, 2: a collective */
	union {
		struct waits_send send;
		struct waits_recv recv;
		struct {
			struct waits_coll *m; /* size of them */
			size_t n;             /* entered so far */
		} coll;
	} u;
};

struct waits {
	struct waits_opts o;
	struct msgmatch_chans chans; /* the message ends waiting, per channel (msgmatch_fifo:
	                                their pool indices) */
	struct ktab colls;           /* (comm, ~0, 0, seq) -> pool index */
	struct ktab seqs;            /* (comm, proc, 1, 0) -> next seq of the process on comm */
	struct pend *pool;
	size_t npool, cap;
	size_t *free_idx;            /* pool slots free for reuse */
	size_t nfree, free_cap;
	struct ktab rowmap;          /* (pattern, func, comm, proc) -> index into rows */
	uint64_t last_key[4];        /* the row found last (a run of instances of one call site
	                                 and process is common), and its index + 1 (0: none) */
	size_t last_row;
	struct waits_row *rows, *sorted;
	size_t nrows, rows_cap;
	int sorted_ok;
	struct waits_instance *worst; /* a min-heap by estimate, at most o.worst */
	struct waits_instance *worst_sorted;
	size_t nworst;
	struct waits_total *tot;     /* per pattern */
	struct slots {               /* per pattern: waits_slot's array */
		char *a;
		size_t n;                /* processes it holds */
	} *slots;
	struct waits_left left;
	int stopped;                 /* the callback's non-zero value, returned from then on */
};

waits *waits_create(const struct waits_opts *o)
{
	waits *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->o = *o;
	w->tot = calloc((size_t)waits_npatterns, sizeof(*w->tot));
	w->slots = calloc((size_t)waits_npatterns, sizeof(*w->slots));
	w->worst = calloc(o->worst ? o->worst : 1, sizeof(*w->worst));
	w->worst_sorted = calloc(o->worst ? o->worst : 1, sizeof(*w->worst_sorted));
	if (!w->tot || !w->slots || !w->worst || !w->worst_sorted) {
		waits_free(w);
		return NULL;
	}
	return w;
}

void waits_free(waits *w)
{
	if (!w)
		return;
	for (int p = 0; w->slots && p < waits_npatterns; p++)
		free(w->slots[p].a);
	free(w->slots);
	for (size_t i = 0; i < w->npool; i++)
		if (w->pool[i].kind == 2)
			free(w->pool[i].u.coll.m);
	msgmatch_chans_free(&w->chans);
	ktab_free(&w->colls);
	ktab_free(&w->seqs);
	ktab_free(&w->rowmap);
	free(w->pool);
	free(w->free_idx);
	free(w->rows);
	free(w->sorted);
	free(w->worst);
	free(w->worst_sorted);
	free(w->tot);
	free(w);
}

void *waits_slot_if(waits *w, int self, int32_t proc, size_t size)
{
	struct slots *s = &w->slots[self];
	return proc >= 0 && (size_t)proc < s->n ? s->a + (size_t)proc * size : NULL;
}

void *waits_slot(waits *w, int self, int32_t proc, size_t size)
{
	struct slots *s = &w->slots[self];
	if (proc < 0)
		return NULL;
	if ((size_t)proc >= s->n) {
		size_t n = s->n ? s->n : 16;
		while (n <= (size_t)proc)
			n *= 2;
		char *a = realloc(s->a, n * size);
		if (!a)
			return NULL;
		memset(a + s->n * size, 0, (n - s->n) * size);
		s->a = a;
		s->n = n;
	}
	return s->a + (size_t)proc * size;
}

/* ---- the interval ---- */

static int unbounded(int64_t hw)
{
	return hw >= WAITS_NO_BOUND;
}

int64_t waits_lo(const struct waits_stamp *s)
{
	return s->t_ns - (unbounded(s->below_ns) ? WAITS_NO_BOUND : s->below_ns);
}

int64_t waits_hi(const struct waits_stamp *s)
{
	return s->t_ns + (unbounded(s->above_ns) ? WAITS_NO_BOUND : s->above_ns);
}

static int64_t clip(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* the strict interval of clip(T - B, 0, L - B) from the three stamps' bounds, ns */
static void interval(const struct waits_stamp *t, const struct waits_stamp *b,
                     const struct waits_stamp *l, int64_t *lo, int64_t *hi)
{
	/* the call's true duration lies in [d_lo, d_hi] */
	int64_t d_lo = unbounded(l->below_ns) || unbounded(b->above_ns) ? 0 :
	               clip(waits_lo(l) - waits_hi(b), 0, WAITS_NO_BOUND);
	int64_t d_hi = unbounded(l->above_ns) || unbounded(b->below_ns) ? WAITS_NO_BOUND :
	               clip(waits_hi(l) - waits_lo(b), 0, WAITS_NO_BOUND);
	*lo = unbounded(t->below_ns) || unbounded(b->above_ns) ? 0 :
	      clip(waits_lo(t) - waits_hi(b), 0, d_lo);
	*hi = unbounded(t->above_ns) || unbounded(b->below_ns) ? d_hi :
	      clip(waits_hi(t) - waits_lo(b), 0, d_hi);
}

struct waits_stamp waits_truth_stamp(const struct waits_stamp *s)
{
	return (struct waits_stamp){.t_ns = s->true_lo_ns, .below_ns = 0,
	                            .above_ns = s->true_hi_ns - s->true_lo_ns,
	                            .has_truth = 1, .true_lo_ns = s->true_lo_ns,
	                            .true_hi_ns = s->true_hi_ns};
}

int waits_interval(const struct waits_stamp *t, const struct waits_call *c,
                   struct waits_instance *in)
{
	const struct waits_stamp *b = &c->enter, *l = &c->leave;
	int64_t d = l->t_ns - b->t_ns;
	in->at_ns = b->t_ns;
	in->est_ns = clip(t->t_ns - b->t_ns, 0, d > 0 ? d : 0);
	interval(t, b, l, &in->lo_ns, &in->hi_ns);
	/* the truth, the same way from the truth's intervals */
	in->has_truth = t->has_truth && b->has_truth && l->has_truth;
	if (in->has_truth) {
		struct waits_stamp tt = waits_truth_stamp(t), bt = waits_truth_stamp(b),
		                   lt = waits_truth_stamp(l);
		interval(&tt, &bt, &lt, &in->true_lo_ns, &in->true_hi_ns);
	}
	return in->est_ns > 0 || in->lo_ns > 0;
}

/* ---- sums ---- */

static int64_t sat_add(int64_t a, int64_t b)
{
	return a >= WAITS_NO_BOUND - b ? WAITS_NO_BOUND : a + b;
}

static void total_add(struct waits_total *t, const struct waits_instance *in)
{
	t->n++;
	t->proven += in->lo_ns > 0;
	t->est_ns += in->est_ns;
	t->lo_ns += in->lo_ns;
	t->hi_ns = sat_add(t->hi_ns, in->hi_ns);
	if (in->has_truth) {
		t->truth_n++;
		t->truth_outside += in->true_hi_ns < in->lo_ns || in->true_lo_ns > in->hi_ns;
		t->true_lo_ns += in->true_lo_ns;
		t->true_hi_ns += in->true_hi_ns;
	}
}

static int row_add(waits *w, const struct waits_instance *in)
{
	uint64_t k[4] = {(uint64_t)in->pattern, in->func, in->comm, (uint64_t)(uint32_t)in->proc};
	if (w->last_row && !memcmp(k, w->last_key, sizeof(k))) {
		total_add(&w->rows[w->last_row - 1].t, in);
		w->sorted_ok = 0;
		return 0;
	}
	uint64_t *have = ktab_find(&w->rowmap, k);
	if (!have) {
		if (GROW(w->rows, w->nrows, w->rows_cap))
			return HCLOCK_ENOMEM;
		if (ktab_put(&w->rowmap, k, w->nrows))
			return HCLOCK_ENOMEM;
		w->rows[w->nrows] = (struct waits_row){.pattern = in->pattern, .func = in->func,
		                                       .comm = in->comm, .proc = in->proc};
		have = ktab_find(&w->rowmap, k);
		*have = w->nrows++;
	}
	total_add(&w->rows[*have].t, in);
	memcpy(w->last_key, k, sizeof(k));
	w->last_row = (size_t)*have + 1;
	w->sorted_ok = 0;
	return 0;
}

/* the min-heap of the worst instances, by estimate */
static void worst_add(waits *w, const struct waits_instance *in)
{
	size_t k = w->o.worst, i;
	struct waits_instance *h = w->worst;
	if (!k)
		return;
	if (w->nworst < k) {
		i = w->nworst++;
		for (; i && h[(i - 1) / 2].est_ns > in->est_ns; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = *in;
		return;
	}
	if (in->est_ns <= h[0].est_ns)
		return;
	for (i = 0;;) {
		size_t c = 2 * i + 1;
		if (c >= k)
			break;
		if (c + 1 < k && h[c + 1].est_ns < h[c].est_ns)
			c++;
		if (h[c].est_ns >= in->est_ns)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = *in;
}

int waits_emit(waits *w, const struct waits_instance *in)
{
	if (row_add(w, in))
		return HCLOCK_ENOMEM;
	total_add(&w->tot[in->pattern], in);
	worst_add(w, in);
	if (w->o.on_instance) {
		int rc = w->o.on_instance(w->o.ctx, in);
		if (rc)
			w->stopped = rc;
		return rc;
	}
	return 0;
}

/* ---- the pool of pending parts ---- */

static long pend_new(waits *w)
{
	if (w->nfree)
		return (long)w->free_idx[--w->nfree];
	if (GROW(w->pool, w->npool, w->cap))
		return -1;
	return (long)w->npool++;
}

static int pend_release(waits *w, size_t i)
{
	if (w->pool[i].kind == 2)
		free(w->pool[i].u.coll.m);
	w->pool[i].kind = -1;
	if (GROW(w->free_idx, w->nfree, w->free_cap))
		return HCLOCK_ENOMEM; /* the slot is lost, nothing else */
	w->free_idx[w->nfree++] = i;
	return 0;
}

/* ---- messages ---- */

static int message(waits *w, const struct waits_send *s, const struct waits_recv *r)
{
	w->left.messages++;
	for (int p = 0; p < waits_npatterns; p++)
		if (waits_patterns[p]->on_message) {
			int rc = waits_patterns[p]->on_message(w, p, s, r);
			if (rc)
				return rc;
		}
	return 0;
}

/* the end of a message: paired with its partner if that came, else kept */
/* one end of a message: paired with the first waiting end of the other side on its channel
 * (MPI's non-overtaking rule, util/msgmatch.h), or kept in the pool until its partner comes */
static int msg_end(waits *w, int recv, uint64_t comm, int64_t src, int64_t dst, int64_t tag,
                   const struct waits_send *s, const struct waits_recv *r)
{
	if (w->stopped)
		return w->stopped;
	long i = pend_new(w);
	if (i < 0)
		return HCLOCK_ENOMEM;
	int64_t h = msgmatch_fifo(&w->chans, comm, src, dst, tag, recv, (size_t)i);
	if (h == MSGMATCH_NOMEM) {
		pend_release(w, (size_t)i);
		return HCLOCK_ENOMEM;
	}
	if (h == MSGMATCH_QUEUED) {
		struct pend *p = &w->pool[i];
		p->kind = recv;
		if (recv) {
			p->u.recv = *r;
			w->left.recvs++;
		} else {
			p->u.send = *s;
			w->left.sends++;
		}
		return 0;
	}
	struct pend *p = &w->pool[h];
	struct waits_send sc = recv ? p->u.send : *s;
	struct waits_recv rc = recv ? *r : p->u.recv;
	if (recv)
		w->left.sends--;
	else
		w->left.recvs--;
	w->pool[i].kind = -1;
	int e = pend_release(w, (size_t)h);
	if (!e)
		e = pend_release(w, (size_t)i);
	return e ? e : message(w, &sc, &rc);
}

static int call_ok(const struct waits_call *c)
{
	return c->proc >= 0;
}

int waits_add_send(waits *w, const struct waits_send *s)
{
	if (!call_ok(&s->call) || s->dst < 0 || s->dst > INT32_MAX)
		return HCLOCK_EINVAL;
	return msg_end(w, 0, s->comm, s->call.proc, s->dst, s->tag, s, NULL);
}

int waits_add_recv(waits *w, const struct waits_recv *r)
{
	if (!call_ok(&r->call) || r->src < 0 || r->src > INT32_MAX)
		return HCLOCK_EINVAL;
	return msg_end(w, 1, r->comm, r->src, r->call.proc, r->tag, NULL, r);
}

/* ---- collectives ---- */

static int collective(waits *w, const struct waits_coll *m, size_t n)
{
	w->left.colls++;
	for (int p = 0; p < waits_npatterns; p++)
		if (waits_patterns[p]->on_collective) {
			int rc = waits_patterns[p]->on_collective(w, p, m, n);
			if (rc)
				return rc;
		}
	return 0;
}

/* whether the members of one place in the sequence are one collective: the same kind,
 * root and size (nonblocking collectives completed out of their start order are not) */
static int agree(const struct waits_coll *m, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (m[i].kind != m[0].kind || m[i].root != m[0].root || m[i].size != m[0].size)
			return 0;
	return 1;
}

int waits_add_coll(waits *w, const struct waits_coll *c)
{
	if (!call_ok(&c->call) || c->size < 1 || (unsigned)c->kind > WAITS_COLL_OTHER)
		return HCLOCK_EINVAL;
	if (w->stopped)
		return w->stopped;
	int64_t seq = c->seq;
	if (seq < 0) {
		uint64_t ks[4] = {c->comm, (uint64_t)(uint32_t)c->call.proc, 1, 0};
		uint64_t *next = ktab_find(&w->seqs, ks);
		seq = next ? (int64_t)*next : 0;
		if (ktab_put(&w->seqs, ks, (uint64_t)seq + 1))
			return HCLOCK_ENOMEM;
	}
	if (c->size == 1)
		return collective(w, c, 1);
	uint64_t k[4] = {c->comm, ~(uint64_t)0, 0, (uint64_t)seq};
	uint64_t *have = ktab_find(&w->colls, k);
	size_t i;
	if (have) {
		i = (size_t)*have;
	} else {
		long j = pend_new(w);
		if (j < 0)
			return HCLOCK_ENOMEM;
		i = (size_t)j;
		w->pool[i].kind = 2;
		w->pool[i].u.coll.n = 0;
		w->pool[i].u.coll.m = malloc((size_t)c->size * sizeof(struct waits_coll));
		if (!w->pool[i].u.coll.m || ktab_put(&w->colls, k, i)) {
			pend_release(w, i);
			return HCLOCK_ENOMEM;
		}
		w->left.colls_open++;
	}
	struct pend *p = &w->pool[i];
	size_t size = p->u.coll.n ? (size_t)p->u.coll.m[0].size : (size_t)c->size;
	if (p->u.coll.n >= size)
		return HCLOCK_EINVAL; /* more members than the first one said */
	p->u.coll.m[p->u.coll.n++] = *c;
	if (p->u.coll.n < size)
		return 0;
	ktab_del(&w->colls, k);
	w->left.colls_open--;
	struct waits_coll *m = p->u.coll.m;
	p->u.coll.m = NULL;
	p->kind = -1;
	int rc = pend_release(w, i);
	if (!rc && agree(m, size))
		rc = collective(w, m, size);
	else if (!rc)
		w->left.colls_mismatched++;
	free(m);
	return rc;
}

/* ---- results ---- */

int waits_finish(waits *w)
{
	for (int p = 0; p < waits_npatterns && !w->stopped; p++)
		if (waits_patterns[p]->finish) {
			int rc = waits_patterns[p]->finish(w, p);
			if (rc)
				return rc;
		}
	return w->stopped;
}

int waits_pattern_count(void)
{
	return waits_npatterns;
}

const char *waits_pattern_name(int p)
{
	return p >= 0 && p < waits_npatterns ? waits_patterns[p]->name : "?";
}

const char *waits_pattern_title(int p)
{
	return p >= 0 && p < waits_npatterns ? waits_patterns[p]->title : "?";
}

int waits_pattern_also_counted(int p)
{
	return p >= 0 && p < waits_npatterns && waits_patterns[p]->also_counted;
}

struct waits_total waits_pattern_total(const waits *w, int p)
{
	return p >= 0 && p < waits_npatterns ? w->tot[p] : (struct waits_total){0};
}

static int by_est(const void *a, const void *b)
{
	const struct waits_row *x = a, *y = b;
	if (x->t.est_ns != y->t.est_ns)
		return x->t.est_ns > y->t.est_ns ? -1 : 1;
	if (x->pattern != y->pattern)
		return x->pattern < y->pattern ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->comm < y->comm ? -1 : x->comm > y->comm;
}

const struct waits_row *waits_rows(waits *w, size_t *n)
{
	*n = 0;
	if (!w->nrows)
		return NULL;
	if (!w->sorted_ok) {
		struct waits_row *s = realloc(w->sorted, w->nrows * sizeof(*s));
		if (!s)
			return NULL;
		memcpy(s, w->rows, w->nrows * sizeof(*s));
		qsort(s, w->nrows, sizeof(*s), by_est);
		w->sorted = s;
		w->sorted_ok = 1;
	}
	*n = w->nrows;
	return w->sorted;
}

static int inst_by_est(const void *a, const void *b)
{
	const struct waits_instance *x = a, *y = b;
	if (x->est_ns != y->est_ns)
		return x->est_ns > y->est_ns ? -1 : 1;
	return x->at_ns < y->at_ns ? -1 : x->at_ns > y->at_ns;
}

const struct waits_instance *waits_worst(waits *w, size_t *n)
{
	memcpy(w->worst_sorted, w->worst, w->nworst * sizeof(*w->worst));
	qsort(w->worst_sorted, w->nworst, sizeof(*w->worst), inst_by_est);
	*n = w->nworst;
	return w->worst_sorted;
}

void waits_left(const waits *w, struct waits_left *l)
{
	*l = w->left;
}
