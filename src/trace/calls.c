/*
 * calls.c - the MPI calls libhclock_trace wraps by hand (every other one is generated:
 * trace_wrappers.c records its enter and leave only):
 *   MPI_Init, MPI_Init_thread   the sync, then tracing on (the calls themselves unrecorded)
 *   MPI_Finalize                the drift check and the trace's end (unrecorded)
 *   MPI_Abort                   recorded as ending where it was called, the records in
 *                               memory written out, one line (tracer.c, "a program that dies")
 *   sends (blocking and not)    a REC_SEND at the call's start: peer, tag, bytes, comm
 *   MPI_Recv, MPI_Sendrecv(_replace), MPI_Mrecv  a REC_RECV at the call's end, from its
 *                               status
 *   MPI_Irecv, MPI_Imrecv + the Wait and Test families  the receive recorded where it
 *                               completes (not if it was cancelled)
 *   persistent requests         MPI_*send_init: a REC_SEND at every MPI_Start/Startall of
 *                               it; MPI_Recv_init: a REC_RECV at every completion of a start
 *   MPI_Mprobe, MPI_Improbe     the message's communicator remembered for MPI_(I)mrecv
 *   MPI_Request_free            the request forgotten
 *   blocking collectives        a REC_COLL: root, bytes this process contributes
 *   nonblocking collectives     a REC_COLL (REC_F_NB) where the request completes, from
 *                               the start's enter to the completing call's leave
 *   communicator constructors   the new communicator registered (ranks to world ranks)
 * A status the program ignores (MPI_STATUS_IGNORE) is replaced by the tracer's own where a
 * receive needs it; everything the program passes goes to PMPI_ unchanged. Arguments MPI
 * calls "not significant" (the send side of an MPI_IN_PLACE gather) are never read.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "trace/tracer.h"

/* ---- requests the tracer follows --------------------------------------------------------- */

/*
 * Requests whose completion (or start) the tracer must see, by their handle; matched-probe
 * messages, by theirs, in a second table (MPI_Mrecv/Imrecv do not name the communicator).
 * Open addressing with linear probing and backward-shift deletion, one mutex for both tables
 * (programs calling MPI from several threads). A handle may be there twice: MPI may hand a
 * just-freed handle out again before the thread that completed it has looked it up; the
 * older entry is found first. `work` counts what a completion call looks for: when zero, the
 * Wait and Test families skip their bookkeeping (no copy of the handles, no lock).
 */
enum rq_kind {
	RQ_FREE,  /* an empty slot */
	RQ_RECV,  /* MPI_Irecv, MPI_Imrecv: a receive recorded where it completes, then gone */
	RQ_PRECV, /* MPI_Recv_init: a receive recorded at each completion of an active one */
	RQ_PSEND, /* MPI_*send_init: rec recorded at each start */
	RQ_COLL,  /* a nonblocking collective: rec recorded where it completes, then gone */
	RQ_MSG,   /* (message table) a message of MPI_Mprobe/Improbe: its communicator */
};

