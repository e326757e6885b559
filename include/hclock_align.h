/*
 * hclock_align.h - put traces recorded on separate machines on one timeline, offline, with
 * guaranteed accuracy bounds (the accuracy-reporting convex hull algorithm of Poirier, Roy and
 * Dagenais). Serial; no MPI. Library libhclock_align (shared, or static for tools).
 *
 * Usage:
 *   hclock_align *a;
 *   struct hclock_align_opts o;
 *   hclock_align_opts_init(&o);
 *   if (hclock_align_open(paths, n, &a, err, sizeof err) ||
 *       hclock_align_run(a, &o, err, sizeof err)) { fprintf(stderr, "%s\n", err); ... }
 *   hclock_align_convert(a, node, local_ns, &ref_ns, &dminus, &dplus);
 *   hclock_align_write(a, "outdir", err, sizeof err);
 *   hclock_align_free(a);
 *
 * Conventions:
 * - Times are int64 ns of the node's own clock (local) or of the reference node's clock
 *   (corrected); bounds are double ns.
 * - Every function that can fail returns 0 on success or a negative HCLOCK_E* code
 *   (hclock_api.h):
 *     HCLOCK_EINVAL  bad input: a trace that is not valid in its format, an unknown node or
 *                    option, a call before hclock_align_run succeeded;
 *     HCLOCK_ENOMEM  out of memory;
 *     HCLOCK_EIO     a file or directory could not be opened, read, created, written or
 *                    renamed, or an input changed while it was read.
 *   The functions with an err buffer then fill it with one line "FILE:LINE: what is wrong;
 *   what is right" (err may be NULL, errlen 0); every failure also leaves that line in
 *   hclock_last_error() of the calling thread. The library never prints: warnings are
 *   collected (hclock_align_warnings), and so is information (hclock_align_notes).
 * - Threads: a handle is used by one thread at a time; handles are independent of each
 *   other, except that OTF2 archives must not be read or written by two threads at once
 *   (libotf2's error handler is process-wide).
 */
#ifndef HCLOCK_ALIGN_H
#define HCLOCK_ALIGN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hclock_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hclock_align hclock_align;

enum hclock_align_mode {
	HCLOCK_ALIGN_HULL = 0,       /* Duda's bisector, strict bounds (default) */
	HCLOCK_ALIGN_REGRESSION = 1, /* linear regression, for comparison */
};

/* the line chosen inside the corridor of valid lines (mode hull); both are valid, with the
 * same strict bounds around the true time */
enum hclock_align_estimate {
	HCLOCK_ALIGN_BISECTOR = 0, /* Duda's bisector of the angle between the extreme lines */
	HCLOCK_ALIGN_MEAN = 1,     /* the mean of the extreme lines' slopes and intercepts, as
	                              Trace Compass reports it */
};

#define HCLOCK_ALIGN_SEGMENTS_AUTO (-1)

struct hclock_align_opts {
	const char *reference;  /* reference node: its name (CSV: file name without .csv; pcap,
	                           CTF: host name) or its input path as given or found; NULL: the
	                           node minimising the total bound (ties: the first in input order) */
	int mode;               /* enum hclock_align_mode */
	int64_t segments_ns;    /* 0: one line per pair (fallback if the hulls intersect);
	                           HCLOCK_ALIGN_SEGMENTS_AUTO: split where needed;
	                           > 0: split into intervals of this many ns */
	int64_t min_latency_ns; /* for "too fast" messages, ns; < 0: estimated per pair as half the
	                           smallest round trip after correction */
	int unmatched_fail;     /* nonzero: a send without its recv or a recv without its send is
	                           an error (HCLOCK_EINVAL naming it); 0: skipped, and counted per
	                           pair in the report (real traces are cut at both ends) */
	int estimate;           /* enum hclock_align_estimate */
	int repair_order;       /* nonzero: after the alignment, move events forward in time,
	                           each at most to its latest time (corrected + delta_plus), so
	                           that every matched message is received at or after its send
	                           (plus min_latency_ns if >= 0, else plus 0) and every node keeps
	                           its order; the least such moves (docs/align.md, "Repairing
	                           message order"). The corrected times, bounds, report and
	                           written traces are then the repaired ones. A move past a bound,
	                           or a pairing of messages that no order allows, fails the run
	                           with HCLOCK_EINVAL naming the message. */
};

/* Defaults: reference NULL, mode hull, no segments, min_latency_ns -1, unmatched skipped,
 * estimate bisector, no repair of message order. */
HCLOCK_API void hclock_align_opts_init(struct hclock_align_opts *o);

/*
 * The trace formats this library reads and writes, in the order they are tried on an input:
 * format i's name ("csv", "pcap", "otf2"), and in *usage (if not NULL) one line describing its
 * inputs, both static strings. NULL (and *usage NULL) past the last format.
 */
HCLOCK_API const char *hclock_align_format(size_t i, const char **usage);

