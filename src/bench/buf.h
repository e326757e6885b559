/*
 * buf.h - the buffers of one operation at one message size (struct bench_buf, in
 * bench/op.h, whose hooks read and fill them): their layout under --buffers and --align, a
 * check that they fit before anything runs, allocation, and offcache's flush before every
 * repetition. The operation's sizes and init hooks say what it needs; nothing here names
 * an operation.
 *
 * Errors: 0 or a negative HCLOCK_E* with hclock_last_error() naming what failed.
 */
#ifndef HCLOCK_BENCH_BUF_H
#define HCLOCK_BENCH_BUF_H

#include <stddef.h>

#include "util/pmpi.h"

#include "bench/op.h"

/* How bench_buf_init lays out the buffers. */
enum bench_buffers { BUF_CACHED, BUF_ROTATE, BUF_OFFCACHE };
struct bench_buf_opts {
	int root;
	int in_place;
	int root_shift;           /* rooted operations move their root on after every call */
	enum bench_buffers mode;
	size_t mode_bytes;        /* rotate: the sets together cover at least this; offcache:
	                             bytes written before every repetition */
	size_t align;             /* buffers start at multiples of this (power of two, >= 8;
	                             0: malloc's) */
	const struct bench_dtype *type; /* reductions' element type (NULL: int32) */
	int rop;                  /* and operation (enum bench_rop; 0: sum) */
	enum bench_counts counts; /* the v-variants' split (0: regular) */
	enum bench_topology topology; /* the neighborhood collectives' (0: cart) */
};
/* 2 x the last-level cache (sysconf), at most 64 MiB (also when unknown), bytes:
 * --buffers' default SIZE */
size_t bench_cache_bytes(void);

/*
 * Check that op can run with message size bytes on nprocs ranks and that the buffers fit in
 * max_bytes: 0, or HCLOCK_EINVAL with hclock_last_error() saying what is wrong. No
 * allocation, no MPI.
 */
int bench_buf_check(const struct bench_op *op, int nprocs, const struct bench_buf_opts *bo,
                    size_t bytes, size_t max_bytes);
/* Allocate and touch the buffers, after op's init hook (collective over comm where that
 * is: the neighborhood collectives make their topology communicator here; otherwise not);
 * root_shift: rooted operations move their root on after every call (every rank's buffers
 * fit being the root). 0, HCLOCK_ENOMEM, or the init hook's error (HCLOCK_EMPI: the
 * topology communicator); b is freed then. */
int bench_buf_init(struct bench_buf *b, const struct bench_op *op, MPI_Comm comm,
                   const struct bench_buf_opts *bo, size_t bytes);
/* Collective under offcache: before a repetition, outside the timed region, write the
 * flush bytes, then MPI_Barrier. 0 or HCLOCK_EMPI (nothing and 0 otherwise). */
int bench_buf_prepare(struct bench_buf *b);
/* Free what bench_buf_init made (collective for the neighborhood collectives, whose
 * topology communicator it frees); safe on a b whose init failed, and twice. */
void bench_buf_free(struct bench_buf *b);

#endif
