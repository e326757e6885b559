/*
 * assemble.h - a trace's outputs put together from what its processes wrote, MPI-free: what
 * `hclock trace` does after the program ended (its launcher of rank 0) and `hclock trace
 * --convert DIR` does after a program that died.
 *
 * Each process writes its parts as it finishes (stream.h: DIR/parts/rank.R.pftrace, .json,
 * .stats, and its OTF2 event files); a rank without them (its program dead, or --convert) is
 * converted from its raw file DIR/raw/rank.R first, one at a time. Then the passes run in
 * order (passes[] in assemble.c), each filling its part of the summary:
 *   parts     each process's counters read and summed, the profile added up from them
 *   pftrace   DIR/trace.pftrace: the parts one after the other (the format allows it)
 *   json      DIR/trace.json, for traces of at most STREAM_JSON_LIMIT events (or json_forced)
 *   tidy      the parts that are in the outputs now removed (the counters stay)
 *   otf2      DIR/traces.otf2: the event files under the definitions (otf2_stream.h)
 *   order     small traces (as json): every message paired in memory (merge.h), its order
 *             checked by the clock's bounds and marked in DIR/trace.pftrace
 *   waits     the wait states (waitstate.h: the raw records streamed, any size)
 *   profile   DIR/profile.txt and profile.json (profile.h), the wait states' table in them
 * A pass is one function of the type trace_pass and one line in passes[] (a pass in a file
 * of its own is declared below, `trace_pass pass_NAME;`); what it finds goes into a struct of
 * its own in struct trace_summary (as struct trace_pairing for the order pass), what it
 * needs from the command line into struct trace_assemble_opts. Nothing is printed: a failure's line goes through opts->warn
 * as it happens, the numbers come back in the summary, which the tool prints.
 */
#ifndef HCLOCK_TRACE_ASSEMBLE_H
#define HCLOCK_TRACE_ASSEMBLE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/stream.h"
#include "trace/reorder.h"
#include "trace/waitstate.h"
#include "util/record.h"

struct trace_profile;

struct trace_assemble_opts {
	int redo;        /* every rank converted from its raw file anew (--convert) */
	int json_forced; /* trace.json and the order pass whatever the size (--json) */
	int repair_order; /* first the raw files' message order repaired within the clock's
	                     bounds (reorder.h; builds with hclock align only), then every rank
	                     converted anew (redo) */
	int64_t min_latency_ns; /* ... the least time from a send to its receive, ns (>= 0) */
	/* one line (no newline, no "hclock trace: ") per failure, as it happens; NULL: dropped */
	void (*warn)(void *ctx, const char *line);
	void *warn_ctx;
};

/* One process's counters (stream.h's DIR/parts/rank.R.stats). */
struct trace_counts {
	int have;                 /* read */
	int finished;             /* the process finished MPI_Finalize (its trailer is there) */
	int json, json_error;     /* its JSON part is complete; why not (errno, 0: none) */
	int pf_error;             /* its protobuf part was cut short by this errno (0: not) */
	int size;                 /* processes, by its header */
	int stopped, stop_errno;  /* recording stopped early: record.h's enum rec_stop, errno */
	int when_full;            /* record.h's enum rec_when_full */
	uint64_t waits;           /* --when-full wait: the appends that waited */
	int64_t waited_ns;        /* ... their time, summed over the process's threads, ns */
	uint64_t records, dropped, raw_bytes, pf_bytes, json_bytes, sends, recvs, calls;
	int64_t t_first, t_last;  /* its first and last record, ns (global clock) */
	int64_t mpi_ns;           /* time in MPI calls, ns */
	int64_t overhead_ns;      /* the tracer's own time, ns */
	int64_t rec_cost_ns;      /* one record's cost, ns */
	double drift_max, drift_unc, drift_true; /* rank 0's drift check (NAN: none), ns */
	int have_clock;           /* the continuous clock's statistics, from its tracer */
	struct stream_clock clock;
};

/* What the order pass found (done: it ran and paired; else the rest is 0). */
struct trace_pairing {
	int done;
	size_t paired;            /* messages paired */
	uint64_t unpaired;        /* records left without a partner */
	uint64_t inversions;      /* received before sent on the global clock */
	uint64_t proven, estimated, unknown; /* order by the bounds, the estimate only, neither */
};

/* trace.json: written (or its writing tried: a failure has its line), or left out and why */
enum trace_json { TRACE_JSON_WRITTEN, TRACE_JSON_NO_PART, TRACE_JSON_TOO_BIG };

struct trace_summary {
	/* parts */
	int size;                 /* processes */
	int missing, finished;    /* processes without counters; that finished MPI_Finalize */
	struct trace_counts *proc;  /* proc[r], size of them */
	struct trace_counts total;  /* records, dropped, raw_bytes, pf_bytes, sends, recvs summed;
	                               json: every process's JSON part complete, json_error: a
	                               process could not write its part */
	int64_t t_first, t_last;  /* the first and last record of all, ns (INT64_MAX, INT64_MIN:
	                             none) */
	int64_t overhead_max_ns;  /* the largest process's tracer time, ns */
	int64_t rec_cost_ns;      /* the largest process's cost of a record, ns */
	int n_wait, n_gave_up;    /* processes that ran --when-full wait; whose wait gave up */
	uint64_t waits;           /* ... their waits, summed */
	int64_t waited_ns;        /* ... their time waited, summed, ns */
	int n_size, n_disk;       /* processes whose recording stopped: max-size, the disk */
	int disk_errno;           /* ... the first of the latter's errno */
	int n_pf_cut, pf_errno;   /* processes whose protobuf part was cut short; the first's errno */
	int have_header;          /* rank 0's raw header is in header */
	struct rec_header header;
	/* pftrace, json, otf2 */
	int pf_ok;                /* DIR/trace.pftrace written */
	uint64_t order_bytes;     /* its bytes beyond the parts' (the message order marks) */
	enum trace_json json;
	int otf2;                 /* this build writes traces.otf2 */
	/* order */
	struct trace_pairing pairing;
	/* waits: the wait states */
	struct trace_waits wait_states;
	/* profile */
	struct trace_profile *prof; /* the profile (NULL: out of memory), owned by the summary */
	int profile_written;      /* profile.txt and profile.json written; if not, errno (prof
	                             there) */
	int profile_errno;
	int failed;               /* outputs that failed, a warn line each (the profile aside) */
	/* the repair of the message order (opts->repair_order) */
	int repaired;             /* it ran and succeeded */
	struct trace_reorder_result repair;
};

/* One pass (see the top): 0, or 1 when an output failed (after its line through o->warn). */
typedef int trace_pass(const char *dir, const struct trace_assemble_opts *o,
                       struct trace_summary *s);

/* DIR's outputs from DIR/parts and DIR/raw, all passes (with o->repair_order, after the
 * repair). Returns 0 with *s filled (s->failed and s->profile_written say whether an output
 * failed), or HCLOCK_EIO (no readable raw file: nothing to assemble), HCLOCK_ENOMEM, or the
 * repair's failure (reorder.h: nothing written then; HCLOCK_EUNSUPP in a build without hclock
 * align), after a line through o->warn; *s is then empty. Free *s with trace_summary_free
 * either way. */
int trace_assemble(const char *dir, const struct trace_assemble_opts *o,
                   struct trace_summary *s);
void trace_summary_free(struct trace_summary *s);

#endif
