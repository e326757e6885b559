/*
 * hclock_align.h - put traces recorded on separate machines on one timeline, offline, with
 * guaranteed accuracy bounds (the accuracy-reporting convex hull algorithm of Poirier, Roy and
 * Dagenais). Serial; no MPI.
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
 * Conventions: times are int64 ns; bounds are double ns. Functions return 0 on success or a
 * negative errno value (-EINVAL bad input, -ENOMEM, -EIO), and then fill err with one line
 * "FILE:LINE: what is wrong; what is right" (err may be NULL).
 */
#ifndef HCLOCK_ALIGN_H
#define HCLOCK_ALIGN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hclock_align hclock_align;

enum hclock_align_mode {
	HCLOCK_ALIGN_HULL = 0,       /* Duda's bisector, strict bounds (default) */
	HCLOCK_ALIGN_REGRESSION = 1, /* linear regression, for comparison */
};

#define HCLOCK_ALIGN_SEGMENTS_AUTO (-1)

struct hclock_align_opts {
	const char *reference;  /* reference node name; NULL: the node minimising the total bound */
	int mode;               /* enum hclock_align_mode */
	int64_t segments_ns;    /* 0: one line per pair (fallback if the hulls intersect);
	                           HCLOCK_ALIGN_SEGMENTS_AUTO: split where needed;
	                           > 0: split into intervals of this many ns */
	int64_t min_latency_ns; /* for "too fast" messages; < 0: estimated per pair as half the
	                           smallest round trip after correction */
};

/* Defaults: reference NULL, mode hull, no segments, min_latency_ns -1. */
void hclock_align_opts_init(struct hclock_align_opts *o);

/*
 * Read the traces. inputs: n files (one per node) or directories of them (every file in a
 * directory that a known format recognises); all of one format (csv, pcap/pcapng, otf2).
 * On success *out is a handle the caller frees with hclock_align_free.
 */
int hclock_align_open(const char *const *inputs, size_t n, hclock_align **out, char *err,
                      size_t errlen);

/* Fit, choose the reference, compose conversions, compute bounds and metrics. Warnings (e.g.
 * hulls intersect, fallback used) are available afterwards from hclock_align_warnings. */
int hclock_align_run(hclock_align *a, const struct hclock_align_opts *o, char *err,
                     size_t errlen);

/* Newline-separated warnings of the last run, "" if none. Owned by a. */
const char *hclock_align_warnings(const hclock_align *a);

size_t hclock_align_nnodes(const hclock_align *a);
/* Name of node i (owned by a), or NULL if i is out of range. */
const char *hclock_align_node_name(const hclock_align *a, size_t i);
/* Index of the reference node (after run). */
size_t hclock_align_reference(const hclock_align *a);

/*
 * Convert local time local_ns of node to the reference timeline: *ref_ns, with the true
 * reference time in [*ref_ns - *dminus_ns, *ref_ns + *dplus_ns] (strict for quality hull).
 * Any output pointer may be NULL. Returns 0, or -EINVAL if node is out of range or run
 * has not succeeded.
 */
int hclock_align_convert(const hclock_align *a, size_t node, int64_t local_ns, int64_t *ref_ns,
                         double *dminus_ns, double *dplus_ns);

/* Write the corrected traces, same format as read, into outdir (created if missing), atomically:
 * all files complete under temporary names, then renamed. */
int hclock_align_write(const hclock_align *a, const char *outdir, char *err, size_t errlen);

/* The report: a human table (json = 0) or one JSON object (json = 1). Returns 0 or -EIO. */
int hclock_align_report(const hclock_align *a, FILE *f, int json);
/* CSV node,time_ns,corrected_ns,delta_minus_ns,delta_plus_ns at every event. */
int hclock_align_bounds_csv(const hclock_align *a, FILE *f);
/* SVG plot of the accuracy band and broadcast differential delays over time (Fig. 6). */
int hclock_align_plot_svg(const hclock_align *a, FILE *f);

void hclock_align_free(hclock_align *a);

#ifdef __cplusplus
}
#endif

#endif
