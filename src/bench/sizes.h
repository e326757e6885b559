/* sizes.h - message size lists as given on the command line (no MPI). Durations and other
 * numbers follow util/parse.h. */
#ifndef HCLOCK_BENCH_SIZES_H
#define HCLOCK_BENCH_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* Largest size accepted by the parser, bytes (memory is checked separately). */
#define BENCH_SIZE_MAX ((size_t)1 << 50)

/*
 * Parse a size list: comma-separated items, each a size or a range LO:HI meaning LO, 2 LO,
 * 4 LO, ... up to HI. A size is an integer with an optional binary suffix K, M, G or T
 * (1K = 1024), e.g. "8,64,1K,1M" or "8:1M". *out is malloc'ed (caller frees), *n its
 * length. Returns 0, HCLOCK_EINVAL (hclock_last_error() names the bad item) or
 * HCLOCK_ENOMEM.
 */
int bench_sizes_parse(const char *s, size_t **out, size_t *n);

#endif
