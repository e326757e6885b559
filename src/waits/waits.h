/*
 * waits.h - wait states, each with its proof: who waited for whom in a traced MPI run, for
 * how long, and the strict interval that holds the true waiting time. MPI-free: processes,
 * communicators and functions are the caller's integers, each operation is named by its
 * class (enum waits_op), and the times are the caller's (integer ns on one global clock,
 * each with the strict bounds of the reference time it stands for).
 *
 * The caller feeds what its trace holds, each process's items in that process's order
 * (sends in the order they started, receives in the order they completed, collectives in
 * the order the process entered them); the processes' streams may be interleaved in any
 * way, though memory is least when they are fed in time order (then only the messages in
 * flight and the collectives not yet entered by every member are held). Messages are paired
 * by MPI's non-overtaking rule (util/msgmatch.h), collectives by their place in each member's
 * sequence on the communicator. Every pair and every complete collective goes through the
 * pattern table (waits_patterns[], patterns.h: one pattern a file), whose instances are
 * summed per pattern, function, communicator and process and handed to the caller's
 * callback as they are found.
 *
 * The interval: a waiting time is a difference of two timestamps, usually of two processes,
 * clipped at 0 and at the duration of the waiting call: w = clip(T - B, 0, D). Each time's
 * true value lies in [t - below, t + above]; w is non-decreasing in T and in D and
 * non-increasing in B, so its true value lies in
 *     [clip(T.lo - B.hi, 0, D.lo), clip(T.hi - B.lo, 0, D.hi)],
 * with D.lo = max(0, L.lo - B.hi) and D.hi = L.hi - B.lo (L the call's leave): strict, from
 * the bounds alone. An instance is proven when the interval's lower end is above 0, not
 * resolved when the interval holds 0. docs/waits.md defines each pattern.
 */
#ifndef HCLOCK_WAITS_WAITS_H
#define HCLOCK_WAITS_WAITS_H

#include <stddef.h>
#include <stdint.h>

/* a half-width that is not known: the interval is unbounded on that side */
#define WAITS_NO_BOUND (INT64_MAX / 4)

/* one timestamp: the estimate and the strict bounds of the true (reference) time */
struct waits_stamp {
	int64_t t_ns;      /* the trace's time, ns (global clock) */
	int64_t below_ns;  /* the true time is >= t_ns - below_ns (>= 0, WAITS_NO_BOUND) */
	int64_t above_ns;  /* ... and <= t_ns + above_ns (>= 0, WAITS_NO_BOUND) */
	/* the truth itself, where the caller knows it (emulated clocks; 0: not known): the true
	   time lies in [true_lo_ns, true_hi_ns] (the truth's own read uncertainty), ns. It
	   checks the bounds: an instance made of such stamps carries its true waiting time. */
	int has_truth;
	int64_t true_lo_ns, true_hi_ns;
};

/* the call in which a process waited or could have: its enter and leave */
struct waits_call {
	int32_t proc;            /* the process (rank or location index, >= 0) */
	uint32_t func;           /* the caller's id of the function (names are the caller's) */
	uint64_t id;             /* the call's number on its process, any value unique there
	                            (a counter); 0: not known (calls are then told apart by their
	                            enter time and function, which a coarse clock may repeat) */
	struct waits_stamp enter, leave;
};

/* one end of a message */
struct waits_send {
	struct waits_call call;  /* the call that sent it; call.enter is when the send started */
	int64_t dst;             /* the receiving process */
	uint64_t comm;           /* communicator id (the same on every member) */
	int64_t tag;
	uint64_t bytes;
	int blocking;            /* 1: the call returned only when the buffer could be reused
	                            (MPI_Send, MPI_Ssend): it may have waited for the receiver */
	int synchronous;         /* 1: it could not complete before the receive was posted
	                            (MPI_Ssend) */
};

struct waits_recv {
	struct waits_call call;  /* the call in which the receive completed: the blocking
	                            receive itself, or the MPI_Wait* / MPI_Test* */
	int64_t src;             /* the sending process */
	uint64_t comm;
	int64_t tag;
	int posted_in_call;      /* 1: a blocking receive: call.enter is when it was posted too */
};

/* what a collective does, for its wait state */
enum waits_coll_kind {
	WAITS_COLL_NXN,      /* every process needs every other's data: allreduce, alltoall(v,w),
	                        allgather(v), reduce_scatter(_block), and their i-forms */
	WAITS_COLL_BARRIER,  /* MPI_Barrier, MPI_Ibarrier */
	WAITS_COLL_1TON,     /* the root's data to all: bcast, scatter(v) */
	WAITS_COLL_NTO1,     /* all data to the root: reduce, gather(v) */
	WAITS_COLL_OTHER,    /* no wait state defined (scan, exscan, neighborhood, ...) */
};

