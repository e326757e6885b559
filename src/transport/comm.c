/* comm.c - the private communicator, MPI error codes, agreement (comm.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock.h"
#include "transport/comm.h"
#include "transport/yield.h"
#include "util/err.h"

/* the attribute: hclock's duplicate, and the communicator it belongs to */
struct priv_attr {
	MPI_Comm user, priv;
};

#ifndef HCLOCK_SMPI
static int keyval = MPI_KEYVAL_INVALID;

/* The user's communicator is being freed (or MPI finalized): free our duplicate with it.
 * Only for the communicator it was attached to: SimGrid SMPI also calls this when freeing
 * communicators split from the duplicate. */
static int delete_priv(MPI_Comm comm, int key, void *attr, void *extra)
{
	(void)key;
	(void)extra;
	struct priv_attr *a = attr;
	if (comm != a->user)
		return MPI_SUCCESS;
	int fin = 0;
	PMPI_Finalized(&fin);
	if (!fin)
		PMPI_Comm_free(&a->priv);
	free(a);
	return MPI_SUCCESS;
}
#endif

int comm_check(int mpi_rc, const char *call)
{
	if (mpi_rc == MPI_SUCCESS)
		return 0;
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (PMPI_Error_string(mpi_rc, s, &n) != MPI_SUCCESS)
		snprintf(s, sizeof(s), "MPI error %d", mpi_rc);
	return err_set(HCLOCK_EMPI, "%s failed: %s", call, s);
}

#ifdef HCLOCK_SMPI
/* SimGrid SMPI runs every simulated rank in one process without privatized globals (the
 * fast mode the scale study uses), and its communicators, attributes included, are objects
 * shared by all ranks: an attribute cannot hold a per-rank value there. The cache is then a
 * table indexed by the rank in MPI_COMM_WORLD (one communicator per rank: the last one
 * hclock was given; the tools only use MPI_COMM_WORLD). */
static struct priv_attr *smpi_cache;

/* this rank's cached duplicate of user: 1 found, 0 none (quiet: no error line) */
static int lookup(MPI_Comm user, MPI_Comm *priv)
{
	int w;
	PMPI_Comm_rank(MPI_COMM_WORLD, &w);
	if (!smpi_cache || smpi_cache[w].user != user)
		return 0;
	*priv = smpi_cache[w].priv;
	return 1;
}

int comm_private(MPI_Comm user, MPI_Comm *priv)
{
	int w, n, rc;
	PMPI_Comm_rank(MPI_COMM_WORLD, &w);
	PMPI_Comm_size(MPI_COMM_WORLD, &n);
	if (lookup(user, priv))
		return 0;
	if (!smpi_cache && !(smpi_cache = calloc((size_t)n, sizeof(*smpi_cache))))
		return err_set(HCLOCK_ENOMEM, "out of memory");
	if ((rc = comm_check(PMPI_Comm_dup(user, &smpi_cache[w].priv), "MPI_Comm_dup")))
		return rc;
	PMPI_Comm_set_errhandler(smpi_cache[w].priv, MPI_ERRORS_RETURN);
	smpi_cache[w].user = user;
	*priv = smpi_cache[w].priv;
	return 0;
}
#else
/* the duplicate attached to user: 1 found, 0 none (quiet: no error line) */
static int lookup(MPI_Comm user, MPI_Comm *priv)
{
	int found = 0;
	struct priv_attr *a = NULL;
	if (keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_get_attr(user, keyval, &a, &found);
	if (!found || !a || a->user != user)
		return 0;
	*priv = a->priv;
	return 1;
}

int comm_private(MPI_Comm user, MPI_Comm *priv)
{
	int rc;
	if (keyval == MPI_KEYVAL_INVALID &&
	    (rc = comm_check(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_priv, &keyval,
	                                            NULL), "MPI_Comm_create_keyval")))
		return rc;
	if (lookup(user, priv))
		return 0;
	struct priv_attr *a = malloc(sizeof(*a));
	if (!a)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	/* collective: every rank of user gets here the first time (no cache anywhere yet) */
	a->user = user;
	if ((rc = comm_check(PMPI_Comm_dup(user, &a->priv), "MPI_Comm_dup")))
		goto err;
	PMPI_Comm_set_errhandler(a->priv, MPI_ERRORS_RETURN);
	if ((rc = comm_check(PMPI_Comm_set_attr(user, keyval, a), "MPI_Comm_set_attr")))
		goto err_dup;
	*priv = a->priv;
	return 0;
err_dup:
	PMPI_Comm_free(&a->priv);
err:
	free(a);
	return rc;
}
#endif

