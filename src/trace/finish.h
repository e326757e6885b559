/*
 * finish.h - what the tracer tells of its clock at MPI_Finalize (finish.c): the drift check
 * (Check-Global-Clock at one point, into the trailer) and, with --event-truth (emulated
 * clocks), the true error of every reading the tracer made, noted as it is made and summed
 * over the processes into one line, and kept reading by reading for DIR/raw/truth.R
 * (truthfile.h).
 */
#ifndef HCLOCK_TRACE_FINISH_H
#define HCLOCK_TRACE_FINISH_H

#include <stdint.h>

#include "hclock.h"

/* --event-truth from now on, the truth read from base's emulated clock (its ops->truth);
 * the array of the readings kept allocated (TRUTH_FILE_CAP entries, 48 MiB of address space
 * whose pages are touched only as readings fill them). */
void finish_truth_start(hclock_clock *base);
/* The reference's clock now, ns (0 when the truth cannot be read). */
int64_t finish_truth_ref(void);
/* A reading g (global clock, ns) made after the truth ref1 (finish_truth_ref, ns): its true
 * error into the histogram, and whether the truth lay outside the bounds that bounds (the
 * tracer's rec_bounds: 0 when the clock has none) gives for g. The reading is kept with its
 * truth [ref1, ref2] (ref2 read here; any gap: the histogram's TRUTH_GAP_NS does not apply)
 * unless the truth was not read (0) or ran back, or TRUTH_FILE_CAP readings are kept
 * already: those are counted as lost. Lock-free: any thread. */
void finish_truth_note(int64_t g, int64_t ref1,
                       int (*bounds)(int64_t g, int64_t *lo_g, int64_t *hi_g));
/* The histograms of the processes off the reference's node (of all, with one node) summed;
 * rank 0 prints one line. Collective over MPI_COMM_WORLD. */
void finish_truth_report(hclock_emu *emu);
/* The readings kept written to DIR/raw/truth.RANK (truthfile.h: sorted by reading, with the
 * count of those lost), and freed; a reading noted from here on is not kept. dir NULL: freed
 * only. Returns 0, or -1 after one line on stderr ("hclock trace (rank R): cannot write
 * PATH: REASON"; no file is left then). */
int finish_truth_write(const char *dir, int rank);

/* The drift check on the global clock g (emu: the emulation, for the true error; NULL:
 * none). Collective over MPI_COMM_WORLD; rank 0 gets the largest |offset| in *max_ns, the
 * check's uncertainty in *unc_ns, the largest |true error| in *true_ns (ns; left alone when
 * a process failed, *true_ns without emulation too). */
void finish_drift_check(hclock_clock *g, hclock_emu *emu, double *max_ns, float *unc_ns,
                        double *true_ns);

#endif
