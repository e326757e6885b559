/*
 * prop.c - ClockPropSync (Hunold & Carpen-Amarie, Alg. 3): rank 0 of the level, already
 * synchronized at the upper level, flattens its (possibly nested) clock and broadcasts it;
 * the others rebuild it on their own base clock. Only correct where they share rank 0's
 * time source: the rebuilt base clock's source identity must equal the sender's (same
 * machine and boot for monotonic/realtime/tsc, same virtual node under emulation, never
 * for a per-process wtime), else the process refuses with HCLOCK_ESHARE and the level
 * fails on every rank.
 */
#include <stdint.h>
#include <stdlib.h>

#include "clock/clock.h"
#include "sync/sync.h"
#include "transport/comm.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/fault.h"

static int prop_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	int r, rc = 0;
	void *buf = NULL;
	size_t len = 0;
	int64_t n = 0;
	PMPI_Comm_rank(comm, &r);
	s->parent = r ? 0 : -1;
	s->shares = r != 0;
	if (r == 0)
		rc = hclock_clock_flatten(clk, &buf, &len);
	/* the length, and who rank 0 is in MPI_COMM_WORLD (for the error line) */
	int64_t hdr[2] = {rc ? -1 : (int64_t)len, 0};
	if (r == 0) {
		int w;
		PMPI_Comm_rank(MPI_COMM_WORLD, &w);
		hdr[1] = w;
	}
	rc = first_err(rc, comm_check(PMPI_Bcast(hdr, 2, MPI_INT64_T, 0, comm), "MPI_Bcast (prop)"));
	n = hdr[0];
	if (r != 0 && n > 0 && !(buf = fault_malloc((size_t)n)))
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	/* broadcast only if every rank is ready for it (rank 0 serialized, all allocated) */
	if (!rc && n <= 0)
		rc = err_set(HCLOCK_EINVAL, "prop: the level's rank 0 could not serialize its clock");
	if (!(rc = comm_agree(comm, rc)))
		rc = comm_check(PMPI_Bcast(buf, (int)n, MPI_BYTE, 0, comm), "MPI_Bcast (prop)");
	if (r == 0 || rc) {
		*out = hclock_clock_ref(clk);
	} else if ((rc = clock_unflatten_like(buf, (size_t)n, clk, out)) == HCLOCK_ESHARE) {
		rc = err_set(HCLOCK_ESHARE, "prop refused: this process does not share the time source "
		             "of rank %d (another machine or boot, a per-process clock such "
		             "as wtime, or another emulated node); use a sync algorithm instead of prop "
		             "at this level", (int)hdr[1]);
	}
	free(buf);
	return rc;
}

static const struct sync_ops prop_ops = {.run = prop_run};

static int prop_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	(void)ps;
	int rc = sync_alloc(sizeof(struct hclock_sync), &prop_ops, out);
	if (!rc)
		sync_set_spec(*out, "prop");
	return rc;
}

const struct sync_type sync_type_prop = {
	.name = "prop",
	.usage = "prop",
	.help = "ClockPropSync (Alg. 3), only as a lower level of h2/h3: copy the upper level's clock",
	.level_only = 1,
	.parse = prop_parse,
};
