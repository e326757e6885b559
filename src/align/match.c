/*
 * match.c - pair every send event with its receive event across the nodes of a trace set:
 * the messages the engine fits, and at every matched event the other side's time.
 *
 * Messages are matched through a hash table of the sends keyed by (src, dst, id): open
 * addressing with linear probing, at most 2/3 full, so matching is linear in the number of
 * events. Errors name the same message a sort by (src, dst, id) would find first.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "align/align_priv.h"
#include "align/format.h"

struct mslot {
	uint64_t id;
	uint32_t src, dst; /* node indexes */
	size_t se;         /* send event on src; NO_EVENT for an empty slot */
};

#define NO_EVENT ((size_t)-1)

struct mkey {
	uint32_t src, dst;
	uint64_t id;
	size_t ev;
};

static int cmp_mkey(const void *a, const void *b)
{
	const struct mkey *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int mkey_eq(const struct mkey *x, const struct mkey *y)
{
	return x->src == y->src && x->dst == y->dst && x->id == y->id;
}

/* where the search for key (src, dst, id) starts: multiplicative (Fibonacci) hashing, the
 * high bits of the product, so that ids counting up spread over the whole table */
static size_t mslot_home(size_t mask, uint32_t src, uint32_t dst, uint64_t id)
{
	uint64_t h = (id + (((uint64_t)src << 32) | dst) * UINT64_C(0xc2b2ae3d27d4eb4f)) *
	             UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & mask;
}

/* the slot of key (src, dst, id): where it is, or the empty slot where it would go */
static struct mslot *mslot_find(struct mslot *tab, size_t mask, uint32_t src, uint32_t dst,
                                uint64_t id)
{
	size_t i = mslot_home(mask, src, dst, id);

	for (;; i = (i + 1) & mask) {
		struct mslot *t = &tab[i];
		if (t->se == NO_EVENT || (t->id == id && t->src == src && t->dst == dst))
			return t;
	}
}

/* the smaller of two keys in (src, dst, id, ev) order, for error reports; a->src == UINT32_MAX
 * means none yet */
static void mkey_min(struct mkey *a, const struct mkey *b)
{
	if (a->src == UINT32_MAX || cmp_mkey(b, a) < 0)
		*a = *b;
}

#define NO_KEY ((struct mkey){UINT32_MAX, 0, 0, 0})

struct matcher {
	struct mslot *tab;  /* the sends */
	size_t mask;        /* table size - 1 */
	struct mkey *lone;  /* recvs without a send */
	size_t nlone;
	struct mkey dup;    /* the first duplicate found, or NO_KEY */
};

/* count the sends and recvs; every one needs a valid peer */
static int count(const struct trace_set *s, size_t *ns, size_t *nr)
{
	*ns = *nr = 0;
	for (size_t v = 0; v < s->nnodes; v++)
		for (size_t k = 0; k < s->nodes[v].nev; k++) {
			const struct trace_event *e = &s->nodes[v].ev[k];
			if (e->kind != TRACE_SEND && e->kind != TRACE_RECV)
				continue;
			if (e->peer < 0 || (size_t)e->peer >= s->nnodes || (size_t)e->peer == v)
				return err_set(HCLOCK_EINVAL, "%s:%u: message without a "
				               "valid peer node", s->nodes[v].path, e->line);
			*ns += e->kind == TRACE_SEND;
			*nr += e->kind == TRACE_RECV;
		}
	return 0;
}

/* every send into the table; a second one with the same key is a duplicate */
static void insert_sends(const struct trace_set *s, struct matcher *m)
{
	for (size_t v = 0; v < s->nnodes; v++) {
		const struct trace_node *n = &s->nodes[v];
		for (size_t k = 0; k < n->nev; k++) {
			const struct trace_event *e = &n->ev[k];
			struct mslot *t;
			if (e->kind != TRACE_SEND)
				continue;
			t = mslot_find(m->tab, m->mask, (uint32_t)v, (uint32_t)e->peer, e->msg);
			if (t->se == NO_EVENT)
				*t = (struct mslot){e->msg, (uint32_t)v, (uint32_t)e->peer, k};
			else
				mkey_min(&m->dup, &(struct mkey){(uint32_t)v, (uint32_t)e->peer, e->msg, k});
		}
	}
}

/* every recv to its send; a send claimed twice, or two lone recvs alike, are duplicates */
static int claim_recvs(struct hclock_align *a, struct matcher *m, size_t nr)
{
	const struct trace_set *s = &a->set;

	a->nmsg = 0;
	for (size_t v = 0; v < s->nnodes; v++) {
		const struct trace_node *n = &s->nodes[v];
		for (size_t k = 0; k < n->nev; k++) {
			const struct trace_event *e = &n->ev[k];
			struct mkey key = {(uint32_t)e->peer, (uint32_t)v, e->msg, k};
			const struct mslot *t;
			struct anode *src;
			if (e->kind != TRACE_RECV)
				continue;
			t = mslot_find(m->tab, m->mask, key.src, key.dst, key.id);
			if (t->se == NO_EVENT) {
				if (!m->lone && !(m->lone = malloc(nr * sizeof(*m->lone))))
					return HCLOCK_ENOMEM;
				m->lone[m->nlone++] = key;
				continue;
			}
			src = &a->node[t->src];
			if (src->matched[t->se]) {
				mkey_min(&m->dup, &key);
				continue;
			}
			a->msg[a->nmsg++] = (struct repair_msg){t->src, t->dst, t->se, k};
			src->mate[t->se] = e->time_ns;
			src->matched[t->se] = 1;
			a->node[v].mate[k] = s->nodes[t->src].ev[t->se].time_ns;
			a->node[v].matched[k] = 1;
		}
	}
	/* lone recvs are few (none in a complete trace): sorted, duplicates are neighbours */
	if (m->nlone)
		qsort(m->lone, m->nlone, sizeof(*m->lone), cmp_mkey);
	for (size_t i = 1; i < m->nlone; i++)
		if (mkey_eq(&m->lone[i], &m->lone[i - 1]))
			mkey_min(&m->dup, &m->lone[i]);
	return 0;
}

/* the first one-sided message in (src, dst, id) order: a lone recv, or a send no recv
 * claimed (*is_send); the table holds one only if fewer than ns messages matched */
static struct mkey first_missing(const struct hclock_align *a, const struct matcher *m,
                                 size_t ns, int *is_send)
{
	struct mkey miss = m->nlone ? m->lone[0] : NO_KEY;

	*is_send = 0;
	for (size_t i = 0; a->nmsg < ns && i <= m->mask; i++) {
		const struct mslot *t = &m->tab[i];
		if (t->se != NO_EVENT && !a->node[t->src].matched[t->se]) {
			struct mkey key = {t->src, t->dst, t->id, t->se};
			if (miss.src == UINT32_MAX || cmp_mkey(&key, &miss) < 0) {
				miss = key;
				*is_send = 1;
			}
		}
	}
	return miss;
}

/* the line for a run with unmatched_fail */
static void missing_line(struct hclock_align *a, const struct mkey *miss, int is_send)
{
	const struct trace_set *s = &a->set;
	const struct trace_node *n = &s->nodes[is_send ? miss->src : miss->dst];
	const struct trace_node *d = &s->nodes[is_send ? miss->dst : miss->src];

	snprintf(a->missing, sizeof(a->missing), "%s:%u: %s id %" PRIu64 " %s %s has no "
	         "matching %s in %s", n->path, n->ev[miss->ev].line,
	         is_send ? "send" : "recv", miss->id, is_send ? "to" : "from", d->name,
	         is_send ? "recv" : "send", d->path);
}

/* per ordered pair, the sends no recv claimed and the recvs without a send */
static int count_unmatched(struct hclock_align *a, const struct matcher *m, size_t ns)
{
	size_t nn = a->set.nnodes;

	a->unmatched = calloc(nn * nn * 2, sizeof(*a->unmatched));
	if (!a->unmatched)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	for (size_t i = 0; a->nmsg < ns && i <= m->mask; i++) {
		const struct mslot *t = &m->tab[i];
		if (t->se != NO_EVENT && !a->node[t->src].matched[t->se])
			a->unmatched[((size_t)t->src * nn + t->dst) * 2]++;
	}
	for (size_t i = 0; i < m->nlone; i++)
		a->unmatched[((size_t)m->lone[i].src * nn + m->lone[i].dst) * 2 + 1]++;
	return 0;
}

static int dup_error(const struct trace_set *s, const struct mkey *dup, int is_send)
{
	const struct trace_node *n = &s->nodes[is_send ? dup->src : dup->dst];

	return err_set(HCLOCK_EINVAL, "%s:%u: duplicate %s id %" PRIu64 " %s %s",
	               n->path, n->ev[dup->ev].line, is_send ? "send" : "recv", dup->id,
	               is_send ? "to" : "from", s->nodes[is_send ? dup->dst : dup->src].name);
}

int align_match(struct hclock_align *a)
{
	const struct trace_set *s = &a->set;
	struct matcher m = {.dup = NO_KEY};
	size_t ns, nr, cap = 16;
	int r = count(s, &ns, &nr), is_send;

	if (r)
		return r;
	while (cap < ns + ns / 2)
		cap *= 2;
	m.mask = cap - 1;
	m.tab = malloc(cap * sizeof(*m.tab));
	a->msg = malloc((ns < nr ? ns + 1 : nr + 1) * sizeof(*a->msg));
	if (!m.tab || !a->msg) {
		r = err_set(HCLOCK_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < cap; i++)
		m.tab[i].se = NO_EVENT;
	insert_sends(s, &m);
	if (m.dup.src != UINT32_MAX) {
		r = dup_error(s, &m.dup, 1);
	} else if (claim_recvs(a, &m, nr)) {
		r = err_set(HCLOCK_ENOMEM, "out of memory");
	} else if (m.dup.src != UINT32_MAX) {
		r = dup_error(s, &m.dup, 0);
	} else {
		struct mkey miss = first_missing(a, &m, ns, &is_send);
		a->missing[0] = 0;
		if (miss.src != UINT32_MAX)
			missing_line(a, &miss, is_send);
		r = count_unmatched(a, &m, ns);
	}
out:
	free(m.tab);
	free(m.lone);
	return r;
}
