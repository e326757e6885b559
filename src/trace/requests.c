/*
 * requests.c - the requests libhclock_trace follows from the call that starts them to the
 * call that completes them, for the C wrappers (calls.c) and the Fortran ones (fcalls.c)
 * alike: requests.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/pmpi.h"

#include "trace/requests.h"

/*
 * Requests whose completion (or start) the tracer must see, by their handle; matched-probe
 * messages, by theirs, in a second table (MPI_Mrecv/Imrecv do not name the communicator).
 * Open addressing with linear probing and backward-shift deletion, one mutex for both tables
 * (programs calling MPI from several threads). A handle may be there twice: MPI may hand a
 * just-freed handle out again (to any thread) before the thread that completed it has looked
 * it up. A lookup takes the oldest entry of the handle that the calling thread made, else the
 * oldest of all: a thread completing its own requests always finds its own (with 4 threads
 * each completing its receives, the older-first rule alone gave another thread's
 * communicator to 15 % of the receives); only a request completed by another thread than the
 * one that started it, while its handle is in use twice, may still be taken for the other
 * one. `work` counts what a completion call looks for: when zero, the
 * Wait and Test families skip their bookkeeping (no copy of the handles, no lock).
 */
struct rq {
	uint64_t key;          /* the handle's bytes */
	uint8_t kind;          /* enum rq_kind */
	uint8_t active;        /* RQ_PRECV: started, not completed yet */
	uintptr_t thread;      /* the thread that added it (the address of its rq_me) */
	MPI_Comm comm;         /* RQ_RECV, RQ_PRECV, RQ_MSG: the source's world rank is resolved
	                          at completion, from the status */
	MPI_Datatype type;     /* RQ_RECV, RQ_PRECV: the count is read from the status with it */
	struct rec rec;        /* RQ_PSEND: the SEND made at init (peer, tag, bytes, comm), its
	                          func and time (ns) those of each start; RQ_COLL: the REC_COLL
	                          made at the start (its enter time, ns), its leave time (ns) set
	                          by the completing call */
};

struct rtab {
	struct rq *e;
	size_t cap, n; /* slots (a power of two, at most half full), entries */
};

static struct {
	pthread_mutex_t mu;
	struct rtab req, msg;
	atomic_size_t work; /* RQ_RECV and RQ_COLL entries, active RQ_PRECV ones */
	atomic_size_t nreq; /* entries of req: MPI_Start(all) and MPI_Request_free look if any */
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t) && sizeof(MPI_Message) <= sizeof(uint64_t),
               "handles fit the key");

static uint64_t hkey(const void *h, size_t n)
{
	uint64_t k = 0;
	memcpy(&k, h, n);
	return k;
}
#define KEY(h) hkey(&(h), sizeof(h))

static size_t home(const struct rtab *t, uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (t->cap - 1);
}

/* a per-thread variable: its address tells the threads apart */
static __thread char rq_me;
#define ME ((uintptr_t)&rq_me)

/* the first entry of key k (probe order: the oldest) that this thread added, else the first
 * of any thread; SIZE_MAX none */
static size_t tab_find(const struct rtab *t, uint64_t k)
{
	size_t any = SIZE_MAX;
	if (!t->n)
		return SIZE_MAX;
	for (size_t i = home(t, k); t->e[i].kind != RQ_FREE; i = (i + 1) & (t->cap - 1))
		if (t->e[i].key == k) {
			if (t->e[i].thread == ME)
				return i;
			if (any == SIZE_MAX)
				any = i;
		}
	return any;
}

static void put(struct rtab *t, const struct rq *x)
{
	size_t i = home(t, x->key);
	while (t->e[i].kind != RQ_FREE)
		i = (i + 1) & (t->cap - 1);
	t->e[i] = *x;
	t->n++;
}

