/*
 * wait_nxn.c - Wait at N x N (Scalasca's pattern; Geimer et al., "The Scalasca performance
 * toolset architecture", CCPE 2010): a process waited in an all-to-all collective for the last
 * one to enter it (allreduce, alltoall(v), allgather(v), reduce_scatter and their i-forms).
 * Each member waits w = clip(E - B, 0, D): E the last member's start (its enter, or its
 * i-call's), B its own blocking call's enter, D that call's duration.
 */
#include "waits/coll.h"

static int on_collective(waits *w, int self, const struct waits_coll *m, size_t n)
{
	return coll_wait_last(w, self, m, n, WAITS_COLL_NXN);
}

const struct waits_pattern wait_nxn_pattern = {
	.name = "wait_nxn",
	.title = "Wait at N x N",
	.what = "a process waited in an all-to-all collective for the last one to enter it (allreduce, alltoall(v), allgather(v), reduce_scatter and their i-forms)",
	.on_collective = on_collective,
};
