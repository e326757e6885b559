/*
 * test_msgmatch.c - util/msgmatch.h: messages paired by MPI's non-overtaking rule.
 *
 * Random programs of 2-6 processes send messages on random channels (communicators, tags,
 * self-messages among them); each process's sends are in posting order, each process's
 * receives in completion order, and the message each record belongs to is known. Then:
 *   - msgmatch() pairs every send with the receive of the same message, in channel order,
 *     whatever order the ends are given in; ends left over (receives cut off, as in a trace
 *     of a program that died) are counted, each such channel reported once to lone() with its
 *     counts, and none of them paired;
 *   - the online form (msgmatch_next, msgmatch_id) gives the send and the receive of every
 *     message the same id, and different messages different ids;
 *   - the streaming form (msgmatch_fifo) pairs every send with the receive of the same
 *     message, the sends and the receives interleaved at random;
 *   - a callback's non-zero result stops the pairing and comes back.
 * 20 seeds; a failing check prints its seed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util/msgmatch.h"
#include "util/rng.h"

#define MAXM 4000

struct msg {
	int src, dst, tag;
	uint64_t comm;
	int cut;      /* its receive not recorded */
};

struct ctx {
	const struct msg *m;
	size_t npairs, nlone_ends, nlone_calls;
	int bad;
	int stop_at;  /* > 0: return 7 at that pair */
};

/* who: a random handle; whose[who] the message of the end: the truth of every end (a handle
 * in message order would let a sort by handle pass for one by order) */
static size_t whose[2 * MAXM];

static int on_pair(void *c, const struct msgmatch_end *s, const struct msgmatch_end *r)
{
	struct ctx *x = c;
	x->npairs++;
	if (s->recv || !r->recv || whose[s->who] != whose[r->who])
		x->bad++;
	return x->stop_at && (int)x->npairs == x->stop_at ? 7 : 0;
}

static int on_lone(void *c, const struct msgmatch_end *first, size_t nsend, size_t nrecv)
{
	struct ctx *x = c;
	(void)first;
	x->nlone_calls++;
	x->nlone_ends += nsend > nrecv ? nsend - nrecv : nrecv - nsend;
	return 0;
}

static int chan_cmp(const struct msgmatch_end *a, const struct msgmatch_end *b)
{
	int64_t ka[4] = {a->src, a->dst, (int64_t)a->comm, a->tag};
	int64_t kb[4] = {b->src, b->dst, (int64_t)b->comm, b->tag};
	for (int i = 0; i < 4; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

static void shuffle(struct msgmatch_end *e, size_t n, struct rng *r)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(rng_uniform(r) * (double)i) % i;
		struct msgmatch_end t = e[i - 1];
		e[i - 1] = e[j];
		e[j] = t;
	}
}

