/*
 * merge.h - the tracer's raw files read back and put together, MPI-free: what
 * `hclock trace` does after the program ended (and `hclock trace --convert DIR` after a
 * program that died).
 *
 * Loading takes what is complete in each DIR/raw/rank.R (record.h): records up to the last
 * whole one, the trailer when present. Messages are paired first-in first-out per channel
 * (sender, receiver, communicator id, tag), MPI's non-overtaking rule: sends in the order
 * they started, receives in the order they completed.
 */
#ifndef HCLOCK_TRACE_MERGE_H
#define HCLOCK_TRACE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "util/record.h"

/* One process's raw file, loaded. */
struct rec_proc {
	struct rec_header h;
	char **names;          /* h.nfuncs function names */
	struct rec *rec;       /* the records, in the order they were made (no REC_DROP, no
	                          REC_BOUND) */
	size_t nrec;
	struct rec *bound;     /* the clock's bound samples (REC_BOUND with bounds known) */
	size_t nbound;
	int have_trailer;      /* 0: the program ended before MPI_Finalize (or the file is cut) */
	uint64_t dropped;      /* records the tracer dropped: the trailer's count, or without
	                          one the sum of the REC_DROP records read */
	struct rec_trailer tr;
	size_t file_bytes;
};

/* The processes of one traced run. */
struct rec_set {
	int size;              /* processes (from rank 0's header) */
	struct rec_proc *p;  /* p[r]; p[r].nrec == 0 and no header when rank r left no file */
	int missing;           /* ranks without a readable file */
	int64_t t0_g;          /* the earliest global time of any record, ns */
};

/* A message: the send record rec[si] of process src and the receive rec[ri] of dst. */
struct rec_msg {
	int src, dst;
	size_t si, ri;
};

/*
 * Errors: the functions that can fail return 0 or a negative HCLOCK_E* code (hclock_api.h)
 * with one line in hclock_last_error().
 */

/* Load DIR/raw/rank.*. Returns 0, or HCLOCK_EIO (no readable file at all) or HCLOCK_ENOMEM;
 * a file that cannot be read counts as missing. */
int rec_load(const char *dir, struct rec_set *ts);
void rec_set_free(struct rec_set *ts);

/* Pair sends and receives. *unmatched counts records left without a partner (a program that
 * died, a receive of a filtered send, an intercommunicator). Returns 0 or HCLOCK_ENOMEM. */
int rec_match(const struct rec_set *ts, struct rec_msg **msgs, size_t *nmsgs,
              uint64_t *unmatched);

/* Messages received before they were sent on the global clock (receive end < send start). */
uint64_t rec_inversions(const struct rec_set *ts, const struct rec_msg *m, size_t n);

/* The order of each message (send before receive) by the clock's bounds the records carry
 * (record.h: a send's latest, a receive's earliest time): proven when the send's latest lies
 * before the receive's earliest; else shown by the estimate only (the timestamps), or with
 * no bounds at either end, not known. Counts into *proven, *estimated, *unknown; with ord
 * (n entries, or NULL) each message's: 1 proven, 0 estimated, -1 not known. */
void rec_order(const struct rec_set *ts, const struct rec_msg *m, size_t n, uint64_t *proven,
               uint64_t *estimated, uint64_t *unknown, signed char *ord);

/* The name of record r's function in process p ("?" if out of range). */
const char *rec_func_name(const struct rec_proc *p, const struct rec *r);

#endif
