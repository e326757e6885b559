/*
 * comm.h - hclock's own communicators and how ranks agree.
 *
 * Private communicator: every message hclock sends or collective it calls goes over a
 * duplicate of the user's communicator, made once (collectively), cached on the user's
 * communicator with an attribute key and freed with it. An application's receive with
 * MPI_ANY_SOURCE / MPI_ANY_TAG on its own communicator can then never take an hclock
 * message. The duplicate has MPI_ERRORS_RETURN: an MPI failure becomes HCLOCK_EMPI (where
 * the MPI library lets us see it) instead of aborting the application.
 *
 * Agreement: a process that fails keeps taking part in the schedule; at the end all ranks
 * agree on the first failure (lowest rank), and every rank returns that rank's code with
 * that rank's error line.
 */
#ifndef HCLOCK_TRANSPORT_COMM_H
#define HCLOCK_TRANSPORT_COMM_H

#include <stdint.h>

#include "transport/rank.h"
#include "util/pmpi.h"

/* The private duplicate of user (collective over user the first time, then cached). */
int comm_private(MPI_Comm user, MPI_Comm *priv);
/* The cached private duplicate, without creating one (not collective): HCLOCK_EINVAL if
 * none was made yet, naming who makes it. */
int comm_private_cached(MPI_Comm user, MPI_Comm *priv);
/* An MPI return code: 0 for MPI_SUCCESS, else HCLOCK_EMPI with a line naming call and the
 * MPI library's error string. */
int comm_check(int mpi_rc, const char *call);

/* Collective over comm: every rank returns the first failing rank's rc (0 if none failed)
 * and then holds its error line, prefixed with its rank in MPI_COMM_WORLD (unless the line
 * is itself the result of an inner level's agreement, err_agreed()). */
int comm_agree(MPI_Comm comm, int rc);

/* Collective over comm, before any exchange: all ranks must hold the same text (a
 * canonical spec and options). On a mismatch every rank returns HCLOCK_EMISMATCH with one
 * line naming what (e.g. "sync spec") rank 0 and the first differing rank hold. */
int comm_same(MPI_Comm comm, const char *what, const char *text);

/* 64-bit FNV-1a of a string (for comm_same and the tools' option check). */
uint64_t comm_hash(const char *s);

#endif