struct rq {
	uint64_t key;          /* the handle's bytes */
	uint8_t kind;          /* enum rq_kind */
	uint8_t active;        /* RQ_PRECV: started, not completed yet */
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

/* the first entry of key k (probe order: the oldest), SIZE_MAX none */
static size_t tab_find(const struct rtab *t, uint64_t k)
{
	if (!t->n)
		return SIZE_MAX;
	for (size_t i = home(t, k); t->e[i].kind != RQ_FREE; i = (i + 1) & (t->cap - 1))
		if (t->e[i].key == k)
			return i;
	return SIZE_MAX;
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
static void rq_add(MPI_Request req, enum rq_kind kind, MPI_Comm comm, MPI_Datatype type,
                   const struct rec *rec)
{
	struct rq x = {.key = KEY(req), .kind = (uint8_t)kind, .comm = comm, .type = type};
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
static int pending(void)
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
static void rq_forget(MPI_Request req)
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
static void rq_started(const struct trace_call *c, MPI_Request req)
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
static void done(const struct trace_call *c, MPI_Request old, const MPI_Status *st)
{
	if (!pending() || old == MPI_REQUEST_NULL)
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

/* done() for request i of a call completing several: rc its result; with MPI_ERR_IN_STATUS
 * each status says whether its request completed (MPI_ERR_PENDING: not yet) */
static void done_st(const struct trace_call *c, int rc, MPI_Request old, const MPI_Status *st)
{
	if (rc == MPI_SUCCESS)
		done(c, old, st);
	else if (st->MPI_ERROR != MPI_ERR_PENDING)
		done(c, old, st->MPI_ERROR == MPI_SUCCESS ? st : NULL);
}

static void msg_add(MPI_Message msg, MPI_Comm comm)
{
	if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC)
		return;
	struct rq x = {.key = KEY(msg), .kind = RQ_MSG, .comm = comm};
	pthread_mutex_lock(&R.mu);
	tab_add(&R.msg, &x);
	pthread_mutex_unlock(&R.mu);
}

/* the communicator of a message MPI_Mprobe/Improbe gave, forgotten (MPI_COMM_NULL: unknown) */
static MPI_Comm msg_take(MPI_Message msg)
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

/* ---- sizes ------------------------------------------------------------------------------- */

static uint64_t type_size(MPI_Datatype type)
{
	int sz = 0;
	if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0)
		return 0;
	return (uint64_t)sz;
}

static uint64_t nbytes(int count, MPI_Datatype type)
{
	return count > 0 ? (uint64_t)count * type_size(type) : 0;
}

/* the elements of counts[0..n) together */
static int64_t sum(const int counts[], int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += counts[i] > 0 ? counts[i] : 0;
	return s;
}

/* the processes a rank of comm exchanges with in a collective (the remote group's size on an
 * intercommunicator) */
static int peers(MPI_Comm comm)
{
	int inter = 0, n = 0;
	PMPI_Comm_test_inter(comm, &inter);
	if (inter)
		PMPI_Comm_remote_size(comm, &n);
	else
		PMPI_Comm_size(comm, &n);
	return n;
}

static int my_rank(MPI_Comm comm)
{
	int r = 0;
	PMPI_Comm_rank(comm, &r);
	return r;
}

/* ---- init and finalize ------------------------------------------------------------------- */

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		trace_init();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		trace_init();
	return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
	struct trace_call c;
	trace_abort(trace_enter(TF_MPI_Abort, &c) ? &c : NULL, errorcode);
	return PMPI_Abort(comm, errorcode);
}

int MPI_Finalize(void)
{
	trace_finalize();
	pthread_mutex_lock(&R.mu);
	tab_clear(&R.req);
	tab_clear(&R.msg);
	atomic_store(&R.work, 0);
	atomic_store(&R.nreq, 0);
	pthread_mutex_unlock(&R.mu);
	return PMPI_Finalize();
}

/* ---- sends ------------------------------------------------------------------------------- */

#define SEND(NAME, ...)                                                                   \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	trace_send(&c, comm, dest, tag, count, datatype);                                     \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_leave(&c);                                                                      \
	return rc;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Send, buf, count, datatype, dest, tag, comm)
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Ssend, buf, count, datatype, dest, tag, comm)
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Bsend, buf, count, datatype, dest, tag, comm)
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND(Rsend, buf, count, datatype, dest, tag, comm)
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
	SEND(Isend, buf, count, datatype, dest, tag, comm, request)
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	SEND(Issend, buf, count, datatype, dest, tag, comm, request)
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	SEND(Ibsend, buf, count, datatype, dest, tag, comm, request)
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	SEND(Irsend, buf, count, datatype, dest, tag, comm, request)
}