int comm_private_cached(MPI_Comm user, MPI_Comm *priv)
{
	if (!lookup(user, priv))
		return err_set(HCLOCK_EINVAL, "this communicator has no hclock private communicator "
		                              "yet; call hclock_sync_run on it first (collective)");
	return 0;
}

int comm_agree(MPI_Comm comm, int rc)
{
	int r, p, first;
	PMPI_Comm_rank(comm, &r);
	PMPI_Comm_size(comm, &p);
	int mine = rc ? r : p;
	int mrc = yield_allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
	if (mrc != MPI_SUCCESS)
		return rc ? rc : comm_check(mrc, "MPI_Allreduce (agreeing on the result)");
	if (first == p)
		return 0;
	struct {
		int32_t code;
		char line[500];
	} msg;
	memset(&msg, 0, sizeof(msg));
	if (r == first) {
		int w;
		const char *line = hclock_last_error();
		PMPI_Comm_rank(MPI_COMM_WORLD, &w);
		msg.code = rc;
		/* a line agreed on by an inner level already names its rank */
		if (err_agreed())
			snprintf(msg.line, sizeof(msg.line), "%s", line);
		else
			snprintf(msg.line, sizeof(msg.line), "rank %d: %s", w, line);
	}
	mrc = yield_bcast(&msg, (int)sizeof(msg), MPI_BYTE, first, comm);
	if (mrc != MPI_SUCCESS)
		return rc ? rc : comm_check(mrc, "MPI_Bcast (agreeing on the result)");
	msg.line[sizeof(msg.line) - 1] = 0;
	rc = err_set(msg.code, "%s", msg.line);
	err_mark_agreed();
	return rc;
}

uint64_t comm_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int comm_same(MPI_Comm comm, const char *what, const char *text)
{
	int r, p, first;
	PMPI_Comm_rank(comm, &r);
	PMPI_Comm_size(comm, &p);
	uint64_t h = comm_hash(text), h0 = h;
	int rc = comm_check(PMPI_Bcast(&h0, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast");
	if (rc)
		return rc;
	int mine = h != h0 ? r : p;
	if ((rc = comm_check(yield_allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm),
	                     "MPI_Allreduce")))
		return rc;
	if (first == p)
		return 0;
	char t0[160], t1[160];
	snprintf(t0, sizeof(t0), "%s", r == 0 ? text : "");
	snprintf(t1, sizeof(t1), "%s", r == first ? text : "");
	PMPI_Bcast(t0, (int)sizeof(t0), MPI_CHAR, 0, comm);
	PMPI_Bcast(t1, (int)sizeof(t1), MPI_CHAR, first, comm);
	t0[sizeof(t0) - 1] = t1[sizeof(t1) - 1] = 0;
	int w0 = 0, wf = 0, w;
	PMPI_Comm_rank(MPI_COMM_WORLD, &w);
	int both[2] = {r == 0 ? w : 0, r == first ? w : 0}, wboth[2];
	PMPI_Allreduce(both, wboth, 2, MPI_INT, MPI_MAX, comm);
	w0 = wboth[0];
	wf = wboth[1];
	return err_set(HCLOCK_EMISMATCH, "the ranks were given different %s: rank %d has '%s', "
	               "rank %d has '%s'; give every rank the same", what, w0, t0, wf, t1);
}
