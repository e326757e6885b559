/*
 * merge.h - the tracer's raw files read back and put together (issue 12), MPI-free: what
 * `hclock trace` does after the program ended (and `hclock trace --convert DIR` after a
 * program that died).
 *
 * Loading takes what is complete in each DIR/raw/rank.R (record.h): records up to the last
 * whole one, the trailer when present. Messages are paired first-in first-out per channel
 * (sender, receiver, communicator id, tag), MPI's non-overtaking rule: sends in the order
 * they started, receives in the order they completed.
 */
#ifndef HCLOCK_TRACE_MERGE_H
#define HCLOCK_TRACE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/record.h"

struct trace_proc {
	struct trace_header h;
	char **names;          /* h.nfuncs function names */
	struct trace_rec *rec; /* the records, in the order they were made */
	size_t nrec;
	int have_trailer;      /* 0: the program ended before MPI_Finalize (or the file is cut) */
	uint64_t dropped;      /* records the tracer dropped: the trailer's count, or without
	                          one the sum of the TRACE_DROP records read */
	struct trace_trailer tr;
	size_t file_bytes;
};

struct trace_set {
	int size;              /* processes (from rank 0's header) */
	struct trace_proc *p;  /* p[r]; p[r].nrec == 0 and no header when rank r left no file */
	int missing;           /* ranks without a readable file */
	int64_t t0_g;          /* the earliest global time of any record, ns */
};

/* A message: the send record rec[si] of process src and the receive rec[ri] of dst. */
struct trace_msg {
	int src, dst;
	size_t si, ri;
};

/* Load DIR/raw/rank.*. Returns 0, or -1 with one line in err (no readable file at all). */
int trace_load(const char *dir, struct trace_set *ts, char *err, size_t errlen);
void trace_set_free(struct trace_set *ts);

/* Pair sends and receives. *unmatched counts records left without a partner (a program that
 * died, a receive of a filtered send, an intercommunicator). Returns 0 or -1 (memory). */
int trace_match(const struct trace_set *ts, struct trace_msg **msgs, size_t *nmsgs,
                uint64_t *unmatched);

/* Messages received before they were sent on the global clock (receive end < send start). */
uint64_t trace_inversions(const struct trace_set *ts, const struct trace_msg *m, size_t n);

/* The name of record r's function in process p ("?" if out of range). */
const char *trace_func_name(const struct trace_proc *p, const struct trace_rec *r);

/* DIR/trace.json: Chrome trace-event JSON for ui.perfetto.dev (complete events per rank on
 * the global clock, in us since t0_g with ns digits; a call the program was ended in has
 * args {"returned": false} and ends where it was ended; flow arrows from each send to its
 * receive; a nonblocking collective as an async begin/end pair, category "nbc", from its
 * start call's enter to its completing call's leave). Written to a temporary file and
 * renamed. Returns 0 or -1 with err. */
int trace_write_perfetto(const struct trace_set *ts, const struct trace_msg *m, size_t n,
                         const char *path, char *err, size_t errlen);

/* DIR/traces.otf2 (OTF2 archive, otf2_out.c; only where hclock is built with OTF2). Returns
 * 0 or -1 with err. */
int trace_write_otf2(const struct trace_set *ts, const char *dir, char *err, size_t errlen);

#endif
