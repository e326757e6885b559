/*
 * report.h - hclock bench's output: table, CSV, JSON and an SVG plot of latency against
 * message size (or process count). No MPI here: rows are plain numbers gathered by the MPI layer.
 */
#ifndef HCLOCK_BENCH_REPORT_H
#define HCLOCK_BENCH_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "numerics/stats.h"

/* One (scheme, op, size) result. */
struct bench_row {
	const char *scheme, *op;
	size_t size;          /* message size, bytes */
	size_t valid, invalid;
	int have_stats;       /* valid > 0: st is filled */
	struct stats_summary st; /* latencies, ns */
	double osu_mean_ns;   /* mean of the ranks' local times, ns */
	double duration_s;    /* wall time of the measurement, s */
	int64_t slack_ns;     /* start slack, ns (window, roundtime) */
	int64_t window_ns;    /* final window, ns (window) */
	int nprocs;           /* processes measured on (all of them without a sweep) */
	int nodes;            /* nodes they span */
	/* --overlap (nonblocking operations): t_pure and t_total, medians of the latency
	 * without and with the compute phase, ns; t_cpu, the mean compute phase, ns; the
	 * overlap, % (bench/overlap.h) */
	int have_overlap;
	double pure_ns, total_ns, cpu_ns, overlap_pct;
};

struct bench_report {
	const char *schemes;  /* as given: "roundtime" or "barrier,roundtime" */
	const char *common_schemes; /* the schemes with a common start ("window, roundtime") */
	const char *local_schemes;  /* those without ("barrier, none") */
	const char *sync;     /* canonical sync spec */
	int nprocs;
	int root, in_place;
	double bcast_latency_s;
	double slack_factor;
	double time_slice_s;
	const char *order;    /* "sequential", "shuffled", "interleaved" */
	int passes;           /* interleaved: passes over all measurements (else 1) */
	uint64_t seed;        /* of the shuffled orders */
	int root_shift;
	const char *buffers;  /* "cached", "rotate", "offcache" */
	size_t buffer_bytes;  /* rotate: bytes the sets cover; offcache: bytes written */
	size_t align;         /* buffer alignment, bytes (0: malloc's) */
	const char *datatype, *reduce_op; /* of the reductions: "int32", "sum", ... */
	int sweep;            /* rows at several process counts (--nprocs, --subsets) */
	const char *placement; /* of the sweep's processes: "packed", "spread" */
	const char *counts;   /* the v-variants' blocks: "regular" or "skewed" */
	const char *topology; /* the neighborhood collectives': "cart" or "graph" */
	int overlap;          /* --overlap: the table has its columns */
	const struct bench_row *rows;
	size_t nrows;
};

void report_table(FILE *f, const struct bench_report *r);
void report_csv(FILE *f, const struct bench_report *r);
void report_json(FILE *f, const struct bench_report *r);
/* Latency (median with its 95% CI band) against size, one line per scheme and op; in a
 * sweep, against the process count, one line per scheme, op and size.
 * Returns 0, or HCLOCK_EIO when the file cannot be written. */
int report_svg(const char *path, const struct bench_report *r);

/* A JSON number, or null when x is not finite. */
void json_num(FILE *f, double x);
/* {"mean_s":..,"median_s":..,"min_s":..,"max_s":..,"p90_s":..,"p99_s":..,"std_s":..,
 *  "ci95_median_s":[lo,hi]} of a summary in ns (all null when st is NULL). */
void report_json_stats(FILE *f, const struct stats_summary *st);
/* The CSV columns of the same, each preceded by a comma; header names with prefix. */
void report_csv_stats_header(FILE *f);
void report_csv_stats(FILE *f, const struct stats_summary *st);

#endif
