/*
 * truth.h - where the truth of a real (not emulated) clock comes from, set up once over the
 * communicator whose rank 0 is the reference.
 *
 * shared:   every process reads one kernel clock (one machine, boot and time namespace):
 *           the truth of a reading is the reading itself. Refused, with a line that says
 *           why, when the processes' time sources differ.
 * realtime: the processes' clocks differ (hosts with their own time namespaces, or
 *           machines whose CLOCK_REALTIME is kept in step by PTP) but share CLOCK_REALTIME:
 *           each process reads its base clock minus CLOCK_REALTIME in one step, rank 0's
 *           is broadcast, and the reference's truth at a reading is the reading shifted by
 *           the difference. As exact as the realtime clocks agree, plus each process's read
 *           step (*width_ns: the most of the processes' widths, ns); none for the processes
 *           on the reference's host (the same time source).
 */
#ifndef HCLOCK_CHECK_TRUTH_H
#define HCLOCK_CHECK_TRUTH_H

#include <stdint.h>

#include "util/pmpi.h"

#include "hclock.h"

enum truth_mode { TRUTH_NONE, TRUTH_SHARED, TRUTH_REALTIME };

/* "shared" or "realtime" (NULL or "": shared) into *m; 0, or HCLOCK_EINVAL with its line. */
int truth_mode_parse(const char *s, enum truth_mode *m);
/* "shared", "realtime" or "none". */
const char *truth_mode_name(enum truth_mode m);
/* Collective over comm: set base (a base clock) up for m. 0 on every rank, or the same
 * error on every rank (its line on each). *width_ns (may be NULL): the truth's own
 * uncertainty, ns (0 for shared). */
int truth_setup(MPI_Comm comm, hclock_clock *base, enum truth_mode m, int64_t *width_ns);

#endif
