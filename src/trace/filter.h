/*
 * filter.h - which MPI calls hclock trace records (--filter LIST, HCLOCK_TRACE_FILTER).
 *
 * LIST: comma-separated items, each a shell pattern over the MPI function names
 * (fnmatch(3), case folded: MPI_Allreduce, MPI_*send, MPI_Wait*); an item starting with '!'
 * excludes what it matches. With no including item every call is recorded but the excluded
 * ones; otherwise only the included ones, less the excluded. Items apply left to right.
 */
#ifndef HCLOCK_TRACE_FILTER_H
#define HCLOCK_TRACE_FILTER_H

#include <stddef.h>

/* Apply SPEC (NULL or "": everything) to the N function NAMES: ENABLED[i] (may be NULL:
 * check only) becomes 1 for a recorded function, 0 for a filtered one. Returns 0, or -1
 * when an item is empty, too long or matches no function; BAD (BADLEN bytes, may be NULL)
 * then holds the first such item. ENABLED is filled from the valid items either way. */
int trace_filter_apply(const char *spec, const char *const *names, int n, unsigned char *enabled,
                       char *bad, size_t badlen);

#endif
