/* nblink_script.c - the scripted in-memory link of the unit tests (nblink_script.h). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "nblink_script.h"
#include "util/err.h"
#include "util/rng.h"
#include "util/timeutil.h"

#define COLLECTIVE_WAIT_NS 60000000000ll /* a collective step missing a process aborts the
                                            test after 60 s of real time instead of hanging */

struct msg {
	int64_t arrive_ns;  /* true time it can be taken, ns */
	uint64_t seq;       /* send order (ties) */
	int src, tag;
	size_t len;
	unsigned char buf[NBLINK_MAX_MSG];
};

struct inbox {
	struct msg *m;
	size_t n, cap;
};

struct barrier {
	int count;
	unsigned gen;
};

struct script_link {
	struct nblink l;
	struct script_world *w;
	int stopped, closed;
	int group;              /* its group's leader, -1: none */
	int group_n;            /* and how many it has */
};

struct script_world {
	struct script_cfg cfg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct inbox in[SCRIPT_MAX];
	int64_t last_ns[SCRIPT_MAX][SCRIPT_MAX]; /* latest arrival from i to j, ns */
	struct rng rng[SCRIPT_MAX];              /* each sender's draws */
	uint64_t seq;
	struct script_stats st;
	struct barrier all, groups[SCRIPT_MAX];  /* every process; each group (by leader) */
	unsigned char gather[SCRIPT_MAX][512];   /* the collective steps' contributions */
	void *mem[SCRIPT_MAX];                   /* each group's shared memory (by leader) */
};

#define SCRIPT_LINK(p) container_of(p, struct script_link, l)

static int64_t now_ns(const struct script_world *w)
{
	return __atomic_load_n(w->cfg.T_ns, __ATOMIC_RELAXED);
}

/* with w->mu held: wait for the n processes b counts */
static void barrier_wait(struct script_world *w, struct barrier *b, int n)
{
	unsigned gen = b->gen;
	if (++b->count == n) {
		b->count = 0;
		b->gen++;
		pthread_cond_broadcast(&w->cv);
		return;
	}
	struct timespec ts = mono_deadline(COLLECTIVE_WAIT_NS);
	while (gen == b->gen)
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts)) {
			fprintf(stderr, "nblink_script: a collective step still misses a process after "
			        "60 s\n");
			abort();
		}
}

/* every process's len bytes (len <= 512) into w->gather, by rank; w->mu held. The caller
 * reads them, then calls barrier_wait again before the next step may write. */
static void gather(struct script_link *s, const void *mine, size_t len)
{
	struct script_world *w = s->w;
	memcpy(w->gather[s->l.rank], mine, len);
	barrier_wait(w, &w->all, w->cfg.n);
}

/* with w->mu held: msg into peer's inbox at true time at (or after the latest from me) */
static int deliver(struct script_world *w, int me, int peer, int tag, int64_t at,
                   const void *msg, size_t len)
{
	struct inbox *in = &w->in[peer];
	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 16;
		struct msg *m = realloc(in->m, cap * sizeof(*m));
		if (!m)
			return err_set(HCLOCK_ENOMEM, "out of memory");
		in->m = m;
		in->cap = cap;
	}
	if (at < w->last_ns[me][peer]) /* no overtaking */
		at = w->last_ns[me][peer];
	w->last_ns[me][peer] = at;
	struct msg *m = &in->m[in->n++];
	*m = (struct msg){at, w->seq++, me, tag, len, {0}};
	memcpy(m->buf, msg, len);
	pthread_cond_broadcast(&w->cv); /* a set-up receive may wait for it */
	return 0;
}

