/*
 * nblink_mpi.c - the nonblocking link over MPI (transport/nblink.h, nblink_mpi.h). Every
 * call is PMPI_*: inside libhclock_trace the MPI_* names are the tracer's wrappers, and the
 * clock's own messages and set-up are not the program's.
 *
 * One receive of any source and tag is posted at a time, re-posted lazily at the next poll
 * (the caller timestamps a message right after the poll that returned it: nothing is done
 * in between). Sends go from a ring of NSLOTS copies, each slot reused once its send
 * completed (small messages: eager, done in microseconds).
 */
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "transport/comm.h"
#include "transport/nblink_mpi.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/fault.h"

#define NSLOTS 16

struct slot {
	MPI_Request req;
	unsigned char buf[NBLINK_MAX_MSG];
};

struct mpi_link {
	struct nblink l;
	MPI_Comm comm;         /* the link's own duplicate of the run's communicator */
	MPI_Comm gcomm;        /* its group (nblink_group), or MPI_COMM_NULL */
	MPI_Win win;           /* the group's shared memory, or MPI_WIN_NULL */
	int closed;
	MPI_Request rreq;      /* the posted receive (MPI_REQUEST_NULL: post at the next poll) */
	unsigned char rbuf[NBLINK_MAX_MSG];
	int stopped;
	int next;              /* the slot tried first */
	struct slot slots[NSLOTS];
};

#define MPI_LINK(p) container_of(p, struct mpi_link, l)

static int ml_send(struct nblink *l, int peer, int tag, const void *msg, size_t len)
{
	struct mpi_link *m = MPI_LINK(l);
	if (len > NBLINK_MAX_MSG)
		return err_set(HCLOCK_EINVAL, "a link message of %zu bytes (at most %d)", len,
		               NBLINK_MAX_MSG);
	for (int i = 0; i < NSLOTS; i++) {
		struct slot *s = &m->slots[(m->next + i) % NSLOTS];
		int done = 1;
		if (s->req != MPI_REQUEST_NULL) {
			int rc = comm_check(PMPI_Test(&s->req, &done, MPI_STATUS_IGNORE),
			                    "MPI_Test (continuous clock)");
			if (rc)
				return rc;
		}
		if (!done)
			continue;
		m->next = (m->next + i + 1) % NSLOTS;
		memcpy(s->buf, msg, len);
		return comm_check(PMPI_Isend(s->buf, (int)len, MPI_BYTE, peer, tag, m->comm, &s->req),
		                  "MPI_Isend (continuous clock)");
	}
	return 1;
}

static int ml_poll(struct nblink *l, int *peer, int *tag, void *buf, size_t cap, size_t *len)
{
	struct mpi_link *m = MPI_LINK(l);
	int rc, flag = 0, count = 0;
	MPI_Status status;
	if (m->stopped)
		return 0;
	if (m->rreq == MPI_REQUEST_NULL &&
	    (rc = comm_check(PMPI_Irecv(m->rbuf, NBLINK_MAX_MSG, MPI_BYTE, MPI_ANY_SOURCE,
	                                MPI_ANY_TAG, m->comm, &m->rreq),
	                     "MPI_Irecv (continuous clock)")))
		return rc;
	if ((rc = comm_check(PMPI_Test(&m->rreq, &flag, &status), "MPI_Test (continuous clock)")))
		return rc;
	if (!flag)
		return 0;
	PMPI_Get_count(&status, MPI_BYTE, &count);
	*peer = status.MPI_SOURCE;
	*tag = status.MPI_TAG;
	*len = (size_t)count < cap ? (size_t)count : cap;
	memcpy(buf, m->rbuf, *len);
	return 1;
}

static void cancel(MPI_Request *r)
{
	if (*r == MPI_REQUEST_NULL)
		return;
	PMPI_Cancel(r);
	yield_pwait_on(r, "MPI_Wait for a cancelled receive of the continuous clock", -1,
	               MPI_COMM_NULL);
}

/* sends complete (they are small and eager) or are let go */
static void finish_send(MPI_Request *r)
{
	int done = 0;
	if (*r == MPI_REQUEST_NULL)
		return;
	for (int i = 0; i < 1000 && !done; i++)
		PMPI_Test(r, &done, MPI_STATUS_IGNORE);
	if (!done)
		PMPI_Request_free(r);
}

static void ml_quiesce(struct nblink *l)
{
	struct mpi_link *m = MPI_LINK(l);
	cancel(&m->rreq);
	for (int i = 0; i < NSLOTS; i++)
		finish_send(&m->slots[i].req);
	m->stopped = 1;
}

/* take in what is still on the way (nothing is sent to this process any more) */
static void drain(struct mpi_link *m)
{
	for (;;) {
		int flag = 0;
		MPI_Status status;
		if (PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &flag, &status) != MPI_SUCCESS ||
		    !flag)
			break;
		PMPI_Recv(m->rbuf, NBLINK_MAX_MSG, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, m->comm,
		          MPI_STATUS_IGNORE);
	}
}

