/*
 * nblink_mpi.c - the nonblocking link over MPI (transport/nblink.h). Every call is PMPI_*:
 * inside libhclock_trace the MPI_* names are the tracer's wrappers, and the clock's own
 * messages are not the program's.
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
#include "transport/nblink.h"
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
	MPI_Comm comm;
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

static void ml_destroy(struct nblink *l)
{
	struct mpi_link *m = MPI_LINK(l);
	int fin = 0;
	PMPI_Finalized(&fin);
	if (!fin) {
		if (!m->stopped)
			ml_quiesce(l);
		for (;;) { /* take in what is still on the way */
			int flag = 0;
			MPI_Status status;
			if (PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &flag, &status) !=
			            MPI_SUCCESS || !flag)
				break;
			PMPI_Recv(m->rbuf, NBLINK_MAX_MSG, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG,
			          m->comm, MPI_STATUS_IGNORE);
		}
	}
	free(m);
}

static const struct nblink_ops mpi_ops = {
	.send = ml_send, .poll = ml_poll, .quiesce = ml_quiesce, .destroy = ml_destroy,
};

int nblink_mpi_create(MPI_Comm comm, struct nblink **out)
{
	struct mpi_link *m = fault_calloc(1, sizeof(*m));
	*out = NULL;
	if (!m)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	m->l.ops = &mpi_ops;
	m->comm = comm;
	m->rreq = MPI_REQUEST_NULL;
	for (int i = 0; i < NSLOTS; i++)
		m->slots[i].req = MPI_REQUEST_NULL;
	*out = &m->l;
	return 0;
}
