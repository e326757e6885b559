/* truth.c - the truth of real clocks: one shared kernel clock, or CLOCK_REALTIME (truth.h). */
#include <string.h>

#include "check/truth.h"
#include "clock/clock.h"
#include "transport/comm.h"
#include "util/err.h"

int truth_mode_parse(const char *s, enum truth_mode *m)
{
	if (!s || !*s || !strcmp(s, "shared"))
		*m = TRUTH_SHARED;
	else if (!strcmp(s, "realtime"))
		*m = TRUTH_REALTIME;
	else
		return err_set(HCLOCK_EINVAL, "unknown truth '%s'; expected shared (one machine's "
		                              "kernel clock, the default) or realtime (the hosts' "
		                              "shared CLOCK_REALTIME)", s);
	return 0;
}

const char *truth_mode_name(enum truth_mode m)
{
	return m == TRUTH_SHARED ? "shared" : m == TRUTH_REALTIME ? "realtime" : "none";
}

int truth_setup(MPI_Comm comm, hclock_clock *base, enum truth_mode m, int64_t *width_ns)
{
	struct hclock_clock *b = base->base;
	int64_t mine[2] = {0, 0}, ref[2] = {0, 0}, dummy;
	int rc = 0;
	if (width_ns)
		*width_ns = 0;
	if (m == TRUTH_NONE)
		return 0;
	if (clock_truth(b, &mine[0], &dummy))
		rc = err_set(HCLOCK_EUNSUPP, "--truth needs a kernel clock as the base clock (monotonic "
		                             "or realtime), not %s", b->ops->name);
	if (m == TRUTH_SHARED) {
		/* one source: the least and the most of the sources' identities agree */
		uint64_t id[2] = {b->source, ~b->source}, all[2] = {0, 0};
		int mrc = comm_check(PMPI_Allreduce(id, all, 2, MPI_UINT64_T, MPI_MAX, comm),
		                     "MPI_Allreduce (truth)");
		if (!rc && !mrc && all[0] != ~all[1])
			rc = err_set(HCLOCK_EUNSUPP, "--truth: the processes read different kernel clocks "
			                             "(other hosts, boots or time namespaces); --truth "
			                             "realtime takes the truth from their shared "
			                             "CLOCK_REALTIME");
		return comm_agree(comm, rc ? rc : mrc);
	}
	int r;
	PMPI_Comm_rank(comm, &r);
	if (!rc)
		clock_realtime_offset(b, &mine[0], &mine[1]);
	ref[0] = mine[0];
	ref[1] = (int64_t)b->source;
	int mrc = comm_check(PMPI_Bcast(ref, 2, MPI_INT64_T, 0, comm), "MPI_Bcast (truth)");
	int64_t w = 0;
	mrc = first_err(mrc, comm_check(PMPI_Allreduce(&mine[1], &w, 1, MPI_INT64_T, MPI_MAX, comm),
	                                "MPI_Allreduce (truth)"));
	if (!rc && !mrc) {
		/* the reference's own kernel clock (its host): exactly no shift */
		b->truth_shift_ns = r == 0 || (uint64_t)ref[1] == b->source ? 0 : ref[0] - mine[0];
		if (width_ns)
			*width_ns = w;
	}
	return comm_agree(comm, rc ? rc : mrc);
}
