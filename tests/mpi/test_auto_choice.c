/*
 * test_auto_choice.c - hclock_sync_auto_choice on every process of an h2(auto(...),prop) sync
 * over emulated nodes (HCLOCK_EMULATE, e.g. nodes=2): each process gets the choice rank 0
 * reports, also the processes that are not their node's leader (which run only prop); a
 * spec without auto(...) gives HCLOCK_EUNSUPP everywhere (the check bites: a process
 * without the choice fails the first part).
 *   mpirun -np 4 test_auto_choice
 * Prints "test_auto_choice: ok" on rank 0 when every process passed; exits 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, fails = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	hclock_emu *emu = NULL;
	hclock_clock *base = NULL, *g = NULL;
	const char *emuspec = getenv("HCLOCK_EMULATE");
	if (emuspec && hclock_emu_create(emuspec, MPI_COMM_WORLD, &emu)) {
		fprintf(stderr, "rank %d: %s\n", rank, hclock_last_error());
		fails++;
	}
	if (hclock_base_create("monotonic", emu, &base)) {
		fprintf(stderr, "rank %d: %s\n", rank, hclock_last_error());
		fails++;
	}
	const char *specs[2] = {"h2(auto(0.05s),prop)", "h2(hca3/10/hull/5,prop)"};
	for (int k = 0; k < 2 && base; k++) {
		hclock_sync *s = NULL;
		struct hclock_sync_auto a, all_spec;
		memset(&a, 0, sizeof(a));
		int rc = hclock_sync_create(specs[k], &s);
		if (!rc)
			rc = hclock_sync_run(s, MPI_COMM_WORLD, base, &g);
		int crc = rc ? -1 : hclock_sync_auto_choice(s, &a);
		/* rank 0's choice, to compare with */
		all_spec = a;
		MPI_Bcast(&all_spec, (int)sizeof(all_spec), MPI_BYTE, 0, MPI_COMM_WORLD);
		int ok = k == 0 ? rc == 0 && crc == 0 && !strcmp(a.spec, all_spec.spec) &&
		                      a.nfit == all_spec.nfit && a.npingpongs == all_spec.npingpongs
		                : rc == 0 && crc == HCLOCK_EUNSUPP;
		if (!ok) {
			fprintf(stderr, "rank %d: %s: run %d, choice %d (%s), rank 0's '%s': expected %s\n",
			        rank, specs[k], rc, crc, crc ? hclock_last_error() : a.spec,
			        all_spec.spec, k == 0 ? "rank 0's choice on every process"
			                              : "HCLOCK_EUNSUPP (no auto level)");
			fails++;
		}
		hclock_clock_free(g);
		g = NULL;
		hclock_sync_free(s);
	}
	int all;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf(all ? "test_auto_choice: %d failures\n" : "test_auto_choice: ok\n", all);
	hclock_clock_free(base);
	hclock_emu_free(emu);
	MPI_Finalize();
	return all ? 1 : 0;
}
