/*
 * late_broadcast.c - Late Broadcast (Scalasca's pattern; Geimer et al., CCPE 2010): in a
 * 1-to-N collective (bcast, scatter(v) and their i-forms) a process other than the root
 * waited for the root to enter: w = clip(R - B, 0, D), R the root's start, B the process's
 * blocking call's enter, D its duration.
 */
#include "waits/coll.h"

static int on_collective(waits *w, int self, const struct waits_coll *m, size_t n)
{
	if (m[0].kind != WAITS_COLL_1TON)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (m[i].call.proc == m[0].root)
			return coll_wait_for(w, self, m, n, &m[i].start, m[0].root, m[0].root);
	return 0; /* the root is no member: nothing to wait for */
}

const struct waits_pattern late_broadcast_pattern = {
	.name = "late_broadcast",
	.title = "Late Broadcast",
	.what = "a process waited in a 1-to-N collective for the root to enter it",
	.on_collective = on_collective,
};
