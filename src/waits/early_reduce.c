/*
 * early_reduce.c - Early Reduce (Scalasca's pattern; Geimer et al., CCPE 2010): in an
 * N-to-1 collective (reduce, gather(v) and their i-forms) the root waited for the first
 * other process to enter: w = clip(F - B, 0, D), F the earliest start among the others, B
 * the root's blocking call's enter, D its duration.
 */
#include "waits/coll.h"

static int on_collective(waits *w, int self, const struct waits_coll *m, size_t n)
{
	struct waits_stamp f;
	int64_t who;
	if (m[0].kind != WAITS_COLL_NTO1 || coll_start(m, n, 0, m[0].root, &f, &who))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (m[i].call.proc == m[0].root) {
			struct waits_instance in = {.pattern = self, .proc = m[i].call.proc,
			                            .peer = who, .func = m[i].call.func,
			                            .comm = m[i].comm};
			return waits_interval(&f, &m[i].call, &in) ? waits_emit(w, &in) : 0;
		}
	return 0;
}

const struct waits_pattern early_reduce_pattern = {
	.name = "early_reduce",
	.title = "Early Reduce",
	.what = "the root of an N-to-1 collective waited for the first other process to enter it",
	.on_collective = on_collective,
};