static void one_case(void)
{
	struct rng r;
	rng_seed(&r, test_seed);
	int np = 2 + (int)(rng_uniform(&r) * 5);
	size_t nm = 500 + (size_t)(rng_uniform(&r) * 3000);
	static struct msg m[MAXM];
	static struct msgmatch_end e[2 * MAXM];
	/* a process's sends are posted in message order; its receives complete in message order
	 * per channel but interleave across channels: the order of a receive is its message's
	 * index shifted by a per-channel offset (the channel's receives stay in order) */
	size_t ne = 0, ncut = 0;
	static size_t handle[2 * MAXM];
	for (size_t i = 0; i < 2 * nm; i++)
		handle[i] = i;
	for (size_t i = 2 * nm; i > 1; i--) {
		size_t j = (size_t)(rng_uniform(&r) * (double)i) % i, t = handle[i - 1];
		handle[i - 1] = handle[j];
		handle[j] = t;
	}
	for (size_t i = 0; i < 2 * nm; i++)
		whose[handle[i]] = i / 2;
	int cut_tag = 1000 + (int)(rng_uniform(&r) * 3); /* the channel whose tail is cut */
	for (size_t i = 0; i < nm; i++) {
		m[i] = (struct msg){(int)(rng_uniform(&r) * np), (int)(rng_uniform(&r) * np),
		                    (int)(rng_uniform(&r) * 4), 1 + (uint64_t)(rng_uniform(&r) * 3), 0};
		if (i > nm - 50 && rng_uniform(&r) < 0.5) { /* a cut tail on one tag */
			m[i].tag = cut_tag;
			m[i].cut = 1;
			ncut++;
		}
		e[ne++] = (struct msgmatch_end){.src = m[i].src, .dst = m[i].dst, .comm = m[i].comm,
		                                .tag = m[i].tag, .order = (int64_t)i, .recv = 0,
		                                .who = handle[2 * i]};
		if (!m[i].cut)
			e[ne++] = (struct msgmatch_end){.src = m[i].src, .dst = m[i].dst,
			                                .comm = m[i].comm, .tag = m[i].tag,
			                                .order = (int64_t)(i + 7 * (size_t)m[i].tag),
			                                .recv = 1, .who = handle[2 * i + 1]};
	}
	shuffle(e, ne, &r);
	struct ctx x = {m, 0, 0, 0, 0, 0};
	size_t left = 99;
	int rc = msgmatch(e, ne, on_pair, on_lone, &x, &left);
	TEST_CHECK(rc == 0, "msgmatch returned %d", rc);
	TEST_CHECK(x.bad == 0, "%d pairs of two different messages", x.bad);
	TEST_CHECK(x.npairs == nm - ncut, "%zu pairs of %zu messages, %zu cut", x.npairs, nm,
	           ncut);
	TEST_CHECK(left == ncut && x.nlone_ends == ncut, "%zu left, %zu in lone(), %zu cut", left,
	           x.nlone_ends, ncut);
	TEST_CHECK(!ncut || x.nlone_calls >= 1, "no channel reported lone");
	/* in channel order: the sort left e sorted by channel */
	for (size_t i = 1; i < ne; i++)
		if (chan_cmp(&e[i - 1], &e[i]) > 0) {
			TEST_CHECK(0, "ends not in channel order at %zu", i);
			break;
		}
	/* a callback's result stops it */
	shuffle(e, ne, &r);
	struct ctx y = {m, 0, 0, 0, 0, 5};
	rc = msgmatch(e, ne, on_pair, NULL, &y, NULL);
	TEST_CHECK(rc == 7 && y.npairs == 5, "stop: rc %d after %zu pairs", rc, y.npairs);

	/* the online form: each process numbers its own ends as it records them */
	struct msgmatch_chans cs = {0};
	uint64_t *sid = calloc(nm, sizeof(*sid)), *rid = calloc(nm, sizeof(*rid));
	int n_ok = sid && rid;
	TEST_CHECK(n_ok, "out of memory");
	for (size_t i = 0; n_ok && i < nm; i++) {
		int64_t k = msgmatch_next(&cs, m[i].comm, m[i].src, m[i].dst, m[i].tag, 0);
		TEST_CHECK(k >= 0, "msgmatch_next failed");
		sid[i] = msgmatch_id(m[i].comm, m[i].src, m[i].dst, m[i].tag, (uint64_t)k);
	}
	for (size_t i = 0; n_ok && i < nm; i++) {
		if (m[i].cut)
			continue;
		int64_t k = msgmatch_next(&cs, m[i].comm, m[i].src, m[i].dst, m[i].tag, 1);
		rid[i] = msgmatch_id(m[i].comm, m[i].src, m[i].dst, m[i].tag, (uint64_t)k);
	}
	size_t same = 0, clash = 0;
	for (size_t i = 0; n_ok && i < nm; i++) {
		same += !m[i].cut && sid[i] == rid[i] && sid[i] != 0;
		if (i && sid[i] == sid[i - 1])
			clash++;
	}
	TEST_CHECK(same == nm - ncut, "%zu of %zu messages with one id at both ends", same,
	           nm - ncut);
	TEST_CHECK(clash == 0, "%zu neighbouring messages share an id", clash);
	msgmatch_chans_free(&cs);
	free(sid);
	free(rid);

	/* the streaming pairing (msgmatch_fifo): sends in message order and receives in their
	 * completion order, the two streams interleaved at random; every pair it makes is one
	 * message, and every message not cut is paired */
	struct msgmatch_chans fs = {0};
	static size_t rorder[MAXM];
	size_t nr = 0;
	for (size_t i = 0; i < nm; i++)
		if (!m[i].cut)
			rorder[nr++] = i;
	/* completion order: by i + 7 * tag, as the ends above (each channel's stays in order) */
	for (size_t a = 1; a < nr; a++)
		for (size_t b = a; b > 0 && rorder[b - 1] + 7 * (size_t)m[rorder[b - 1]].tag >
		                                rorder[b] + 7 * (size_t)m[rorder[b]].tag; b--) {
			size_t t = rorder[b];
			rorder[b] = rorder[b - 1];
			rorder[b - 1] = t;
		}
	size_t si = 0, ri = 0, paired = 0, wrong = 0;
	while (si < nm || ri < nr) {
		int recv = si == nm || (ri < nr && rng_uniform(&r) < 0.5);
		size_t i = recv ? rorder[ri++] : si++;
		size_t who = handle[2 * i + (size_t)recv];
		int64_t h = msgmatch_fifo(&fs, m[i].comm, m[i].src, m[i].dst, m[i].tag, recv, who);
		TEST_CHECK(h != MSGMATCH_NOMEM, "msgmatch_fifo: no memory");
		if (h >= 0) {
			paired++;
			wrong += whose[(size_t)h] != whose[who];
		}
	}
	TEST_CHECK(paired == nm - ncut && wrong == 0, "msgmatch_fifo: %zu pairs of %zu messages, "
	           "%zu of two different messages", paired, nm - ncut, wrong);
	msgmatch_chans_free(&fs);
}

int main(void)
{
	for (test_seed = 1; test_seed <= 20; test_seed++)
		one_case();
	test_seed = 0;
	/* nothing to pair */
	size_t left = 5;
	TEST_CHECK(msgmatch(NULL, 0, on_pair, on_lone, NULL, &left) == 0 && left == 0,
	           "no ends: left %zu", left);
	/* a self-message: the send and the receive on one channel of one process */
	struct msgmatch_chans cs = {0};
	int64_t a = msgmatch_next(&cs, 1, 3, 3, 0, 0), b = msgmatch_next(&cs, 1, 3, 3, 0, 1);
	TEST_CHECK(a == 0 && b == 0, "a self-message numbered %lld and %lld", (long long)a,
	           (long long)b);
	msgmatch_chans_free(&cs);
	return test_end("test_msgmatch");
}