/*
 * Read the traces. inputs: n files (one per node) or directories of them (every file in a
 * directory that a known format recognises); all of one format. The whole of every input is
 * read here (later changes to the files do not matter). On success *out is a handle the
 * caller frees with hclock_align_free; on failure *out is NULL.
 */
HCLOCK_API int hclock_align_open(const char *const *inputs, size_t n, hclock_align **out,
                                 char *err, size_t errlen);

/* Fit, choose the reference, compose conversions, compute bounds, repair the message order
 * if asked (o->repair_order), compute the metrics; o is copied (o->reference only used
 * during the call). May be called again with other options. Warnings (e.g. hulls
 * intersect, fallback used) replace those of an earlier run. */
HCLOCK_API int hclock_align_run(hclock_align *a, const struct hclock_align_opts *o, char *err,
                                size_t errlen);

/* Newline-separated warnings of reading (hclock_align_open: e.g. a raw trace file that ends
 * in a partial record), of the last run and of writes since, "" if none. Owned by a,
 * valid until the next hclock_align_run, hclock_align_write or hclock_align_free. */
HCLOCK_API const char *hclock_align_warnings(const hclock_align *a);

/* Newline-separated information lines of reading (hclock_align_open: e.g. a CTF trace's
 * clock name and uuid, its numbers of events and streams, what its TCP segments were matched
 * on) and of writing (hclock_align_write: e.g. the clock of a corrected CTF trace), appended
 * in that order, "" if none: no warnings, nothing wrong. Owned by a, valid until the next
 * hclock_align_write or hclock_align_free. */
HCLOCK_API const char *hclock_align_notes(const hclock_align *a);

/* Number of nodes (traces) read. */
HCLOCK_API size_t hclock_align_nnodes(const hclock_align *a);
/* Name of node i (owned by a), or NULL if i is out of range. */
HCLOCK_API const char *hclock_align_node_name(const hclock_align *a, size_t i);
/* Index of the reference node (after a successful run). */
HCLOCK_API size_t hclock_align_reference(const hclock_align *a);

/*
 * Convert local time local_ns of node to the reference timeline: *ref_ns, with the true
 * reference time in [*ref_ns - *dminus_ns, *ref_ns + *dplus_ns] (strict for quality hull).
 * This is the alignment's conversion: the moves of a repair of message order, which belong
 * to events, not to local times, are not in it.
 * Any output pointer may be NULL. Returns 0, or HCLOCK_EINVAL if node is out of range, |local_ns|
 * >= 2^62, or no run has succeeded.
 */
HCLOCK_API int hclock_align_convert(const hclock_align *a, size_t node, int64_t local_ns,
                                    int64_t *ref_ns, double *dminus_ns, double *dplus_ns);

/* Write the corrected traces, same format as read, into outdir (created if missing),
 * atomically: all files complete under temporary names, then renamed. Warnings of the write
 * (e.g. OTF2 event times clamped to keep a location monotonic) are added to
 * hclock_align_warnings. */
HCLOCK_API int hclock_align_write(hclock_align *a, const char *outdir, char *err, size_t errlen);

#define HCLOCK_ALIGN_REPORT_TABLE 0
#define HCLOCK_ALIGN_REPORT_JSON 1
#define HCLOCK_ALIGN_REPORT_CSV 2
/* The report: a human table (json = HCLOCK_ALIGN_REPORT_TABLE, 0), one JSON object
 * (HCLOCK_ALIGN_REPORT_JSON, 1) or CSV tables (HCLOCK_ALIGN_REPORT_CSV), all with the same
 * content. Returns 0, HCLOCK_EINVAL before a successful run, HCLOCK_ENOMEM, or HCLOCK_EIO if f
 * reports a write error. */
HCLOCK_API int hclock_align_report(const hclock_align *a, FILE *f, int json);
/* CSV node,time_ns,corrected_ns,delta_minus_ns,delta_plus_ns at every event (errors as the
 * report, and HCLOCK_ENOMEM). */
HCLOCK_API int hclock_align_bounds_csv(const hclock_align *a, FILE *f);
/* CSV node,time_ns,corrected_ns,repaired_ns,shift_ns of every event the repair of message
 * order moved (time_ns the input's local time; corrected_ns the alignment's time, repaired_ns
 * the time after the repair, shift_ns their difference > 0; nodes in input order, events in
 * the node's order). Errors as hclock_align_bounds_csv, and HCLOCK_EINVAL if the run had no
 * repair_order. */
HCLOCK_API int hclock_align_moved_csv(const hclock_align *a, FILE *f);
/* SVG plot of the accuracy band and broadcast differential delays over time (Fig. 6); errors
 * as the report. */
HCLOCK_API int hclock_align_plot_svg(const hclock_align *a, FILE *f);

/* Free a and everything it owns; NULL is fine. */
HCLOCK_API void hclock_align_free(hclock_align *a);

#ifdef __cplusplus
}
#endif

#endif
