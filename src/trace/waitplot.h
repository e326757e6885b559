/*
 * waitplot.h - two SVG plots of a traced run, for people rather than tables:
 *   - comm_matrix.svg: messages and bytes per pair of processes (sender row, receiver
 *     column), two heat maps side by side on a log colour scale, empty cells white;
 *   - wait_states.svg: the waiting time per process, stacked by wait-state pattern
 *     (waits/waits.h), the part the clock's bounds prove hatched at the foot of each bar.
 * MPI-free: the caller hands every message's ends and size as it reads the send records,
 * then the finished wait-state analysis.
 *
 * Memory is bounded by the bins, not by the messages: beyond WAITPLOT_MAX_CELLS processes a
 * cell of the matrix, and a bar, is a block of K consecutive ranks, K = ceil(nprocs /
 * WAITPLOT_MAX_CELLS), so at most 128 x 128 cells of two counters (256 KiB); the bars are
 * summed from the analysis's rows when written.
 */
#ifndef HCLOCK_TRACE_WAITPLOT_H
#define HCLOCK_TRACE_WAITPLOT_H

#include <stdint.h>

#include "waits/waits.h"

#define WAITPLOT_MAX_CELLS 128 /* cells a side of the matrix, bars of the wait states */

typedef struct waitplot waitplot;

/* A plot of nprocs processes (ranks 0 .. nprocs - 1), or NULL without memory or with
 * nprocs < 1. Free it with waitplot_free. */
waitplot *waitplot_create(int nprocs);

/* One message sent from rank src to rank dst, of bytes bytes. A rank out of [0, nprocs) is
 * left out (counted, and said under the matrix). */
void waitplot_message(waitplot *p, int src, int dst, uint64_t bytes);

/* The number of ranks a cell and a bar stand for (K above, 1 up to WAITPLOT_MAX_CELLS). */
int waitplot_ranks_per_cell(const waitplot *p);

/* Write DIR/comm_matrix.svg and, with w (a finished analysis: waits_finish was called;
 * NULL: none ran), DIR/wait_states.svg, each under a temporary name renamed when complete.
 * run_ns: the run's length on the global clock (ns) for the wait states' title (<= 0: not
 * known, not shown). w is read only (waits_rows makes its sorted copy of the rows). Returns
 * 0, HCLOCK_ENOMEM, or HCLOCK_EIO (a file could not be written: the directory does not
 * exist, the disk is full), each with one line in hclock_last_error(). */
int waitplot_write(const waitplot *p, waits *w, int64_t run_ns, const char *dir);

void waitplot_free(waitplot *p);

#endif