/* add x (after any entry of the same key); 0, or -1 out of memory (x not added) */
static int tab_add(struct rtab *t, const struct rq *x)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64, s = 0;
		struct rq *e = calloc(nc, sizeof(*e));
		if (!e)
			return -1;
		struct rtab o = *t;
		*t = (struct rtab){e, nc, 0};
		/* reinserted in probe order (from just after an empty slot): entries of one key
		 * keep their order */
		while (o.cap && o.e[s].kind != RQ_FREE)
			s++;
		for (size_t j = 1; j <= o.cap; j++) {
			const struct rq *y = &o.e[(s + j) & (o.cap - 1)];
			if (y->kind != RQ_FREE)
				put(t, y);
		}
		free(o.e);
	}
	put(t, x);
	return 0;
}

static void tab_del(struct rtab *t, size_t j)
{
	size_t m = t->cap - 1;
	for (size_t i = j;;) {
		t->e[j].kind = RQ_FREE;
		for (;;) {
			i = (i + 1) & m;
			if (t->e[i].kind == RQ_FREE) {
				t->n--;
				return;
			}
			size_t h = home(t, t->e[i].key);
			/* the entry at i may fill the hole at j unless its home lies cyclically in (j, i] */
			if (j <= i ? h <= j || h > i : h <= j && h > i)
				break;
		}
		t->e[j] = t->e[i];
		j = i;
	}
}

static void tab_clear(struct rtab *t)
{
	free(t->e);
	*t = (struct rtab){0};
}

static void inc(atomic_size_t *a, int d)
{
	if (d > 0)
		atomic_fetch_add_explicit(a, 1, memory_order_relaxed);
	else
		atomic_fetch_sub_explicit(a, 1, memory_order_relaxed);
}

/* a request to follow (kind, comm, type, rec as struct rq says) */
void rq_add(MPI_Request req, enum rq_kind kind, MPI_Comm comm, MPI_Datatype type,
                   const struct rec *rec)
{
	struct rq x = {.key = KEY(req), .kind = (uint8_t)kind, .comm = comm, .type = type,
	               .thread = ME};
	if (rec)
		x.rec = *rec;
	pthread_mutex_lock(&R.mu);
	if (!tab_add(&R.req, &x)) {
		inc(&R.nreq, 1);
		if (kind == RQ_RECV || kind == RQ_COLL)
			inc(&R.work, 1);
	}
	pthread_mutex_unlock(&R.mu);
}

/* whether a completion call has anything to look for */
int rq_pending(void)
{
	return atomic_load_explicit(&R.work, memory_order_relaxed) != 0;
}

/* entry i of R.req removed (R.mu held) */
static void rq_del(size_t i)
{
	const struct rq *e = &R.req.e[i];
	if (e->kind == RQ_RECV || e->kind == RQ_COLL || (e->kind == RQ_PRECV && e->active))
		inc(&R.work, -1);
	inc(&R.nreq, -1);
	tab_del(&R.req, i);
}

/* MPI_Request_free: the request is gone for the tracer too (a receive it had posted may
 * still complete, unseen) */
void rq_forget(MPI_Request req)
{
	if (!atomic_load_explicit(&R.nreq, memory_order_relaxed) || req == MPI_REQUEST_NULL)
		return;
	pthread_mutex_lock(&R.mu);
	size_t i = tab_find(&R.req, KEY(req));
	if (i != SIZE_MAX)
		rq_del(i);
	pthread_mutex_unlock(&R.mu);
}

/* MPI_Start(all) call c started persistent request req: a send is recorded (at c's enter),
 * a receive becomes active */
void rq_started(const struct trace_call *c, MPI_Request req)
{
	if (!atomic_load_explicit(&R.nreq, memory_order_relaxed) || req == MPI_REQUEST_NULL)
		return;
	struct rec r;
	int send = 0;
	pthread_mutex_lock(&R.mu);
	size_t i = tab_find(&R.req, KEY(req));
	if (i != SIZE_MAX) {
		struct rq *e = &R.req.e[i];
		if (e->kind == RQ_PSEND) {
			r = e->rec;
			send = 1;
		} else if (e->kind == RQ_PRECV && !e->active) {
			e->active = 1;
			inc(&R.work, 1);
		}
	}
	pthread_mutex_unlock(&R.mu);
	if (send) {
		r.func = c->func;
		r.t_g = c->t_g;
		r.t_l = c->t_l;
		trace_append(&r);
	}
}