/* persistent sends: the send is recorded at each MPI_Start/Startall (rq_started) */
#define SEND_INIT(NAME)                                                                   \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(buf, count, datatype, dest, tag, comm, request);               \
	int rc = PMPI_##NAME(buf, count, datatype, dest, tag, comm, request);                 \
	trace_leave(&c);                                                                      \
	if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL) {                                     \
		struct rec r;                                                                     \
		trace_prepare(&r, REC_SEND, comm, dest, tag, nbytes(count, datatype));              \
		rq_add(*request, RQ_PSEND, comm, datatype, &r);                                   \
	}                                                                                     \
	return rc;

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Send_init)
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Ssend_init)
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Bsend_init)
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	SEND_INIT(Rsend_init)
}

/* ---- receives ---------------------------------------------------------------------------- */

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Recv, &c))
		return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		trace_recv(&c, comm, st, datatype);
	return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Sendrecv, &c))
		return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
		                     recvtype, source, recvtag, comm, status);
	trace_send(&c, comm, dest, sendtag, sendcount, sendtype);
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
	                       recvtype, source, recvtag, comm, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		trace_recv(&c, comm, st, recvtype);
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Sendrecv_replace, &c))
		return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
		                             status);
	trace_send(&c, comm, dest, sendtag, count, datatype);
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		trace_recv(&c, comm, st, datatype);
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Irecv, &c))
		return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
	int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		rq_add(*request, RQ_RECV, comm, datatype, NULL);
	return rc;
}

/* a persistent receive: recorded at each completion of a start (rq_started, done) */
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Recv_init, &c))
		return PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
	int rc = PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		rq_add(*request, RQ_PRECV, comm, datatype, NULL);
	return rc;
}

/* matched probes: the message handle remembers its communicator (recorded even when the
 * probe itself is filtered out: the receive needs it) */
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Mprobe, &c))
		return PMPI_Mprobe(source, tag, comm, message, status);
	int rc = PMPI_Mprobe(source, tag, comm, message, status);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		msg_add(*message, comm);
	return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Improbe, &c))
		return PMPI_Improbe(source, tag, comm, flag, message, status);
	int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag)
		msg_add(*message, comm);
	return rc;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Mrecv, &c))
		return PMPI_Mrecv(buf, count, type, message, status);
	MPI_Comm comm = msg_take(*message); /* before: the call frees the handle */
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Mrecv(buf, count, type, message, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
		trace_recv(&c, comm, st, type);
	return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Imrecv, &c))
		return PMPI_Imrecv(buf, count, type, message, request);
	MPI_Comm comm = msg_take(*message);
	int rc = PMPI_Imrecv(buf, count, type, message, request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
		rq_add(*request, RQ_RECV, comm, type, NULL);
	return rc;
}

/* ---- persistent starts, frees ------------------------------------------------------------ */

int MPI_Start(MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Start, &c))
		return PMPI_Start(request);
	MPI_Request req = *request;
	int rc = PMPI_Start(request);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		rq_started(&c, req);
	return rc;
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Startall, &c))
		return PMPI_Startall(count, array_of_requests);
	int rc = PMPI_Startall(count, array_of_requests);
	trace_leave(&c);
	/* a persistent request's handle stays what it was */
	for (int i = 0; rc == MPI_SUCCESS && i < count; i++)
		rq_started(&c, array_of_requests[i]);
	return rc;
}

int MPI_Request_free(MPI_Request *request)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Request_free, &c))
		return PMPI_Request_free(request);
	rq_forget(*request); /* before: once freed, MPI may hand the handle out again */
	int rc = PMPI_Request_free(request);
	trace_leave(&c);
	return rc;
}

/* ---- completion -------------------------------------------------------------------------- */

/* The handles before the call and statuses the tracer can read: small arrays on the stack. */
#define SMALL 32
struct done_ctx {
	MPI_Request old_s[SMALL], *old;
	MPI_Status st_s[SMALL], *st;
	int own_st;
};

/* statuses: the program's array or MPI_STATUSES_IGNORE (the tracer's own then), if many
 * (a call that returns one status needs none) */
