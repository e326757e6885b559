/*
 * profile.h - the trace's profile, summed from the processes' counters (DIR/parts/rank.R.stats,
 * which stream.c counts as the records come: no pass over the trace). MPI-free.
 *
 * Per MPI function: calls, total, mean and largest call, share of the run (its total over the
 * processes' run times summed), and its spread over processes: the least and most time a
 * process spent in it and the imbalance (most - mean) / most, mean over all processes
 * (0: even; near 1: one process holds it all). Per process: the run (first record to last),
 * the time in MPI and outside. The sizes of the messages sent in power-of-two bins.
 * Written as DIR/profile.txt and DIR/profile.json (docs/trace.md gives the keys).
 */
#ifndef HCLOCK_TRACE_PROFILE_H
#define HCLOCK_TRACE_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct trace_profile;

/* An empty profile, or NULL without memory. Free it with profile_free. */
struct trace_profile *profile_create(void);

/* Add one process's counters from its stats file at path. Returns 0, or -1 when the file
 * cannot be read or memory runs out (the profile then lacks that process). */
int profile_add(struct trace_profile *p, const char *path);

/* The messages' order as the launcher's pairing found it (merge.h's rec_order): how many
 * proven by the clock's bounds, shown by the estimate only, without bounds. Without this
 * call (a trace too big for the pairing) the profile says nothing of it. */
void profile_order(struct trace_profile *p, uint64_t proven, uint64_t estimated,
                   uint64_t unknown);

/* The repair of the message order (hclock trace --repair-order, reorder.h): enters and
 * leaves moved, the largest move (ns), the messages in the repair, the moved events that had
 * no upper bound. Without this call the profile says nothing of it. */
void profile_repair(struct trace_profile *p, uint64_t moved, int64_t moved_max_ns,
                    uint64_t messages, uint64_t unbounded_moved);

struct trace_waits;
/* The wait states (waitstate.h) for the profile's table: tw stays the caller's and must
 * outlive the profile's writing. Without this call the profile says nothing of them. */
void profile_waits(struct trace_profile *p, const struct trace_waits *tw);

/* The words of the drift check at MPI_Finalize for the summary and profile.txt, into
 * buf: "largest offset X ns (+-U ns: half the fastest round trip)", with ", not resolved"
 * after X when U >= X (the check's own error hides the clock's); max_ns: the largest |offset|
 * rank 0 measured, unc_ns: its uncertainty (NAN: not known, left out), true_ns: the largest
 * true error under emulation (NAN: none), all ns. */
void profile_drift_text(char *buf, size_t len, double max_ns, double unc_ns, double true_ns);

/* DIR/profile.txt and DIR/profile.json (each written to NAME.part and renamed). Returns 0
 * or -1 (errno set). */
int profile_write(const struct trace_profile *p, const char *dir);

/* The wait states' line (when analysed: profile_waits), then the top functions by total
 * time, a line each after a heading, on f ("hclock trace: "
 * prefixed). */
void profile_summary(const struct trace_profile *p, FILE *f, int top);

void profile_free(struct trace_profile *p);

#endif
