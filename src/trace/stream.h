/*
 * stream.h - one process's outputs, written from its records in the order they were made
 * (MPI-free): the tracer at MPI_Finalize and the launcher or `hclock trace --convert` for a
 * rank without them both read the raw file back a chunk at a time (stream_convert_raw). Memory is bounded by the number of
 * threads, message channels and functions, never by the number of records.
 *
 * Per process R, in DIR/parts (the launcher only concatenates them, assemble.h):
 *   rank.R.pftrace  Perfetto's protobuf trace format, one packet sequence per thread
 *                   : a slice per call, flows for messages
 *   rank.R.json     Chrome trace-event JSON objects, each preceded by ",\n" (only while the
 *                   process has at most json_limit records, or always with json_limit 0)
 *   rank.R.stats    the counters: records, bytes, messages, whether and why recording
 *                   stopped early (record.h's enum rec_stop), the profile (profile.h): per
 *                   function its calls, total and largest call (blocking calls, not the
 *                   nonblocking collectives' start-to-completion slices), the time in MPI,
 *                   the sizes of the messages sent
 *
 * Messages are paired without a global matcher: each end numbers the messages of a channel
 * (communicator, sender, receiver, tag) in the order it made its records of them (sends in
 * the order they started, receives in the order they completed), and by MPI's non-overtaking
 * rule the n-th send of a channel is its n-th receive; both ends hash (channel, n) into the
 * same flow id (util/msgmatch.h: msgmatch_next, msgmatch_id).
 */
#ifndef HCLOCK_TRACE_STREAM_H
#define HCLOCK_TRACE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "util/record.h"

/* JSON is written for traces of at most this many records in all (and by each process
 * while it has at most this many); --json writes it whatever the size */
#define STREAM_JSON_LIMIT 1000000ULL

/* disk each process holds back while it records (DIR/raw/reserve.R, given back at
 * MPI_Finalize), so that after a full disk its trailer, counters and the start of its
 * outputs fit; the launcher of rank 0 holds back as much per process (at most
 * STREAM_RESERVE_LAUNCHER_MAX) for the concatenated outputs */
#define STREAM_RESERVE_BYTES (256 << 10)
#define STREAM_RESERVE_LAUNCHER_MAX (64LL << 20)

struct trace_stream;

struct stream_opts {
	const char *dir;          /* the trace's directory: outputs go to DIR/parts */
	int rank, size;
	const char *host;         /* the process's host ("" or NULL: not known) */
	uint32_t nfuncs;
	const char *const *names; /* nfuncs function names (copied) */
	int64_t t0_g;             /* the job's common origin of JSON times, ns (global clock) */
	uint64_t json_limit;      /* 0: JSON whatever the size */
};

/* Open rank o->rank's parts (truncated). Returns 0, or HCLOCK_EIO / HCLOCK_ENOMEM with
 * err_set's line; *s is then NULL. */
int stream_open(const struct stream_opts *o, struct trace_stream **s);

/* Records r[0..n) in the order they were made (REC_DROP ones counted). Errors (a full disk)
 * stop the outputs, which stream_close reports; the stream stays usable (counting). */
void stream_feed(struct trace_stream *s, const struct rec *r, size_t n);

/* The end: pending calls closed, the stats written (tr: the trailer, NULL for a program that
 * died; raw_bytes: the raw file's size). Returns 0 or HCLOCK_EIO (the first error). Frees s. */
int stream_close(struct trace_stream *s, const struct rec_trailer *tr, uint64_t raw_bytes);

/* The continuous clock as the tracer left it at MPI_Finalize (hclock_sync_stats), for the
 * summary: written to the stats as clock_exchanges, clock_timeouts, clock_thread_cpu_us. */
struct stream_clock {
	uint64_t exchanges;     /* exchanges completed with its parent */
	uint64_t timeouts;      /* exchanges given up */
	int64_t thread_cpu_us;  /* its background thread's CPU time, us (-1: no thread) */
};

/* Rank rank's parts from DIR/raw/rank.R, read a chunk at a time (records up to the last
 * whole one, the trailer if there, else known: the tracer's own, whose file has none after
 * a full disk; NULL: none). clock: the continuous clock's statistics (NULL: not known, not a
 * continuous clock). Returns 0 or a negative HCLOCK_E* code with err_set's line. */
int stream_convert_raw(const char *dir, int rank, uint64_t json_limit,
                       const struct rec_trailer *known, const struct stream_clock *clock);

#endif
