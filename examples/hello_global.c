/*
 * hello_global.c - synchronize, then print this rank's global time and, under emulation
 * (HCLOCK_EMULATE=skew=1e-4,offset=1), its true error. Build after `cmake --install`:
 *   mpicc hello_global.c $(pkg-config --cflags --libs hclock) -o hello_global
 */
#include <stdio.h>

#include <hclock.h>

int main(int argc, char **argv)
{
	hclock_emu *emu = NULL;
	hclock_clock *base = NULL, *global = NULL;
	hclock_sync *sync = NULL;
	int rank, rc;
	double err;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if ((rc = hclock_emu_create(NULL, MPI_COMM_WORLD, &emu)) ||
	    (rc = hclock_base_create("monotonic", emu, &base)) ||
	    (rc = hclock_sync_create("hca3/50/skampi/10", &sync)) ||
	    (rc = hclock_sync_run(sync, MPI_COMM_WORLD, base, &global))) {
		if (rank == 0)
			fprintf(stderr, "hello_global: %s\n", hclock_last_error());
		MPI_Finalize();
		return 1;
	}
	if (emu && hclock_true_error(global, emu, &err) == 0)
		printf("rank %d: global time %lld ns, true error %.0f ns\n", rank,
		       (long long)hclock_now(global), err);
	else
		printf("rank %d: global time %lld ns\n", rank, (long long)hclock_now(global));
	hclock_clock_free(global);
	hclock_clock_free(base);
	hclock_sync_free(sync);
	hclock_emu_free(emu);
	MPI_Finalize();
	return 0;
}
