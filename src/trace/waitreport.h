/*
 * waitreport.h - the wait states of a run (struct trace_waits, waitstate.h) as people and
 * programs read them: profile.txt's and profile.json's section, hclock trace's summary line,
 * and hclock waits's output. Keys and columns: docs/trace.md (wait_states).
 */
#ifndef HCLOCK_TRACE_WAITREPORT_H
#define HCLOCK_TRACE_WAITREPORT_H

#include <stdint.h>
#include <stdio.h>

#include "trace/waitstate.h"

/* The table per pattern, the 20 largest rows, the worst instances, the truth when there is
 * some, and what was analysed, as text. mpi_ns: the time in MPI the shares are of (0:
 * unknown, shares 0). */
void waitreport_txt(const struct trace_waits *tw, int64_t mpi_ns, FILE *f);
/* The same as one JSON object ({"patterns":[...],"rows":[...],...}, no newline after). */
void waitreport_json(const struct trace_waits *tw, int64_t mpi_ns, FILE *f);
/* One line: "hclock trace: wait states: ... s waiting (... % of the time in MPI), ..." */
void waitreport_line(const struct trace_waits *tw, int64_t mpi_ns, FILE *f);

#endif
