/*
 * coll.h - what the collective patterns share (wait_nxn.c, wait_barrier.c,
 * late_broadcast.c, early_reduce.c): the time they wait for, as a stamp of its own.
 */
#ifndef HCLOCK_WAITS_COLL_H
#define HCLOCK_WAITS_COLL_H

#include "waits/patterns.h"

/* The latest (last 1) or the earliest (last 0) start among the members m[0..n-1] other
 * than the process skip (-1: none), with strict bounds: the latest true start lies between
 * the largest lower and the largest upper bound. *who: the member whose estimate it is.
 * Returns 0, or -1 when no member counts. */
int coll_start(const struct waits_coll *m, size_t n, int last, int64_t skip,
               struct waits_stamp *out, int64_t *who);

/* Every member of kind k (but the process skip) waits for the stamp t (the process who's):
 * an instance each. */
int coll_wait_for(waits *w, int self, const struct waits_coll *m, size_t n,
                  const struct waits_stamp *t, int64_t who, int64_t skip);

/* The collective m[0..n-1], if of kind k: every member waits for the last to enter (Wait at
 * N x N, Wait at Barrier). */
int coll_wait_last(waits *w, int self, const struct waits_coll *m, size_t n,
                   enum waits_coll_kind k);

#endif