static int cancelled(const MPI_Status *st)
{
	int flag = 0;
	return PMPI_Test_cancelled(st, &flag) == MPI_SUCCESS && flag;
}

/* After a completion call c: request old (its handle before the call) completed with status
 * st (NULL: it failed; its entry goes, nothing is recorded). */
void rq_done(const struct trace_call *c, MPI_Request old, const MPI_Status *st)
{
	if (!rq_pending() || old == MPI_REQUEST_NULL)
		return;
	struct rq e = {.kind = RQ_FREE};
	pthread_mutex_lock(&R.mu);
	size_t i = tab_find(&R.req, KEY(old));
	if (i != SIZE_MAX) {
		e = R.req.e[i];
		if (e.kind == RQ_RECV || e.kind == RQ_COLL) {
			rq_del(i);
		} else if (e.kind == RQ_PRECV && e.active) {
			R.req.e[i].active = 0; /* inactive again, kept until MPI_Request_free */
			inc(&R.work, -1);
		} else {
			e.kind = RQ_FREE; /* a persistent send, or an inactive receive: nothing */
		}
	}
	pthread_mutex_unlock(&R.mu);
	if (!st)
		return;
	if (e.kind == RQ_COLL) {
		e.rec.t2_g = c->t2_g;
		e.rec.t2_l = c->t2_l;
		trace_append(&e.rec);
	} else if ((e.kind == RQ_RECV || e.kind == RQ_PRECV) && !cancelled(st)) {
		trace_recv(c, e.comm, st, e.type);
	}
}

/* rq_done() for request i of a call completing several: rc its result; with MPI_ERR_IN_STATUS
 * each status says whether its request completed (MPI_ERR_PENDING: not yet) */
void rq_done_st(const struct trace_call *c, int rc, MPI_Request old, const MPI_Status *st)
{
	if (rc == MPI_SUCCESS)
		rq_done(c, old, st);
	else if (st->MPI_ERROR != MPI_ERR_PENDING)
		rq_done(c, old, st->MPI_ERROR == MPI_SUCCESS ? st : NULL);
}

void rq_msg_add(MPI_Message msg, MPI_Comm comm)
{
	if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC)
		return;
	struct rq x = {.key = KEY(msg), .kind = RQ_MSG, .comm = comm, .thread = ME};
	pthread_mutex_lock(&R.mu);
	tab_add(&R.msg, &x);
	pthread_mutex_unlock(&R.mu);
}

/* the communicator of a message MPI_Mprobe/Improbe gave, forgotten (MPI_COMM_NULL: unknown) */
MPI_Comm rq_msg_take(MPI_Message msg)
{
	MPI_Comm comm = MPI_COMM_NULL;
	if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC)
		return comm;
	pthread_mutex_lock(&R.mu);
	size_t i = tab_find(&R.msg, KEY(msg));
	if (i != SIZE_MAX) {
		comm = R.msg.e[i].comm;
		tab_del(&R.msg, i);
	}
	pthread_mutex_unlock(&R.mu);
	return comm;
}

void rq_coll_started(const struct trace_call *c, MPI_Request req, MPI_Comm comm, int root,
                         uint64_t bytes)
{
	struct rec r;
	trace_prepare(&r, REC_COLL, comm, root, 0, bytes);
	r.func = c->func;
	r.flags = REC_F_NB | REC_F_TID;
	r.tag = (int32_t)trace_tid(); /* the completion may come on another thread */
	r.t_g = c->t_g;
	r.t_l = c->t_l;
	rq_add(req, RQ_COLL, comm, MPI_DATATYPE_NULL, &r);
}

/* MPI_Finalize: every request forgotten */
void rq_clear(void)
{
	pthread_mutex_lock(&R.mu);
	tab_clear(&R.req);
	tab_clear(&R.msg);
	atomic_store(&R.work, 0);
	atomic_store(&R.nreq, 0);
	pthread_mutex_unlock(&R.mu);
}
