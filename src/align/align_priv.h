/*
 * align_priv.h - the engine's state, shared by align.c (fitting, composition, the repair of
 * message order through repair.c), input.c (the input files), match.c (messages), metrics.c
 * and report.c (table, JSON, bounds CSV, moved CSV, SVG). Not installed.
 */
#ifndef HCLOCK_ALIGN_PRIV_H
#define HCLOCK_ALIGN_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "hclock_align.h"
#include "numerics/pair.h"
#include "align/repair.h"
#include "align/trace.h"

#define NODE_REFERENCE (-1) /* anode.quality of the reference node */

struct anode {
	int64_t *mate;          /* per event: the other side's local time (send/recv), else unused */
	unsigned char *matched; /* per event: 1 if a matched send/recv */
	size_t parent;          /* next hop towards the reference (itself for the reference) */
	struct pair_fit *hop;   /* conversion node -> parent (points into fit[]) */
	double dist;            /* accumulated mean bound along the path, ns */
	size_t hops;
	int quality;            /* worst pair quality along the path, or NODE_REFERENCE */
	int64_t *corr;          /* per event: time on the reference timeline, ns */
	double *dminus, *dplus; /* per event: bounds, ns */
	long double a0;         /* corrected minus local at the node's first event, ns */
	long double a1;         /* d(corrected)/d(local) over the node's trace */
	int64_t x0;             /* local time in the middle of the trace, ns */
	long double offset;     /* corrected - local at x0, unrounded, ns */
	long double slope;      /* d(corrected)/d(local) from the first to the last event,
	                           unrounded (the conversion's slope for a single line) */
	double bound_min, bound_max, bound_mean; /* max(dminus, dplus) over events, ns */
	size_t nrecv, inversions, too_fast;      /* over messages received by this node */
	size_t moved;           /* events moved by the repair of message order */
	int64_t moved_max;      /* the largest of those moves, ns (0 if none) */
};

struct bcast_pt {
	double t_s;  /* reference time since the earliest corrected event, s */
	double d_ns; /* arrival on node minus arrival on the reference, ns */
	size_t node;
};

struct hclock_align {
	struct trace_set set;
	struct anode *node;
	struct repair_msg *msg; /* the matched messages: send (src, se), receive (dst, re) */
	size_t nmsg;
	struct pair_fit **fit;  /* [x * nnodes + y]: conversion x -> y, NULL without messages */
	size_t ref;
	int ran;
	struct hclock_align_opts opts;
	int64_t t0;             /* earliest corrected time, ns */
	struct bcast_pt *bc;
	size_t nbc;
	double bc_min, bc_max, bc_mean, bc_std; /* broadcast differential delay, ns */
	size_t *unmatched;      /* [(src * nnodes + dst) * 2]: sends src -> dst without their recv,
	                           [... + 1]: recvs on dst from src without their send */
	char missing[512];      /* the first one-sided message as an error line, "" if none */
	char *warn;
	size_t warnlen;
	size_t read_warnlen;    /* the first bytes of warn: the reader's, kept by every run */
	char *note;             /* the reader's information lines (trace_note), "\n" after each */
	size_t notelen;
};

/* a growing list of strings (malloc'd) */
struct strv {
	char **v;
	size_t n, cap;
};

void strv_free(struct strv *s);

/* The trace files behind the inputs (files, or directories of them) into paths, and their
 * one format. Returns 0 or HCLOCK_E* (err_set). */
int align_inputs(const char *const *inputs, size_t n, struct strv *paths,
                 const struct trace_format **fmt);

/* Pair every send with its recv (a->msg, a->node[].mate/matched); one-sided messages are
 * counted per pair (a->unmatched) and the first of them described in a->missing, for a run
 * that makes them fatal. Returns 0 or HCLOCK_E* (err_set): duplicates are errors. */
int align_match(struct hclock_align *a);

/* Inversions, too-fast messages and broadcast differential delays from the corrected
 * times. Returns 0 or HCLOCK_ENOMEM. */
int align_metrics(struct hclock_align *a);

/* called for event k of node v that the repair of message order moved, with the time the
 * alignment gave it (ns; its repaired time is a->node[v].corr[k]); non-zero stops */
typedef int (*align_moved_fn)(void *ctx, size_t v, size_t k, int64_t corrected_ns);

/* Every event the repair moved, nodes in input order, events in the node's order: the
 * alignment's times computed again (no memory kept per moved event). Returns 0, what fn
 * returned, or HCLOCK_ENOMEM. */
int align_each_moved(const struct hclock_align *a, align_moved_fn fn, void *ctx);

#endif
