/*
 * test_flatten_bcast.c - a two-level nested clock model, flattened on rank 0, broadcast and
 * rebuilt on every rank, is bit-exact: the same bytes when flattened again and the same
 * reading for the same base time. Then the same through prop inside h2 on a real sync:
 * every rank of a node ends with its leader's clock, byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "hclock.h"

static int fails;
#define CHECK(c, ...)                                                       \
	do {                                                                    \
		if (!(c)) {                                                         \
			fprintf(stderr, "rank %d: %s:%d: %s: ", rank, __FILE__, __LINE__, #c); \
			fprintf(stderr, __VA_ARGS__);                                   \
			fputc('\n', stderr);                                            \
			fails++;                                                        \
		}                                                                   \
	} while (0)

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	hclock_clock *base, *inner = NULL, *outer = NULL, *back = NULL;
	void *buf = NULL, *again = NULL;
	size_t len = 0, len2 = 0;
	int64_t n = 0;
	hclock_base_create("monotonic", NULL, &base);
	if (rank == 0) {
		int64_t t = hclock_now(base);
		hclock_model_linear(base, t, 123456.789, 3.25e-5, &inner);   /* inter-node level */
		hclock_model_linear(inner, t + 17, -42.125, -1.5e-7, &outer); /* intra level */
		hclock_clock_flatten(outer, &buf, &len);
		n = (int64_t)len;
	}
	MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (rank)
		buf = malloc((size_t)n);
	MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
	CHECK(hclock_clock_unflatten(buf, (size_t)n, NULL, &back) == 0, "%s", hclock_last_error());
	CHECK(back && hclock_clock_flatten(back, &again, &len2) == 0, "flatten again");
	CHECK(again && len2 == (size_t)n && !memcmp(buf, again, len2), "bytes differ");
	/* the same base reading gives the same global reading on every rank */
	int64_t probe = 1700000000123456789LL, mine = back ? clock_apply_chain(back, probe) : 0, r0;
	r0 = mine;
	MPI_Bcast(&r0, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	CHECK(mine == r0, "reading %lld vs rank 0's %lld", (long long)mine, (long long)r0);
	free(buf);
	free(again);
	hclock_clock_free(back);
	hclock_clock_free(outer);
	hclock_clock_free(inner);

	/* prop inside h2 under emulation: 2 virtual nodes; each rank's clock equals its leader's */
	hclock_emu *emu;
	hclock_clock *ebase, *g;
	hclock_sync *s;
	hclock_emu_create("offset=1,skew=1e-4,nodes=2,seed=5", MPI_COMM_WORLD, &emu);
	hclock_base_create(NULL, emu, &ebase);
	hclock_sync_create("h2(hca3/10/skampi/5,hca3/10/skampi/5)", &s);
	int rc = hclock_sync_run(s, MPI_COMM_WORLD, ebase, &g);
	CHECK(rc == 0, "%s", hclock_last_error());
	if (!rc) {
		/* the intra level nests on the inter level: leaders' non-root clocks are 2 deep */
		hclock_clock_flatten(g, &buf, &len);
		CHECK(len > 0, "empty");
		free(buf);
		hclock_clock_free(g);
	}
	hclock_sync_free(s);
	hclock_sync_create("h2(hca3/10/skampi/5,prop)", &s);
	rc = hclock_sync_run(s, MPI_COMM_WORLD, ebase, &g);
	CHECK(rc == 0, "%s", hclock_last_error());
	if (!rc) {
		MPI_Comm node;
		int nr;
		MPI_Comm_split(MPI_COMM_WORLD, hclock_emu_node(emu), rank, &node);
		MPI_Comm_rank(node, &nr);
		hclock_clock_flatten(g, &buf, &len);
		int64_t ln = (int64_t)len, lead = ln;
		MPI_Bcast(&lead, 1, MPI_INT64_T, 0, node);
		void *lb = malloc((size_t)lead);
		if (nr == 0)
			memcpy(lb, buf, len);
		MPI_Bcast(lb, (int)lead, MPI_BYTE, 0, node);
		CHECK(lead == ln && !memcmp(lb, buf, len), "prop'd clock differs from the leader's");
		free(lb);
		free(buf);
		MPI_Comm_free(&node);
		hclock_clock_free(g);
	}
	hclock_sync_free(s);
	hclock_clock_free(ebase);
	hclock_emu_free(emu);
	hclock_clock_free(base);

	int all;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("test_flatten_bcast: %s (%d failures on %d ranks)\n", all ? "FAILED" : "passed",
		       all, size);
	MPI_Finalize();
	return all ? 1 : 0;
}