static int sl_send(struct nblink *l, int peer, int tag, const void *msg, size_t len)
{
	struct script_link *s = SCRIPT_LINK(l);
	struct script_world *w = s->w;
	const struct script_cfg *c = &w->cfg;
	int me = l->rank;
	if (len > NBLINK_MAX_MSG || peer < 0 || peer >= c->n)
		return err_set(HCLOCK_EINVAL, "a scripted link message of %zu bytes to %d", len, peer);
	pthread_mutex_lock(&w->mu);
	struct rng *r = &w->rng[me];
	int64_t t = now_ns(w);
	double d = c->min_ns[me][peer];
	if (c->tail_ns > 0 && rng_uniform(r) > 0.3)
		d += -c->tail_ns * log(1 - rng_uniform(r));
	int lost = (c->drop > 0 && t >= c->drop_from_ns && rng_uniform(r) < c->drop) ||
	           (me == c->mute && t >= c->mute_from_ns && t < c->mute_to_ns);
	int junk = c->junk > 0 && t >= c->drop_from_ns && rng_uniform(r) < c->junk;
	w->st.sent++;
	w->st.lost += lost;
	int rc = 0;
	if (!lost)
		rc = deliver(w, me, peer, tag, t + (int64_t)llround(d), msg, len);
	if (junk && !rc) {
		unsigned char g[NBLINK_MAX_MSG];
		size_t n = rng_uniform(r) < 0.5 ? len : (size_t)(rng_uniform(r) * (NBLINK_MAX_MSG + 1));
		for (size_t i = 0; i < n; i++)
			g[i] = (unsigned char)rng_u64(r);
		w->st.garbled++;
		rc = deliver(w, me, peer, tag, t + (int64_t)llround(d), g, n);
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

/* with w->mu held: the index of the first message to take from in (src -1: any, tag -1:
 * any, by - INT64_MAX: whenever it arrives), or -1 */
static long first_msg(const struct inbox *in, int src, int tag, int64_t by)
{
	long best = -1;
	for (size_t i = 0; i < in->n; i++) {
		const struct msg *m = &in->m[i];
		if (m->arrive_ns > by || (src >= 0 && m->src != src) || (tag >= 0 && m->tag != tag))
			continue;
		if (best < 0 || m->arrive_ns < in->m[best].arrive_ns ||
		    (m->arrive_ns == in->m[best].arrive_ns && m->seq < in->m[best].seq))
			best = (long)i;
	}
	return best;
}

static void take(struct script_world *w, struct inbox *in, long i, void *buf, size_t cap,
                 size_t *len, int *src, int *tag)
{
	struct msg *m = &in->m[i];
	*len = m->len < cap ? m->len : cap;
	memcpy(buf, m->buf, *len);
	if (src)
		*src = m->src;
	if (tag)
		*tag = m->tag;
	in->m[i] = in->m[--in->n];
	w->st.delivered++;
}

static int sl_poll(struct nblink *l, int *peer, int *tag, void *buf, size_t cap, size_t *len)
{
	struct script_link *s = SCRIPT_LINK(l);
	struct script_world *w = s->w;
	if (s->stopped)
		return 0;
	pthread_mutex_lock(&w->mu);
	struct inbox *in = &w->in[l->rank];
	long i = first_msg(in, -1, -1, now_ns(w));
	if (i >= 0)
		take(w, in, i, buf, cap, len, peer, tag);
	pthread_mutex_unlock(&w->mu);
	return i >= 0;
}

static void sl_quiesce(struct nblink *l)
{
	SCRIPT_LINK(l)->stopped = 1;
}

static void sl_destroy(struct nblink *l)
{
	struct script_link *s = SCRIPT_LINK(l);
	pthread_mutex_lock(&s->w->mu);
	s->w->in[l->rank].n = 0; /* what still came is discarded */
	pthread_mutex_unlock(&s->w->mu);
	free(s);
}

static int sl_agree(struct nblink *l, int rc)
{
	struct script_link *s = SCRIPT_LINK(l);
	struct script_world *w = s->w;
	struct {
		int rc;
		char line[400];
	} mine = {rc, ""}, first = {0, ""};
	int who = -1;
	if (rc)
		snprintf(mine.line, sizeof(mine.line), "%s", hclock_last_error());
	pthread_mutex_lock(&w->mu);
	gather(s, &mine, sizeof(mine));
	for (int r = 0; r < w->cfg.n && who < 0; r++)
		if (((const int *)w->gather[r])[0]) {
			memcpy(&first, w->gather[r], sizeof(first));
			who = r;
		}
	barrier_wait(w, &w->all, w->cfg.n);
	pthread_mutex_unlock(&w->mu);
	if (who < 0)
		return 0;
	return err_set(first.rc, "rank %d: %s", who, first.line);
}

static int sl_allgather(struct nblink *l, const void *mine, size_t len, void *all)
{
	struct script_link *s = SCRIPT_LINK(l);
	struct script_world *w = s->w;
	if (len > sizeof(w->gather[0]))
		return err_set(HCLOCK_EINVAL, "a scripted all-gather of %zu bytes", len);
	pthread_mutex_lock(&w->mu);
	gather(s, mine, len);
	for (int r = 0; r < w->cfg.n; r++)
		memcpy((unsigned char *)all + (size_t)r * len, w->gather[r], len);
	barrier_wait(w, &w->all, w->cfg.n);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static int sl_recv(struct nblink *l, int peer, int tag, void *buf, size_t len)
{
	struct script_world *w = SCRIPT_LINK(l)->w;
	struct inbox *in = &w->in[l->rank];
	struct timespec ts = mono_deadline(COLLECTIVE_WAIT_NS);
	long i;
	size_t got;
	pthread_mutex_lock(&w->mu);
	while ((i = first_msg(in, peer, tag, INT64_MAX)) < 0)
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts)) {
			pthread_mutex_unlock(&w->mu);
			return err_set(HCLOCK_EINVAL, "scripted link: no set-up message from %d after "
			               "60 s", peer);
		}
	take(w, in, i, buf, len, &got, NULL, NULL);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* one process, one node: every group shares memory */
static int sl_group(struct nblink *l, int color, int key, size_t size, void **mem, int *members,
                    int *on_node)
{
	struct script_link *s = SCRIPT_LINK(l);
	struct script_world *w = s->w;
	int mine[2] = {color, key}, leader = -1, lkey = 0, n = 0;
	*mem = NULL;
	pthread_mutex_lock(&w->mu);
	gather(s, mine, sizeof(mine));
	for (int r = 0; r < w->cfg.n && color >= 0; r++) {
		const int *g = (const int *)w->gather[r];
		if (g[0] != color)
			continue;
		n++;
		if (leader < 0 || g[1] < lkey) {
			leader = r;
			lkey = g[1];
		}
	}
	int rc = 0;
	if (leader == l->rank && !(w->mem[leader] = calloc(1, size ? size : 1)))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	barrier_wait(w, &w->all, w->cfg.n); /* the leader's memory is there */
	s->group = leader;
	s->group_n = n;
	*members = *on_node = n;
	if (leader >= 0)
		*mem = w->mem[leader];
	barrier_wait(w, &w->all, w->cfg.n);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

static void sl_group_barrier(struct nblink *l)
{
	struct script_link *s = SCRIPT_LINK(l);
	struct script_world *w = s->w;
	if (s->group < 0)
		return;
	pthread_mutex_lock(&w->mu);
	barrier_wait(w, &w->groups[s->group], s->group_n);
	pthread_mutex_unlock(&w->mu);
}

static void sl_close(struct nblink *l)
{
	struct script_link *s = SCRIPT_LINK(l);
	s->stopped = s->closed = 1;
	pthread_mutex_lock(&s->w->mu);
	s->w->in[l->rank].n = 0;
	pthread_mutex_unlock(&s->w->mu);
}

static const struct nblink_ops script_ops = {
	.send = sl_send, .poll = sl_poll, .quiesce = sl_quiesce, .destroy = sl_destroy,
	.agree = sl_agree, .allgather = sl_allgather, .recv = sl_recv, .group = sl_group,
	.group_barrier = sl_group_barrier, .close = sl_close,
};

struct script_world *script_world_create(const struct script_cfg *cfg)
{
	if (cfg->n < 1 || cfg->n > SCRIPT_MAX)
		return NULL;
	struct script_world *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cfg = *cfg;
	pthread_mutex_init(&w->mu, NULL);
	mono_cond_init(&w->cv);
	for (int r = 0; r < cfg->n; r++)
		rng_seed(&w->rng[r], cfg->seed * 0x9e3779b97f4a7c15ull + (uint64_t)r);
	return w;
}

struct nblink *script_link(struct script_world *w, int rank)
{
	struct script_link *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->l = (struct nblink){&script_ops, rank, w->cfg.n};
	s->w = w;
	s->group = -1;
	return &s->l;
}

void script_world_stats(const struct script_world *w, struct script_stats *st)
{
	*st = w->st;
}

void script_world_free(struct script_world *w)
{
	if (!w)
		return;
	for (int r = 0; r < SCRIPT_MAX; r++) {
		free(w->in[r].m);
		free(w->mem[r]);
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
