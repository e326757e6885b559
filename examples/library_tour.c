/*
 * library_tour.c - the library in one program (docs/library.md shows it whole): synchronize
 * with strict bounds, read the global clock with its bounds, start all processes at one
 * global time instead of MPI_Barrier, pass a clock to another process, and run the
 * continuous clock. Emulated clocks with known truth when HCLOCK_EMULATE is set, e.g.
 *   HCLOCK_EMULATE=offset=1,skew=100e-6,seed=7 mpirun -np 2 build/bin/library_tour
 * Build against an installed hclock:
 *   mpicc library_tour.c $(pkg-config --cflags --libs hclock) -o library_tour
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <hclock.h>

static int fail(int rank, const char *what)
{
	if (rank == 0)
		fprintf(stderr, "library_tour: %s: %s\n", what, hclock_last_error());
	return 1;
}

int main(int argc, char **argv)
{
	hclock_emu *emu = NULL;            /* emulated clocks from HCLOCK_EMULATE, or NULL */
	hclock_clock *base = NULL, *global = NULL, *copy = NULL, *cont = NULL;
	hclock_sync *s = NULL, *c = NULL;
	hclock_reading rd;
	int64_t t_ns, start_ns, late_ns;
	double lo_ns, hi_ns, err_ns;
	void *buf = NULL;
	size_t len;
	int rank, rc = 1, provided;

	/* the continuous clock's background thread needs MPI_THREAD_MULTIPLE */
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);

	/* 1. A base clock and a one-shot sync: h2 over HCA3 with the hull learner (bounds). */
	if (hclock_emu_create(NULL, MPI_COMM_WORLD, &emu) ||
	    hclock_base_create("monotonic", emu, &base) ||
	    hclock_sync_create("h2(hca3/100/hull/20/span=0.3,prop)", &s) ||
	    hclock_sync_run(s, MPI_COMM_WORLD, base, &global)) {
		fail(rank, "sync");
		goto out;
	}

	/* 2. Read it: integer ns; the reference's time lies in [t + lo, t + hi]. */
	t_ns = hclock_now(global);
	if (hclock_clock_bounds(global, t_ns, &lo_ns, &hi_ns) == 0)
		printf("rank %d: global %" PRId64 " ns, reference in [%+.0f, %+.0f] ns\n", rank,
		       t_ns, lo_ns, hi_ns);
	if (emu && hclock_true_error(global, emu, &err_ns) == 0)
		printf("rank %d: true error %.0f ns\n", rank, err_ns);

	/* 3. Start together 100 us from now on the global clock (instead of MPI_Barrier). */
	if (hclock_harmonize(MPI_COMM_WORLD, global, 100000, &start_ns, &late_ns)) {
		fail(rank, "harmonize");
		goto out;
	}
	if (late_ns > 0)
		printf("rank %d: learned the start %" PRId64 " ns late\n", rank, late_ns);

	/* 4. A clock travels as bytes (versioned, little-endian) and is rebuilt elsewhere. */
	if (hclock_clock_flatten(global, &buf, &len) ||
	    hclock_clock_unflatten(buf, len, emu, &copy)) {
		fail(rank, "flatten");
		goto out;
	}

	/* 5. The continuous clock: keeps learning while the program runs; bounds at every read. */
	if (hclock_sync_create("cont(hca3/100/hull/20/span=0.3)", &c) ||
	    hclock_sync_run(c, MPI_COMM_WORLD, base, &cont)) {
		fail(rank, "cont");
		goto out;
	}
	hclock_wait_until(cont, hclock_now(cont) + 200000000); /* 0.2 s of a program's work */
	hclock_read(cont, &rd);
	printf("rank %d: continuous %" PRId64 " ns in [%" PRId64 ", %" PRId64 "], status %d\n",
	       rank, rd.now_ns, rd.earliest_ns, rd.latest_ns, rd.status);
	if (hclock_sync_stop(c)) { /* collective; the clock stays readable, frozen */
		fail(rank, "stop");
		goto out;
	}
	rc = 0;
out:
	free(buf);
	hclock_clock_free(cont);
	hclock_clock_free(copy);
	hclock_clock_free(global);
	hclock_clock_free(base);
	hclock_sync_free(c);
	hclock_sync_free(s);
	hclock_emu_free(emu);
	MPI_Finalize();
	return rc;
}