static int done_begin(struct done_ctx *d, int n, const MPI_Request *reqs, MPI_Status *statuses,
                      int many)
{
	size_t m = n > 0 ? (size_t)n : 0;
	d->old = m <= SMALL ? d->old_s : malloc(m * sizeof(MPI_Request));
	d->own_st = many && statuses == MPI_STATUSES_IGNORE;
	d->st = !d->own_st ? statuses : m <= SMALL ? d->st_s : malloc(m * sizeof(MPI_Status));
	if (!d->old || (d->own_st && !d->st)) {
		if (d->old != d->old_s)
			free(d->old);
		if (d->own_st && d->st != d->st_s)
			free(d->st);
		return 0;
	}
	memcpy(d->old, reqs, m * sizeof(MPI_Request));
	return 1;
}

static void done_end(struct done_ctx *d)
{
	if (d->old != d->old_s)
		free(d->old);
	if (d->own_st && d->st != d->st_s)
		free(d->st);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Wait, &c))
		return PMPI_Wait(request, status);
	MPI_Request old = *request;
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Wait(request, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS)
		done(&c, old, st);
	return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct trace_call c;
	if (!trace_enter(TF_MPI_Test, &c))
		return PMPI_Test(request, flag, status);
	MPI_Request old = *request;
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Test(request, flag, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag)
		done(&c, old, st);
	return rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Waitall, &c))
		return PMPI_Waitall(count, array_of_requests, array_of_statuses);
	if (!pending() || !done_begin(&d, count, array_of_requests, array_of_statuses, 1)) {
		int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
		trace_leave(&c);
		return rc;
	}
	int rc = PMPI_Waitall(count, array_of_requests, d.st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
		for (int i = 0; i < count; i++)
			done_st(&c, rc, d.old[i], &d.st[i]);
	done_end(&d);
	return rc;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Testall, &c))
		return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
	if (!pending() || !done_begin(&d, count, array_of_requests, array_of_statuses, 1)) {
		int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
		trace_leave(&c);
		return rc;
	}
	int rc = PMPI_Testall(count, array_of_requests, flag, d.st);
	trace_leave(&c);
	if ((rc == MPI_SUCCESS && *flag) || rc == MPI_ERR_IN_STATUS)
		for (int i = 0; i < count; i++)
			done_st(&c, rc, d.old[i], &d.st[i]);
	done_end(&d);
	return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Waitany, &c))
		return PMPI_Waitany(count, array_of_requests, index, status);
	if (!pending() || !done_begin(&d, count, array_of_requests, NULL, 0)) {
		int rc = PMPI_Waitany(count, array_of_requests, index, status);
		trace_leave(&c);
		return rc;
	}
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Waitany(count, array_of_requests, index, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
		done(&c, d.old[*index], st);
	done_end(&d);
	return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
	struct trace_call c;
	struct done_ctx d;
	if (!trace_enter(TF_MPI_Testany, &c))
		return PMPI_Testany(count, array_of_requests, index, flag, status);
	if (!pending() || !done_begin(&d, count, array_of_requests, NULL, 0)) {
		int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
		trace_leave(&c);
		return rc;
	}
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Testany(count, array_of_requests, index, flag, st);
	trace_leave(&c);
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
		done(&c, d.old[*index], st);
	done_end(&d);
	return rc;
}

/* Waitsome and Testsome: the same arguments, the same bookkeeping */
#define SOME(NAME)                                                                        \
	struct trace_call c;                                                                  \
	struct done_ctx d;                                                                    \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices,        \
		                   array_of_statuses);                                            \
	if (!pending() ||                                                                     \
	    !done_begin(&d, incount, array_of_requests, array_of_statuses, 1)) {              \
		int rc = PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices,      \
		                     array_of_statuses);                                          \
		trace_leave(&c);                                                                  \
		return rc;                                                                        \
	}                                                                                     \
	int rc = PMPI_##NAME(incount, array_of_requests, outcount, array_of_indices, d.st);   \
	trace_leave(&c);                                                                      \
	if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)     \
		for (int i = 0; i < *outcount; i++)                                               \
			done_st(&c, rc, d.old[array_of_indices[i]], &d.st[i]);                        \
	done_end(&d);                                                                         \
	return rc;

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
	SOME(Waitsome)
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
	SOME(Testsome)
}

