/*
 * truthfile.h - the truth of every timestamp a traced process took (hclock trace --emulate
 * ... --event-truth): the file DIR/raw/truth.RANK the tracer writes at MPI_Finalize
 * (finish.c) and its reader, MPI-free, for the wait-state analysis's own check.
 *
 * The file: a struct truth_header, then `count` struct truth_entry sorted by t_g ascending
 * (ties in any order), native byte order (little-endian where hclock runs). An entry is one
 * reading g of the global clock and the interval of the reference's clock (rank 0's emulated
 * node) read just before and just after it: the reading was made at a true time inside
 * [true_lo_ns, true_hi_ns]. The tracer keeps at most TRUTH_FILE_CAP entries a process (its
 * first readings); those beyond, and those whose truth could not be read, are counted in
 * `lost`. A process that died before MPI_Finalize leaves no file.
 *
 * The reader holds the whole file in memory (24 bytes an entry, at most 48 MiB a process):
 * fine for what it is, a test of runs with emulated clocks.
 */
#ifndef HCLOCK_TRACE_TRUTHFILE_H
#define HCLOCK_TRACE_TRUTHFILE_H

#include <stdint.h>

#define TRUTH_FILE_MAGIC "HCTRUTH1"
#define TRUTH_FILE_CAP (1u << 21) /* entries a process keeps */

struct truth_header {
	char magic[8];     /* TRUTH_FILE_MAGIC, no terminating 0 */
	int32_t rank;      /* the process's rank in MPI_COMM_WORLD */
	uint32_t reserved; /* 0 */
	uint64_t count;    /* entries that follow */
	uint64_t lost;     /* readings not kept: beyond TRUTH_FILE_CAP, or no truth read */
};

struct truth_entry {
	int64_t t_g;        /* the reading of the global clock, ns */
	int64_t true_lo_ns; /* the reference's clock just before it, ns */
	int64_t true_hi_ns; /* ... just after it, ns (>= true_lo_ns) */
};

typedef struct truthfile truthfile;

/* DIR/raw/truth.RANK loaded. Returns 0 with *out NULL when there is no such file; 0 with *out
 * set (the caller frees it with truthfile_free); HCLOCK_EINVAL for a file that is cut or not
 * a truth file of this rank (not sorted either), HCLOCK_EIO for one that cannot be read,
 * HCLOCK_ENOMEM: *out NULL then, the line in hclock_last_error(). */
int truthfile_load(const char *dir, int rank, truthfile **out);
/* The truth of the reading g (ns): the union [*lo_ns, *hi_ns] of the intervals of the
 * entries whose t_g == g (a thread's clamped readings may repeat a value). Returns 1 when
 * found, 0 when no entry has it (*lo_ns, *hi_ns left alone). O(log n). */
int truthfile_at(const truthfile *t, int64_t g, int64_t *lo_ns, int64_t *hi_ns);
/* The readings the tracer did not keep (the header's lost). */
uint64_t truthfile_lost(const truthfile *t);
void truthfile_free(truthfile *t);

#endif
