/*
 * otf2_stream.h - one process's part of the OTF2 archive, written as its records come
 * (otf2_stream.c, MPI-free, fed by stream.c), and the archive assembled from the parts by
 * the launcher (otf2_assemble.c). Neither ever holds more than a few records per thread.
 *
 * Per process R, in DIR/parts:
 *   otf2.R/traces/L.evt  the event file of each of its threads' locations,
 *                        L = R * OTF2S_MAX_THREADS + thread (the record's tid), written through
 *                        OTF2's serial writer in chunks of OTF2S_CHUNK bytes; its region
 *                        references are the process's function indices, its communicator
 *                        references its own numbering (the launcher's mapping tables turn
 *                        both into the global ones)
 *   rank.R.otf2          its definitions, text: "hclock-otf2 1", "rank R", per location
 *                        "loc THREAD EVENTS T_FIRST T_LAST" (ns, global clock), per function
 *                        used "func INDEX NAME", per communicator "comm REF ID" (ID the
 *                        tracer's 64-bit id in hex, the same on every member)
 *
 * Without OTF2 (built with HCLOCK_ALIGN=OFF) the functions below do nothing.
 */
#ifndef HCLOCK_TRACE_OTF2_STREAM_H
#define HCLOCK_TRACE_OTF2_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "util/record.h"

#define OTF2S_MAX_THREADS 1024     /* locations per process; a tid above shares the last */
#define OTF2S_CHUNK (1024 * 1024)  /* OTF2's event chunk size, bytes: the parts' and the
                                      archive's anchor must agree */

struct otf2s;

#ifdef HCLOCK_HAVE_OTF2
/* Open rank's part (its old one removed); host: the process's host ("": not known), a
 * system tree node of the archive. Returns 0, or HCLOCK_EIO / HCLOCK_ENOMEM with err_set's
 * line; *o is then NULL. */
int otf2s_open(const char *dir, int rank, const char *host, uint32_t nfuncs,
               const char *const *names, struct otf2s **o);

/* Records r[0..n) in the order they were made (stream.h's order). */
void otf2s_feed(struct otf2s *o, const struct rec *r, size_t n);

/* Pending events written, the event files closed, rank.R.otf2 written. Returns 0 or
 * HCLOCK_EIO (the first error). Frees o; NULL is a no-op. */
int otf2s_close(struct otf2s *o);

/* DIR/traces.otf2 (with DIR/traces.def and DIR/traces/) from the parts of ranks
 * 0..size-1: the global definitions and each location's mapping tables written, the event
 * files moved into place (a rank without a part gets an empty location). Returns 0 or a
 * negative HCLOCK_E* code with err_set's line. */
int otf2s_assemble(const char *dir, int size);

/* The OTF2_CollectiveOp of an MPI function name into *op; 0 if it is not one of the recorded
 * collectives (nb: the nonblocking one's name, MPI_Iallreduce for MPI_Allreduce). */
int otf2s_coll_op(const char *name, int nb, int *op);
#else
static inline int otf2s_open(const char *dir, int rank, const char *host, uint32_t nfuncs,
                             const char *const *names, struct otf2s **o)
{
	(void)dir, (void)rank, (void)host, (void)nfuncs, (void)names;
	*o = NULL;
	return 0;
}
static inline void otf2s_feed(struct otf2s *o, const struct rec *r, size_t n)
{
	(void)o, (void)r, (void)n;
}
static inline int otf2s_close(struct otf2s *o)
{
	(void)o;
	return 0;
}
#endif

#endif