/* ---- collectives ------------------------------------------------------------------------- */

#define COLL(NAME, ROOT, COUNT, TYPE, ...)                                                \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_coll(&c, comm, ROOT, COUNT, TYPE);                                              \
	return rc;

int MPI_Barrier(MPI_Comm comm)
{
	COLL(Barrier, -1, 0, MPI_DATATYPE_NULL, comm)
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	COLL(Bcast, root, count, datatype, buffer, count, datatype, root, comm)
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
	COLL(Reduce, root, count, datatype, sendbuf, recvbuf, count, datatype, op, root, comm)
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
	COLL(Allreduce, -1, count, datatype, sendbuf, recvbuf, count, datatype, op, comm)
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE; /* then the send arguments are not significant */
	COLL(Gather, root, ip ? recvcount : sendcount, ip ? recvtype : sendtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, root, comm)
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Gatherv, root, ip ? 0 : sendcount, ip ? MPI_DATATYPE_NULL : sendtype, sendbuf,
	     sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm)
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int ip = recvbuf == MPI_IN_PLACE; /* then the receive arguments are not significant */
	COLL(Scatter, root, ip ? sendcount : recvcount, ip ? sendtype : recvtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, root, comm)
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
	int ip = recvbuf == MPI_IN_PLACE;
	COLL(Scatterv, root, ip ? 0 : recvcount, ip ? MPI_DATATYPE_NULL : recvtype, sendbuf,
	     sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm)
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Allgather, -1, ip ? recvcount : sendcount, ip ? recvtype : sendtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, comm)
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Allgatherv, -1, ip ? 0 : sendcount, ip ? MPI_DATATYPE_NULL : sendtype, sendbuf,
	     sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Alltoall, -1, ip ? recvcount : sendcount, ip ? recvtype : sendtype, sendbuf, sendcount,
	     sendtype, recvbuf, recvcount, recvtype, comm)
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	COLL(Reduce_scatter_block, -1, recvcount, datatype, sendbuf, recvbuf, recvcount, datatype, op,
	     comm)
}

/* the v-variants without one count: all of the process's counts together */
static int clamp(int64_t n)
{
	return n < INT_MAX ? (int)n : INT_MAX;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	int ip = sendbuf == MPI_IN_PLACE;
	COLL(Alltoallv, -1, clamp(sum(ip ? recvcounts : sendcounts, peers(comm))),
	     ip ? recvtype : sendtype, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
	     rdispls, recvtype, comm)
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	/* this process's block, like MPI_Reduce_scatter_block's recvcount */
	COLL(Reduce_scatter, -1, recvcounts[my_rank(comm)], datatype, sendbuf, recvbuf, recvcounts,
	     datatype, op, comm)
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
	COLL(Scan, -1, count, datatype, sendbuf, recvbuf, count, datatype, op, comm)
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
	COLL(Exscan, -1, count, datatype, sendbuf, recvbuf, count, datatype, op, comm)
}

/* ---- nonblocking collectives ------------------------------------------------------------- */

/* Recorded where the request completes (done): a REC_COLL with REC_F_NB from this call's
 * enter to the completing call's leave, root and bytes as the blocking one's, the
 * communicator resolved and the bytes counted now. Nothing is kept for a call filtered out
 * (its c.func is not its own index then). */