static void ml_destroy(struct nblink *l)
{
	struct mpi_link *m = MPI_LINK(l);
	int fin = 0;
	PMPI_Finalized(&fin);
	if (!fin && !m->closed) { /* alone: the communicator and the group stay with the run */
		if (!m->stopped)
			ml_quiesce(l);
		drain(m);
	}
	free(m);
}

static int ml_agree(struct nblink *l, int rc)
{
	return comm_agree(MPI_LINK(l)->comm, rc);
}

static int ml_allgather(struct nblink *l, const void *mine, size_t len, void *all)
{
	return comm_check(PMPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE,
	                                 MPI_LINK(l)->comm), "MPI_Allgather (continuous clock)");
}

static int ml_recv(struct nblink *l, int peer, int tag, void *buf, size_t len)
{
	struct mpi_link *m = MPI_LINK(l);
	MPI_Request r;
	int src = peer < 0 ? MPI_ANY_SOURCE : peer;
	int rc = comm_check(PMPI_Irecv(buf, (int)len, MPI_BYTE, src, tag, m->comm, &r),
	                    "MPI_Irecv (continuous clock)");
	if (!rc)
		rc = comm_check(yield_pwait_on(&r, "MPI_Recv of the continuous clock's set-up message "
		                               "from", src, m->comm), "MPI_Recv (continuous clock)");
	return rc;
}

static int ml_group(struct nblink *l, int color, int key, size_t size, void **mem, int *members,
                    int *on_node)
{
	struct mpi_link *m = MPI_LINK(l);
	*mem = NULL;
	*members = *on_node = 0;
	if (PMPI_Comm_split(m->comm, color < 0 ? MPI_UNDEFINED : color, key, &m->gcomm) !=
	    MPI_SUCCESS)
		return err_set(HCLOCK_EMPI, "MPI_Comm_split (continuous clock) failed");
	if (m->gcomm == MPI_COMM_NULL)
		return 0;
	MPI_Comm node;
	int grank;
	PMPI_Comm_size(m->gcomm, members);
	PMPI_Comm_rank(m->gcomm, &grank);
	PMPI_Comm_split_type(m->gcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	PMPI_Comm_size(node, on_node);
	PMPI_Comm_free(&node);
	if (*on_node != *members)
		return HCLOCK_EUNSUPP;
	void *ptr = NULL;
	int rc = comm_check(PMPI_Win_allocate_shared(grank == 0 ? (MPI_Aint)size : 0, 8,
	                                             MPI_INFO_NULL, m->gcomm, &ptr, &m->win),
	                    "MPI_Win_allocate_shared");
	if (rc)
		return rc;
	MPI_Aint qs;
	int du;
	rc = comm_check(PMPI_Win_shared_query(m->win, 0, &qs, &du, &ptr), "MPI_Win_shared_query");
	*mem = ptr;
	return rc;
}

static void ml_group_barrier(struct nblink *l)
{
	struct mpi_link *m = MPI_LINK(l);
	MPI_Request r;
	if (m->gcomm != MPI_COMM_NULL && PMPI_Ibarrier(m->gcomm, &r) == MPI_SUCCESS)
		yield_pwait_on(&r, "MPI_Barrier of the continuous clock's followers", -1,
		               MPI_COMM_NULL);
}

static void ml_close(struct nblink *l)
{
	struct mpi_link *m = MPI_LINK(l);
	if (!m->stopped)
		ml_quiesce(l);
	drain(m);
	if (m->win != MPI_WIN_NULL)
		PMPI_Win_free(&m->win);
	if (m->gcomm != MPI_COMM_NULL)
		PMPI_Comm_free(&m->gcomm);
	PMPI_Comm_free(&m->comm);
	m->closed = 1;
}

static const struct nblink_ops mpi_ops = {
	.send = ml_send, .poll = ml_poll, .quiesce = ml_quiesce, .destroy = ml_destroy,
	.agree = ml_agree, .allgather = ml_allgather, .recv = ml_recv, .group = ml_group,
	.group_barrier = ml_group_barrier, .close = ml_close,
};

int nblink_mpi_create(MPI_Comm comm, struct nblink **out)
{
	struct mpi_link *m = fault_calloc(1, sizeof(*m));
	int rc = m ? 0 : err_set(HCLOCK_ENOMEM, "out of memory");
	*out = NULL;
	if ((rc = comm_agree(comm, rc))) /* before any other collective */
		goto err;
	m->l.ops = &mpi_ops;
	m->gcomm = MPI_COMM_NULL;
	m->win = MPI_WIN_NULL;
	m->rreq = MPI_REQUEST_NULL;
	for (int i = 0; i < NSLOTS; i++)
		m->slots[i].req = MPI_REQUEST_NULL;
	rc = comm_check(PMPI_Comm_dup(comm, &m->comm), "MPI_Comm_dup (continuous clock)");
	if ((rc = comm_agree(comm, rc)))
		goto err;
	PMPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
	PMPI_Comm_rank(m->comm, &m->l.rank);
	PMPI_Comm_size(m->comm, &m->l.size);
	*out = &m->l;
	return 0;
err:
	free(m);
	return rc;
}
