/*
 * pcap_offset.c - read captures with the pcap reader and print, for the first two, the
 * interval of constant clock offsets (clock of capture 2 minus clock of capture 1, ns) that
 * every matched TCP segment allows: a segment 1->2 gives off <= recv2 - send1, a segment 2->1
 * gives off >= send2 - recv1. Exact for two clocks with no skew (two network namespaces of one
 * kernel); used by veth_pcap_test.sh as a second opinion next to hclock align.
 *
 * usage: pcap_offset CAPTURE1 CAPTURE2 [MORE...]
 * prints: "lo_ns hi_ns messages_1to2 messages_2to1"
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "align/format.h"
#include "align/trace.h"

#define PCAP (trace_format_find("pcap")) /* the format under test, from the table */

int main(int argc, char **argv)
{
	struct trace_set set = { 0 };
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	size_t up = 0, down = 0;
	const struct trace_node *a, *b;
	int64_t *recv_b, *recv_a; /* receive times by message id */
	size_t nid = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: pcap_offset CAPTURE1 CAPTURE2 [MORE...]\n");
		return 2;
	}
	if (PCAP->read((const char *const *)argv + 1, (size_t)argc - 1, &set)) {
		fprintf(stderr, "pcap_offset: %s\n", hclock_last_error());
		return 1;
	}
	a = &set.nodes[0];
	b = &set.nodes[1];
	for (size_t n = 0; n < set.nnodes; n++)
		for (size_t i = 0; i < set.nodes[n].nev; i++)
			if (set.nodes[n].ev[i].msg + 1 > nid)
				nid = set.nodes[n].ev[i].msg + 1;
	recv_a = calloc(nid, sizeof(*recv_a));
	recv_b = calloc(nid, sizeof(*recv_b));
	if (!recv_a || !recv_b)
		return 1;
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].kind == TRACE_RECV && a->ev[i].peer == 1)
			recv_a[a->ev[i].msg] = a->ev[i].time_ns;
	for (size_t i = 0; i < b->nev; i++)
		if (b->ev[i].kind == TRACE_RECV && b->ev[i].peer == 0)
			recv_b[b->ev[i].msg] = b->ev[i].time_ns;
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].kind == TRACE_SEND && a->ev[i].peer == 1) {
			int64_t d = recv_b[a->ev[i].msg] - a->ev[i].time_ns;

			if (d < hi)
				hi = d;
			up++;
		}
	for (size_t i = 0; i < b->nev; i++)
		if (b->ev[i].kind == TRACE_SEND && b->ev[i].peer == 0) {
			int64_t d = b->ev[i].time_ns - recv_a[b->ev[i].msg];

			if (d > lo)
				lo = d;
			down++;
		}
	printf("%" PRId64 " %" PRId64 " %zu %zu\n", lo, hi, up, down);
	free(recv_a);
	free(recv_b);
	PCAP->release(&set);
	return 0;
}
