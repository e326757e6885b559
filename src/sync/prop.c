/*
 * prop.c - ClockPropSync (Hunold & Carpen-Amarie, Alg. 3): rank 0 of the level, already
 * synchronized at the upper level, flattens its (possibly nested) clock and broadcasts it;
 * the others rebuild it on their own base clock. Only correct where they share rank 0's
 * time source: the rebuilt base clock's source identity must equal the sender's (same
 * machine and boot for monotonic/realtime/tsc, same virtual node under emulation, never
 * for a per-process wtime), else every rank of the level refuses with HCLOCK_ESHARE.
 */
#include <stdint.h>
#include <stdlib.h>

#include "emulate/emu.h"
#include "sync/sync.h"
#include "util/err.h"

static int prop_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	int r, rc = 0, all;
	void *buf = NULL;
	size_t len = 0;
	int64_t n = 0;
	(void)s;
	MPI_Comm_rank(comm, &r);
	if (r == 0) {
		rc = hclock_clock_flatten(clk, &buf, &len);
		n = rc ? -1 : (int64_t)len;
	}
	MPI_Bcast(&n, 1, MPI_INT64_T, 0, comm);
	if (n < 0) /* rank 0 could not flatten: all fail together */
		return r == 0 ? rc : err_set(HCLOCK_EINVAL, "prop: the level's rank 0 failed to "
		                                            "serialize its clock");
	if (r != 0 && !(buf = malloc((size_t)n)))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	/* the broadcast happens even on allocation failure, into a scratch byte per rank */
	char scratch;
	MPI_Bcast(buf ? buf : &scratch, buf ? (int)n : 0, MPI_BYTE, 0, comm);
	if (r == 0) {
		*out = hclock_clock_ref(clk);
	} else if (!rc) {
		rc = hclock_clock_unflatten(buf, (size_t)n, emu_of_clock(clk), out);
	}
	free(buf);
	MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
	if (all == HCLOCK_ESHARE) {
		/* every rank of the level names the first refusing process (world ranks) */
		int w, who, first, root = 0;
		MPI_Comm_rank(MPI_COMM_WORLD, &w);
		who = rc == HCLOCK_ESHARE ? w : INT32_MAX;
		MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
		if (r == 0)
			root = w;
		MPI_Bcast(&root, 1, MPI_INT, 0, comm);
		err_set(all, "prop refused: rank %d does not share the time source of rank %d "
		             "(another machine or boot, a per-process clock such as wtime, or another "
		             "emulated node); use a sync algorithm instead of prop at this level", first,
		        root);
	} else if (all && !rc) {
		err_set(all, "prop failed on another rank of this level: %s", hclock_strerror(all));
	}
	if (all) {
		hclock_clock_free(*out);
		*out = NULL;
	}
	return all;
}

static const struct sync_ops prop_ops = {.name = "prop", .run = prop_run};

int sync_prop_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	(void)sp;
	struct hclock_sync *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	s->ops = &prop_ops;
	*out = s;
	return 0;
}
