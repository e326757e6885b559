/*
 * test_private.c - hclock's messages never meet the application's.
 * Every rank posts a receive with MPI_ANY_SOURCE / MPI_ANY_TAG on the communicator it gives
 * hclock (a duplicate of MPI_COMM_WORLD, freed at the end with hclock's private one), then
 * hclock syncs (flat and h2), measures offsets and harmonizes on it. None of hclock's
 * messages may arrive there: the receive stays pending until the application's own message
 * completes it, with the application's source, tag and payload.
 */
#include <stdio.h>
#include <string.h>

#include "hclock.h"

int main(int argc, char **argv)
{
	int rank, size, fails = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm app;
	MPI_Comm_dup(MPI_COMM_WORLD, &app);

	long got[2] = {-1, -1};
	MPI_Request req;
	MPI_Status st;
	MPI_Irecv(got, 2, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, app, &req);

	hclock_emu *emu = NULL;
	hclock_clock *base, *g;
	hclock_emu_create("offset=1e-3,skew=1e-4,nodes=2,seed=5", app, &emu);
	hclock_base_create("monotonic", emu, &base);
	const char *specs[] = {"hca3/5/skampi/3", "jk/5/rtt/3", "h2(hca2/5/skampi/3,prop)"};
	for (int i = 0; i < 3; i++) {
		hclock_sync *s;
		hclock_sync_create(specs[i], &s);
		if (hclock_sync_run(s, app, base, &g)) {
			fprintf(stderr, "rank %d: %s: %s\n", rank, specs[i], hclock_last_error());
			fails++;
			g = hclock_clock_ref(base);
		}
		double off = 0, rtt = 0;
		for (int c = 1; c < size; c++)
			if (hclock_measure_offset(app, g, 0, c, 5, &off, &rtt))
				fails++;
		int64_t start, late;
		hclock_harmonize(app, g, 100000, &start, &late);
		hclock_clock_free(g);
		hclock_sync_free(s);
	}
	int done = 1, flag = 0;
	MPI_Test(&req, &done, &st);
	MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, app, &flag, MPI_STATUS_IGNORE);
	if (done || flag) {
		fprintf(stderr, "rank %d: an hclock message reached the application's communicator "
		        "(received %d, pending %d; source %d tag %d)\n", rank, done, flag,
		        done ? st.MPI_SOURCE : -1, done ? st.MPI_TAG : -1);
		fails++;
	}
	MPI_Barrier(app);
	long msg[2] = {rank, 4242};
	int to = (rank + 1) % size, from = (rank + size - 1) % size;
	MPI_Send(msg, 2, MPI_LONG, to, 77, app);
	if (!done)
		MPI_Wait(&req, &st);
	if (st.MPI_SOURCE != from || st.MPI_TAG != 77 || got[0] != from || got[1] != 4242) {
		fprintf(stderr, "rank %d: the application's message arrived as source %d tag %d "
		        "payload %ld,%ld\n", rank, st.MPI_SOURCE, st.MPI_TAG, got[0], got[1]);
		fails++;
	}
	hclock_clock_free(base);
	hclock_emu_free(emu);
	MPI_Comm_free(&app); /* frees hclock's private duplicate with it */
	int all;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("test_private: %s\n", all ? "FAILED" : "no hclock message reached the application");
	MPI_Finalize();
	return all ? 1 : 0;
}