/* one process's part in a collective */
struct waits_coll {
	struct waits_call call;  /* the call that blocked: the collective itself, or the
	                            MPI_Wait* / MPI_Test* that completed a nonblocking one */
	struct waits_stamp start;/* when the process entered the operation (the blocking call's
	                            enter, or the i-call's) */
	uint64_t comm;
	int32_t size;            /* the communicator's members (>= 1) */
	int64_t root;            /* the root's process (WAITS_COLL_1TON, _NTO1), else -1 */
	enum waits_coll_kind kind;
	int64_t seq;             /* its place among this process's collectives on comm, in the
	                            order they were started (0, 1, ...: a nonblocking one completed
	                            later than one started after it), or -1: the order fed */
};

/* one wait state found */
struct waits_instance {
	int pattern;             /* the pattern (0 .. waits_pattern_count() - 1) */
	int32_t proc;            /* the process that waited */
	int64_t peer;            /* the one it waited for: the sender, the receiver, the last to
	                            enter, the root, the first to enter; -1 none */
	uint32_t func;           /* the call that waited (struct waits_call's func) */
	uint64_t comm;
	int64_t at_ns;           /* when it began waiting: its call's enter, ns (the trace's time) */
	int64_t est_ns;          /* the waiting time from the timestamps, ns (>= 0) */
	int64_t lo_ns, hi_ns;    /* the true waiting time lies in [lo_ns, hi_ns], ns (0 <= lo;
	                            hi may be WAITS_NO_BOUND) */
	int has_truth;           /* 1: every stamp it is made of had its truth, and then */
	int64_t true_lo_ns, true_hi_ns; /* the true waiting time computed from the truth lies in
	                            [true_lo_ns, true_hi_ns] (the truth's read uncertainty), ns:
	                            it must meet [lo_ns, hi_ns] */
};

/* the sum of a set of instances */
struct waits_total {
	uint64_t n;              /* instances */
	uint64_t proven;         /* ... of which proven (lo_ns > 0) */
	int64_t est_ns;          /* waiting time summed: estimate, ns */
	int64_t lo_ns, hi_ns;    /* ... the sums of the intervals' ends, ns (hi: saturated at
	                            WAITS_NO_BOUND) */
	uint64_t truth_n;        /* instances with their truth (has_truth) */
	uint64_t truth_outside;  /* ... whose true interval misses [lo_ns, hi_ns]: the bounds
	                            were wrong (0 in every test) */
	int64_t true_lo_ns, true_hi_ns; /* the true waiting time of those, summed, ns */
};

/* one row of the table: the instances of one pattern in one function, communicator and
 * process */
struct waits_row {
	int pattern;
	uint32_t func;
	uint64_t comm;
	int32_t proc;
	struct waits_total t;
};

typedef struct waits waits;

struct waits_opts {
	size_t worst;            /* instances kept as the worst (largest estimate), 0: none */
	/* every instance as it is found (NULL: none); non-zero stops the analysis (the next
	   waits_add_* returns it) */
	int (*on_instance)(void *ctx, const struct waits_instance *in);
	void *ctx;
};

/* An analysis, or NULL without memory. */
waits *waits_create(const struct waits_opts *o);
void waits_free(waits *w);

/* Feed one item (copied). Returns 0, HCLOCK_ENOMEM, HCLOCK_EINVAL (a process, size or kind
 * out of range; nothing added), or the on_instance callback's non-zero value. */
int waits_add_send(waits *w, const struct waits_send *s);
int waits_add_recv(waits *w, const struct waits_recv *r);
int waits_add_coll(waits *w, const struct waits_coll *c);

/* The feed is over: the instances a pattern held back (a call that completed several
 * messages is one instance, reported once its last message is known) are reported. Call once,
 * before reading the results. Returns 0, HCLOCK_ENOMEM or the callback's non-zero value. */
int waits_finish(waits *w);

/* The number of patterns, and pattern p's key ("late_sender") and title ("Late Sender"). */
int waits_pattern_count(void);
const char *waits_pattern_name(int p);
const char *waits_pattern_title(int p);
/* Whether pattern p's waiting time is another pattern's too (Wrong Order: a Late Sender's),
 * so that a total over the patterns leaves it out. */
int waits_pattern_also_counted(int p);

/* The totals of pattern p (0 .. waits_pattern_count() - 1). */
struct waits_total waits_pattern_total(const waits *w, int p);
/* Every row, the largest estimate first (*n of them; the array is w's, valid until the next
 * waits_add_* or waits_free). NULL with *n 0 when there are none or no memory. */
const struct waits_row *waits_rows(waits *w, size_t *n);
/* The worst instances (at most opts.worst), the largest estimate first; w's array. */
const struct waits_instance *waits_worst(waits *w, size_t *n);

/* What the analysis saw, and what was left unmatched: messages with one end only,
 * collectives some member never entered (a program that died, a filtered function, records
 * dropped). */
struct waits_left {
	uint64_t messages, colls;/* messages paired, collectives complete */
	uint64_t sends, recvs;   /* message ends without their partner */
	uint64_t colls_open;     /* collectives not entered by every member */
	uint64_t colls_mismatched; /* collectives whose members disagree on kind, root or size
	                            (nonblocking ones completed out of their start order, fed
	                            with seq -1): not analysed */
};
void waits_left(const waits *w, struct waits_left *l);

#endif
