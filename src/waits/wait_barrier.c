/*
 * wait_barrier.c - Wait at Barrier (Scalasca's pattern; Geimer et al., "The Scalasca
 * performance toolset architecture", CCPE 2010): a process waited in a barrier for the last
 * one to enter it. Each member waits w = clip(E - B, 0, D): E the last member's start (its
 * enter, or its i-call's), B its own blocking call's enter, D that call's duration.
 */
#include "waits/coll.h"

static int on_collective(waits *w, int self, const struct waits_coll *m, size_t n)
{
	return coll_wait_last(w, self, m, n, WAITS_COLL_BARRIER);
}

const struct waits_pattern wait_barrier_pattern = {
	.name = "wait_barrier",
	.title = "Wait at Barrier",
	.what = "a process waited in a barrier for the last one to enter it",
	.on_collective = on_collective,
};