#define ICOLL(NAME, ROOT, BYTES, ...)                                                     \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_leave(&c);                                                                      \
	if (rc == MPI_SUCCESS && c.func == TF_MPI_##NAME)                                     \
		coll_started(&c, *request, comm, ROOT, BYTES);                                    \
	return rc;

static void coll_started(const struct trace_call *c, MPI_Request req, MPI_Comm comm, int root,
                         uint64_t bytes)
{
	struct rec r;
	trace_prepare(&r, REC_COLL, comm, root, 0, bytes);
	r.func = c->func;
	r.flags = REC_F_NB;
	r.t_g = c->t_g;
	r.t_l = c->t_l;
	rq_add(req, RQ_COLL, comm, MPI_DATATYPE_NULL, &r);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Ibarrier, -1, 0, comm, request)
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
	ICOLL(Ibcast, root, nbytes(count, datatype), buffer, count, datatype, root, comm, request)
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Ireduce, root, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, root,
	      comm, request)
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Iallreduce, -1, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, comm,
	      request)
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Igather, root, ip ? nbytes(recvcount, recvtype) : nbytes(sendcount, sendtype), sendbuf,
	      sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request)
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Igatherv, root, ip ? 0 : nbytes(sendcount, sendtype), sendbuf, sendcount, sendtype,
	      recvbuf, recvcounts, displs, recvtype, root, comm, request)
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
	int ip = recvbuf == MPI_IN_PLACE;
	ICOLL(Iscatter, root, ip ? nbytes(sendcount, sendtype) : nbytes(recvcount, recvtype),
	      sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request)
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
	int ip = recvbuf == MPI_IN_PLACE;
	ICOLL(Iscatterv, root, ip ? 0 : nbytes(recvcount, recvtype), sendbuf, sendcounts, displs,
	      sendtype, recvbuf, recvcount, recvtype, root, comm, request)
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Iallgather, -1, ip ? nbytes(recvcount, recvtype) : nbytes(sendcount, sendtype),
	      sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Iallgatherv, -1, ip ? 0 : nbytes(sendcount, sendtype), sendbuf, sendcount, sendtype,
	      recvbuf, recvcounts, displs, recvtype, comm, request)
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Ialltoall, -1, ip ? nbytes(recvcount, recvtype) : nbytes(sendcount, sendtype),
	      sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
	int ip = sendbuf == MPI_IN_PLACE;
	ICOLL(Ialltoallv, -1,
	      (uint64_t)sum(ip ? recvcounts : sendcounts, peers(comm)) *
	          type_size(ip ? recvtype : sendtype),
	      sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
	      request)
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Ireduce_scatter, -1, nbytes(recvcounts[my_rank(comm)], datatype), sendbuf, recvbuf,
	      recvcounts, datatype, op, comm, request)
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
	ICOLL(Ireduce_scatter_block, -1, nbytes(recvcount, datatype), sendbuf, recvbuf, recvcount,
	      datatype, op, comm, request)
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Iscan, -1, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, comm,
	      request)
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
	ICOLL(Iexscan, -1, nbytes(count, datatype), sendbuf, recvbuf, count, datatype, op, comm,
	      request)
}

/* ---- communicators ----------------------------------------------------------------------- */

#define CREATE(NAME, PARENT, NEWCOMM, ...)                                                \
	struct trace_call c;                                                                  \
	if (!trace_enter(TF_MPI_##NAME, &c))                                                  \
		return PMPI_##NAME(__VA_ARGS__);                                                  \
	int rc = PMPI_##NAME(__VA_ARGS__);                                                    \
	trace_leave(&c);                                                                      \
	trace_comm_created(PARENT, rc == MPI_SUCCESS ? *(NEWCOMM) : MPI_COMM_NULL);          \
	return rc;

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	CREATE(Comm_dup, comm, newcomm, comm, newcomm)
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	CREATE(Comm_split, comm, newcomm, comm, color, key, newcomm)
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	CREATE(Comm_split_type, comm, newcomm, comm, split_type, key, info, newcomm)
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	CREATE(Comm_create, comm, newcomm, comm, group, newcomm)
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
	CREATE(Cart_create, comm_old, comm_cart, comm_old, ndims, dims, periods, reorder, comm_cart)
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	CREATE(Cart_sub, comm, newcomm, comm, remain_dims, newcomm)
}
