/* msgmatch.c - MPI point-to-point messages paired by the non-overtaking rule (msgmatch.h). */
#include <stdlib.h>

#include "util/msgmatch.h"
#include "util/rng.h"

/* ---- all ends at once ---- */

static int same_chan(const struct msgmatch_end *x, const struct msgmatch_end *y)
{
	return x->src == y->src && x->dst == y->dst && x->comm == y->comm && x->tag == y->tag;
}

/* channel, then sends before receives, then order */
static int cmp_end(const void *a, const void *b)
{
	const struct msgmatch_end *x = a, *y = b;
#define C(f)                 \
	if (x->f != y->f)        \
		return x->f < y->f ? -1 : 1;
	C(src) C(dst) C(comm) C(tag) C(recv) C(order) C(order2) C(who)
#undef C
	return 0;
}

int msgmatch(struct msgmatch_end *e, size_t n, msgmatch_pair_fn pair, msgmatch_lone_fn lone,
             void *ctx, size_t *unpaired)
{
	size_t left = 0;
	int rc = 0;

	if (n)
		qsort(e, n, sizeof(*e), cmp_end);
	for (size_t a = 0; a < n && !rc;) {
		size_t b = a, ns = a;
		while (b < n && same_chan(&e[b], &e[a]))
			b++;
		while (ns < b && !e[ns].recv)
			ns++;
		size_t sends = ns - a, recvs = b - ns, pairs = sends < recvs ? sends : recvs;
		for (size_t j = 0; j < pairs && !rc; j++)
			rc = pair(ctx, &e[a + j], &e[ns + j]);
		if (sends != recvs) {
			left += sends + recvs - 2 * pairs;
			if (!rc && lone)
				rc = lone(ctx, &e[a], sends, recvs);
		}
		a = b;
	}
	if (unpaired)
		*unpaired = left;
	return rc;
}

/* ---- one record at a time ---- */

struct msgmatch_chan {
	uint64_t key;        /* hash of the channel; 0: an empty slot */
	uint64_t comm;
	int64_t src, dst, tag;
	uint64_t n[2];       /* sends and receives so far */
	size_t head, tail;   /* msgmatch_fifo: the ends waiting, first and last (SIZE_MAX:
	                        none; all of one side) */
	int side;            /* ... their side: 0 sends, 1 receives */
};

static uint64_t chan_key(uint64_t comm, int64_t src, int64_t dst, int64_t tag)
{
	uint64_t k = rng_mix64(rng_mix64(comm) ^ ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst));
	k = rng_mix64(k ^ (uint64_t)(uint32_t)tag * 0x9e3779b97f4a7c15ULL);
	return k ? k : 1;
}

uint64_t msgmatch_id(uint64_t comm, int64_t src, int64_t dst, int64_t tag, uint64_t n)
{
	uint64_t id = rng_mix64(chan_key(comm, src, dst, tag) + n * 0xbf58476d1ce4e5b9ULL);
	return id ? id : 1;
}

static int grow(struct msgmatch_chans *cs)
{
	size_t cap = cs->cap ? 2 * cs->cap : 64;
	struct msgmatch_chan *c = calloc(cap, sizeof(*c));
	if (!c)
		return -1;
	for (size_t i = 0; i < cs->cap; i++) {
		if (!cs->ch[i].key)
			continue;
		size_t j = cs->ch[i].key & (cap - 1);
		while (c[j].key)
			j = (j + 1) & (cap - 1);
		c[j] = cs->ch[i];
	}
	free(cs->ch);
	cs->ch = c;
	cs->cap = cap;
	return 0;
}

/* the channel, made when new (NULL without memory) */
static struct msgmatch_chan *chan(struct msgmatch_chans *cs, uint64_t comm, int64_t src,
                                  int64_t dst, int64_t tag)
{
	if (2 * (cs->n + 1) > cs->cap && grow(cs))
		return NULL;
	uint64_t k = chan_key(comm, src, dst, tag);
	size_t j = k & (cs->cap - 1);
	for (; cs->ch[j].key; j = (j + 1) & (cs->cap - 1)) {
		struct msgmatch_chan *c = &cs->ch[j];
		if (c->key == k && c->comm == comm && c->src == src && c->dst == dst && c->tag == tag)
			return c;
	}
	cs->ch[j] = (struct msgmatch_chan){.key = k, .comm = comm, .src = src, .dst = dst,
	                                   .tag = tag, .head = SIZE_MAX, .tail = SIZE_MAX};
	cs->n++;
	return &cs->ch[j];
}

int64_t msgmatch_next(struct msgmatch_chans *cs, uint64_t comm, int64_t src, int64_t dst,
                      int64_t tag, int recv)
{
	struct msgmatch_chan *c = chan(cs, comm, src, dst, tag);
	return c ? (int64_t)c->n[!!recv]++ : -1;
}

int64_t msgmatch_fifo(struct msgmatch_chans *cs, uint64_t comm, int64_t src, int64_t dst,
                      int64_t tag, int recv, size_t who)
{
	recv = !!recv;
	if (who >= cs->next_cap) {
		size_t cap = cs->next_cap ? cs->next_cap : 256;
		while (cap <= who)
			cap *= 2;
		size_t *nx = realloc(cs->next, cap * sizeof(*nx));
		if (!nx)
			return MSGMATCH_NOMEM;
		cs->next = nx;
		cs->next_cap = cap;
	}
	struct msgmatch_chan *c = chan(cs, comm, src, dst, tag);
	if (!c)
		return MSGMATCH_NOMEM;
	c->n[recv]++;
	if (c->head != SIZE_MAX && c->side != recv) {
		size_t h = c->head;
		c->head = cs->next[h];
		if (c->head == SIZE_MAX)
			c->tail = SIZE_MAX;
		return (int64_t)h;
	}
	cs->next[who] = SIZE_MAX;
	if (c->tail != SIZE_MAX)
		cs->next[c->tail] = who;
	else
		c->head = who;
	c->tail = who;
	c->side = recv;
	return MSGMATCH_QUEUED;
}

void msgmatch_chans_free(struct msgmatch_chans *cs)
{
	free(cs->ch);
	free(cs->next);
	*cs = (struct msgmatch_chans){0};
}
