/*
 * cmd_check.c - hclock check: synchronize, then measure how accurate the global clock is
 * right after the sync and after each wait (Alg. 6), N times in one launch; with emulation
 * (or --truth) also the true error against ground truth.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/truth.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "transport/comm.h"
#include "transport/topo.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define MAX_WAITS 32

/* The best clock hclock has is what a check shows without --sync: the continuous clock on
 * the default one-shot sync (far closer after 10 s, with far narrower bounds, than the
 * one-shot default alone: the figures are in docs/results.md). Under SimGrid SMPI, whose
 * simulated processes run no background thread for it, the one-shot default. */
#ifdef HCLOCK_SMPI
#define CHECK_DEFAULT_SYNC HCLOCK_SYNC_DEFAULT_SPEC
#else
#define CHECK_DEFAULT_SYNC "cont(" HCLOCK_SYNC_DEFAULT_SPEC ")"
#endif

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: mpirun -np P hclock check [OPTIONS]\n"
	        "Synchronize the ranks' clocks, then measure the global clock's offsets to rank 0\n"
	        "right after the sync and after each wait (Check-Global-Clock, Alg. 6).\n\n"
	        "  --sync SPEC        sync algorithm (default " CHECK_DEFAULT_SYNC "), e.g.\n"
	        "                     hca3/1000/skampi/100, jk/500/rtt/20, hca3/500/skampi/20/ri,\n"
	        "                     skampi/skampi/20, dunigan/1/20, none (all forms below)\n"
	        "  --wait LIST        durations after the sync to check at (default 0,10; e.g. 0,10s,10m)\n"
	        "  --sample FRACTION  check a random fraction of the processes (default 1)\n"
	        "  --repeat N         sync and check N times in this launch (default 1)\n"
	        "  --pingpongs N      SKaMPI-Offset exchanges per check measurement (default 20)\n"
	        "  --emulate SPEC     emulated clocks with known truth, e.g.\n"
	        "                     skew=100e-6,offset=1,noise=20e-9,nodes=2,seed=7\n"
	        "                     (also from the environment variable HCLOCK_EMULATE)\n"
	        "  --truth [realtime] report true errors without emulation: on one machine's kernel\n"
	        "                     clock, or (realtime) on hosts with clocks of their own that\n"
	        "                     share CLOCK_REALTIME (time namespaces, PTP-disciplined hosts);\n"
	        "                     also from HCLOCK_TRUTH (scripts/cluster run sets realtime)\n"
	        "  --clock NAME       base clock (default monotonic; all below)\n"
	        "  --seed N           seed of the process sample (default 1)\n"
	        "  --format FMT       table (default), json or csv\n"
	        "  --help             this text\n"
	        "Durations (span=S, dunigan's S): %s.\n\n", PARSE_DURATION_RULE);
	specs_print(f, 0);
}

struct run {
	double sync_s;
	uint64_t pingpongs_max, rounds;
	uint64_t retakes, unclean; /* summed over the processes (hclock_sync_quality) */
	double fit_rtt_max_ns;     /* ... and its largest over the processes */
	double fit_span_min_ns;    /* ... and its smallest (INFINITY: no process fitted) */
	double planned_s;          /* ... and the longest its spec planned for (quality) */
	int slow;                  /* it took far longer than that (a warning) */
	struct hclock_sync_topology topo; /* the hierarchy it found */
	struct check_point pt[MAX_WAITS];
	struct mpitool_cont cont; /* the continuous clock's exchanges (rank 0) */
	int have_auto;            /* an auto(...) sync: what it chose */
	struct hclock_sync_auto au;
};

/* some check of some run saw error bounds (a hull-learned clock) */
static int any_bounds(const struct run *runs, int nruns, int nwaits)
{
	for (int i = 0; i < nruns; i++)
		for (int w = 0; w < nwaits; w++)
			if (runs[i].pt[w].have_bounds)
				return 1;
	return 0;
}

static void print_json(const char *spec, int p, int nodes, const struct run *runs, int nruns,
                       int nwaits, int truth)
{
	int bounds = any_bounds(runs, nruns, nwaits);
	printf("{\"tool\":\"hclock check\",\"sync\":\"%s\",\"nprocs\":%d,\"nodes\":%d,\"runs\":[",
	       spec, p, nodes);
	for (int i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		printf("%s{\"sync_duration_s\":%.9f,\"pingpongs_max\":%llu,\"rounds\":%llu,"
		       "\"stalls\":{\"retakes\":%llu,\"unclean_models\":%llu,"
		       "\"fit_rtt_max_s\":%.12g,\"fit_span_min_s\":",
		       i ? "," : "", r->sync_s, (unsigned long long)r->pingpongs_max,
		       (unsigned long long)r->rounds, (unsigned long long)r->retakes,
		       (unsigned long long)r->unclean, r->fit_rtt_max_ns * 1e-9);
		if (isfinite(r->fit_span_min_ns))
			printf("%.9g},", r->fit_span_min_ns * 1e-9);
		else
			printf("null},");
		printf("\"planned_s\":%.6g,\"slow_sync\":%s,\"hierarchy\":{\"levels\":%d,"
		       "\"nodes\":%d,\"sockets\":%d},", r->planned_s, r->slow ? "true" : "false",
		       r->topo.levels, r->topo.nodes, r->topo.sockets);
		if (r->cont.have)
			printf("\"cont\":{\"exchanges_min\":%llu,\"exchanges_max\":%llu,"
			       "\"timeouts\":%llu,\"failed_processes\":%d,\"thread_cpu_max_s\":%.6f,"
			       "\"rtt_max_s\":%.9g,\"noise_max_s\":%.9g},",
			       (unsigned long long)r->cont.exchanges_min,
			       (unsigned long long)r->cont.exchanges_max,
			       (unsigned long long)r->cont.timeouts, r->cont.failed,
			       r->cont.thread_cpu_max_s, r->cont.rtt_max_ns * 1e-9,
			       r->cont.noise_max_ns * 1e-9);
		if (r->have_auto)
			printf("\"auto\":{\"budget_s\":%g,\"horizon_s\":%g,\"burst_s\":%.6f,"
			       "\"run_s\":%.6f,\"agree_s\":%.6f,\"slowest_point_s\":%.6f,\"pairs\":%d,"
			       "\"worst_pair\":[%d,%d],"
			       "\"groups\":%d,\"slowest_group_s\":%.6f,"
			       "\"floor_ns\":%.1f,\"spread_ns\":%.1f,\"tail_ns\":%.1f,\"nfit\":%d,"
			       "\"nfit_made\":%d,\"n\":%d,\"groups_made\":%d,\"groups_stalled\":%d,"
			       "\"span_s\":%.6g,\"estimator\":\"%s\",\"point_sigma_ns\":%.2f,"
			       "\"predicted_error_ns\":%.1f,\"spec\":\"%s\"},",
			       r->au.budget_s, r->au.horizon_s, r->au.burst_s, r->au.run_s,
			       r->au.agree_s, r->au.slowest_point_s, r->au.pairs,
			       r->au.worst_ref, r->au.worst_client, r->au.groups, r->au.slowest_group_s,
			       r->au.floor_ns, r->au.spread_ns, r->au.tail_ns, r->au.nfit,
			       r->au.nfit_made, r->au.npingpongs, r->au.groups_made, r->au.groups_stalled,
			       r->au.span_s, r->au.estimator, r->au.point_sigma_ns,
			       r->au.predicted_error_ns, r->au.spec);
		printf("\"checks\":[");
		for (int w = 0; w < nwaits; w++) {
			const struct check_point *c = &r->pt[w];
			printf("%s{\"after_s\":%g,\"read_after_s\":%.6f,\"max_abs_offset_s\":%.12g,"
			       "\"mean_abs_offset_s\":%.12g,\"measured\":%d,\"rtt_min_s\":%.12g,"
			       "\"rtt_median_s\":%.12g",
			       w ? "," : "", c->after_s, c->read_after_ns * 1e-9, c->max_abs_offset_ns * 1e-9,
			       c->mean_abs_offset_ns * 1e-9, c->nmeasured, c->rtt_min_ns * 1e-9,
			       c->rtt_median_ns * 1e-9);
			if (truth)
				printf(",\"true_max_abs_error_s\":%.12g", c->true_max_abs_error_ns * 1e-9);
			if (bounds && isfinite(c->bound_half_width_ns))
				printf(",\"bound_half_width_s\":%.12g", c->bound_half_width_ns * 1e-9);
			else if (bounds)
				printf(",\"bound_half_width_s\":null");
			if (bounds && truth)
				printf(",\"truth_in_bounds\":%s", c->truth_in_bounds ? "true" : "false");
			printf("}");
		}
		printf("]}");
	}
	printf("]}\n");
}

static void print_csv(const struct run *runs, int nruns, int nwaits, int truth)
{
	int bounds = any_bounds(runs, nruns, nwaits);
	printf("run,sync_duration_s,pingpongs_max,rounds,after_s,max_abs_offset_s,mean_abs_offset_s,"
	       "rtt_min_s%s%s%s\n",
	       truth ? ",true_max_abs_error_s" : "", bounds ? ",bound_half_width_s" : "",
	       bounds && truth ? ",truth_in_bounds" : "");
	for (int i = 0; i < nruns; i++)
		for (int w = 0; w < nwaits; w++) {
			const struct check_point *c = &runs[i].pt[w];
			printf("%d,%.9f,%llu,%llu,%g,%.12g,%.12g,%.12g", i + 1, runs[i].sync_s,
			       (unsigned long long)runs[i].pingpongs_max, (unsigned long long)runs[i].rounds,
			       c->after_s, c->max_abs_offset_ns * 1e-9, c->mean_abs_offset_ns * 1e-9,
			       c->rtt_min_ns * 1e-9);
			if (truth)
				printf(",%.12g", c->true_max_abs_error_ns * 1e-9);
			if (bounds)
				printf(",%.12g", c->bound_half_width_ns * 1e-9);
			if (bounds && truth)
				printf(",%s", c->truth_in_bounds ? "true" : "false");
			printf("\n");
		}
}

static void print_table(const char *spec, int p, int nodes, const char *clockdesc,
                        const struct run *runs, int nruns, int nwaits, int truth)
{
	int bounds = any_bounds(runs, nruns, nwaits);
	printf("hclock check: sync %s on %d process%s (%d node%s), clock %s\n", spec, p,
	       p == 1 ? "" : "es", nodes, nodes == 1 ? "" : "s", clockdesc);
	printf("%4s %10s %10s %8s %10s %14s %15s%s%s%s\n", "run", "sync_s", "pingpongs", "after_s",
	       "rtt_min_ns", "max|off|_ns", "mean|off|_ns", truth ? "  true_max|err|_ns" : "",
	       bounds ? "  bound_half_ns" : "", bounds && truth ? " in_bounds" : "");
	for (int i = 0; i < nruns; i++)
		for (int w = 0; w < nwaits; w++) {
			const struct check_point *c = &runs[i].pt[w];
			printf("%4d %10.4f %10llu %8g %10.0f %14.1f %15.1f", i + 1, runs[i].sync_s,
			       (unsigned long long)runs[i].pingpongs_max, c->after_s, c->rtt_min_ns,
			       c->max_abs_offset_ns, c->mean_abs_offset_ns);
			if (truth)
				printf(" %18.1f", c->true_max_abs_error_ns);
			if (bounds)
				printf(" %15.1f", c->bound_half_width_ns);
			if (bounds && truth)
				printf(" %10s", c->truth_in_bounds ? "yes" : "NO");
			printf("\n");
		}
	for (int i = 0; i < nruns; i++)
		if (runs[i].topo.levels > 1)
			printf("run %d: hierarchy: %d levels, %d nodes%s%.0d%s\n", i + 1,
			       runs[i].topo.levels, runs[i].topo.nodes, runs[i].topo.levels > 2 ? ", " : "",
			       runs[i].topo.levels > 2 ? runs[i].topo.sockets : 0,
			       runs[i].topo.levels > 2 ? " sockets" : "");
	for (int i = 0; i < nruns; i++)
		if (runs[i].cont.have)
			printf("run %d: continuous clock: %llu-%llu exchanges per process, %llu timeouts%s, "
			       "thread CPU %.3f s at most\n", i + 1,
			       (unsigned long long)runs[i].cont.exchanges_min,
			       (unsigned long long)runs[i].cont.exchanges_max,
			       (unsigned long long)runs[i].cont.timeouts,
			       runs[i].cont.failed ? " (some processes made no exchange)" : "",
			       runs[i].cont.thread_cpu_max_s);
	for (int i = 0; i < nruns; i++)
		if (runs[i].have_auto)
			printf("run %d: auto: worst of %d pairs ranks %d-%d, round trips floor %.0f ns, "
			       "spread %.0f ns, tail %.0f ns (bursts %.4f s, %d groups): ran %s (%s), "
			       "predicted error %.0f ns %g s after the sync\n", i + 1, runs[i].au.pairs,
			       runs[i].au.worst_ref, runs[i].au.worst_client, runs[i].au.floor_ns,
			       runs[i].au.spread_ns, runs[i].au.tail_ns, runs[i].au.burst_s,
			       runs[i].au.groups, runs[i].au.spec,
			       strcmp(runs[i].au.estimator, "hull") ? "a blurred floor: min-filtered offsets"
			                                            : "a sharp floor: hulls",
			       runs[i].au.predicted_error_ns, runs[i].au.horizon_s);
}

/* cmd_check's own options */
struct check_cli {
	double waits[MAX_WAITS], sample;
	int nwaits, truth, nodes;
	int64_t truth_width_ns; /* --truth realtime: the truth's own uncertainty (truth.h) */
	enum truth_mode truth_mode;
	long repeat, npp, seed;
};

static const char *check_opt(int c, const char *arg, void *ctx)
{
	struct check_cli *k = ctx;
	switch (c) {
	case 'w':
		if ((k->nwaits = opt_duration_list(arg, 0, 86400, k->waits, MAX_WAITS)) < 0)
			return "--wait needs ascending durations separated by commas, e.g. 0,1,10 or 0,10s,10m "
			       "(a bare number is seconds)";
		return NULL;
	case 'S':
		return opt_double(arg, 1e-9, 1, &k->sample)
		       ? "--sample needs a fraction in (0, 1], e.g. 0.1" : NULL;
	case 'r':
		return opt_long(arg, 1, 100000, &k->repeat)
		       ? "--repeat needs an integer from 1 to 100000" : NULL;
	case 'n':
		return opt_pingpongs(arg, &k->npp);
	case 'x':
		return opt_seed(arg, &k->seed);
	case 't':
		k->truth = 1;
		return truth_mode_parse(arg, &k->truth_mode) ? hclock_last_error() : NULL;
	}
	return "internal error: unhandled option";
}

/* Parse the command line: -1 to go on, else the exit code (help printed or one error line). */
static int read_input(struct mpitool *t, int argc, char **argv, struct mpitool_opts *o,
                      struct check_cli *k)
{
	static const struct option longopts[] = {
		MPITOOL_LONGOPTS,
		{"wait", required_argument, 0, 'w'},      {"sample", required_argument, 0, 'S'},
		{"repeat", required_argument, 0, 'r'},    {"pingpongs", required_argument, 0, 'n'},
		{"truth", optional_argument, 0, 't'},           {"seed", required_argument, 0, 'x'},
		{0, 0, 0, 0},
	};
	char badbuf[640];
	const char *bad = mpitool_parse(argc, argv, t, longopts, o, check_opt, k, badbuf,
	                                sizeof(badbuf));
	if (o->help) {
		if (t->rank == 0)
			usage(stdout);
		return 0;
	}
	if (!bad)
		bad = mpitool_truth_env(&k->truth, &k->truth_mode);
	if (bad) {
		mpitool_error(t, "%s", bad);
		return 2;
	}
	return -1;
}

/* The sync algorithm, the clock, and (--truth) whether this clock has a truth: 0, or the
 * exit code after one line. */
static int setup(struct mpitool *t, const struct mpitool_opts *o, struct check_cli *k,
                 hclock_sync **s)
{
	if (mpitool_sync_setup(t, o->sync, o->emulate, o->clock, s))
		return 2;
	if (comm_agree(MPI_COMM_WORLD, topo_count_nodes(MPI_COMM_WORLD, t->base, &k->nodes))) {
		mpitool_error(t, "%s", hclock_last_error());
		hclock_sync_free(*s);
		*s = NULL;
		return 2;
	}
	if (k->truth && t->emu)
		k->truth = 0; /* the emulation is the truth */
	if (k->truth && mpitool_truth_setup(t, k->truth_mode, &k->truth_width_ns)) {
		hclock_sync_free(*s);
		*s = NULL;
		return 2;
	}
	return 0;
}

/* A sync that took far longer than its spec planned (SLOW_FACTOR times, and a second more)
 * says so, with the check's round trips and the likely cause (rank 0). */
#define SLOW_FACTOR 5
#define SLOW_RTT_NS 100e3 /* a ping-pong slower than this is a slow network for MPI */
static void warn_slow(const struct mpitool *t, struct run *run)
{
	const struct check_point *c = &run->pt[0];
	run->slow = run->planned_s > 0 && run->sync_s > SLOW_FACTOR * run->planned_s &&
	            run->sync_s > run->planned_s + 1;
	if (t->rank != 0 || !run->slow)
		return;
	fprintf(stderr, "hclock check: warning: the sync took %.1f s, %.0fx the %.2g s its spec "
	        "planned; the check's round trips: median %.1f us, fastest %.1f us: %s\n",
	        run->sync_s, run->sync_s / run->planned_s, run->planned_s, c->rtt_median_ns * 1e-3,
	        c->rtt_min_ns * 1e-3,
	        c->rtt_median_ns > SLOW_RTT_NS
	        ? "slow round trips; where ranks busy-poll on few cores they starve the kernel's "
	          "network processing (Open MPI: --mca mpi_yield_when_idle 1)"
	        : "the round trips are fast now: processes were stalled during the sync (a busy "
	          "machine)");
}

/* Run i: sync (timed, the slowest rank's duration), then check. 0 or an agreed error, whose
 * line rank 0 has printed. */
static int run_one(struct mpitool *t, hclock_sync *s, const struct check_cli *k,
                   struct check_opts *co, long i, struct run *run)
{
	hclock_clock *g = NULL;
	double longest = k->waits[k->nwaits - 1];
	yield_barrier(MPI_COMM_WORLD);
	int64_t t0 = real_now_ns();
	int rc = hclock_sync_run(s, MPI_COMM_WORLD, t->base, &g);
	double dur = (double)(real_now_ns() - t0) * 1e-9;
	uint64_t pp = hclock_sync_pingpongs(s), rounds = hclock_sync_rounds(s);
	struct hclock_sync_quality q;
	hclock_sync_quality(s, &q);
	uint64_t st[2] = {q.retakes, q.unclean}, st_all[2] = {0, 0};
	hclock_sync_topology(s, &run->topo);
	if (!rc) /* a failed sync: its one line */
		mpitool_warnings(t, s);
	yield_reduce(&dur, &run->sync_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	yield_reduce(&pp, &run->pingpongs_max, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	yield_reduce(&rounds, &run->rounds, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	yield_reduce(st, st_all, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	yield_reduce(&q.fit_rtt_max_ns, &run->fit_rtt_max_ns, 1, MPI_DOUBLE, MPI_MAX, 0,
	             MPI_COMM_WORLD);
	yield_reduce(&q.fit_span_min_ns, &run->fit_span_min_ns, 1, MPI_DOUBLE, MPI_MIN, 0,
	             MPI_COMM_WORLD);
	yield_reduce(&q.planned_s, &run->planned_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	run->retakes = st_all[0];
	run->unclean = st_all[1];
	if (rc) {
		mpitool_error(t, "sync %s failed: %s", hclock_sync_spec(s), hclock_last_error());
		return rc;
	}
	run->have_auto = !hclock_sync_auto_choice(s, &run->au); /* after the failure's line */
	if (t->rank == 0 && (k->repeat > 1 || longest >= 2))
		fprintf(stderr, "hclock check: run %ld/%ld: synchronized in %.3f s; checking for "
		        "%g s\n", i + 1, k->repeat, run->sync_s, longest);
	co->seed = (uint64_t)k->seed + (uint64_t)i;
	if ((rc = check_clock(MPI_COMM_WORLD, g, co, run->pt))) /* agreed inside */
		mpitool_error(t, "check failed: %s", hclock_last_error());
	else
		warn_slow(t, run);
	/* a continuous sync stops here (collective), its clock frozen */
	int src = hclock_sync_stop(s);
	if (src && !rc)
		mpitool_error(t, "%s", hclock_last_error());
	mpitool_cont_report(t, s, &run->cont);
	rc = rc ? rc : src;
	hclock_clock_free(g);
	return rc;
}

/* Rank 0 prints every run in the chosen format. */
static void report(const struct mpitool *t, const hclock_sync *s, enum tool_format fmt,
                   const struct run *runs, const struct check_cli *k, int have_truth)
{
	char desc[128];
	if (t->rank != 0)
		return;
	if (t->emu)
		snprintf(desc, sizeof(desc), "emulated (%d virtual nodes)", hclock_emu_nodes(t->emu));
	else
		hclock_clock_describe(t->base, desc, sizeof(desc));
	if (fmt == FMT_JSON)
		print_json(hclock_sync_spec(s), t->size, k->nodes, runs, (int)k->repeat, k->nwaits,
		           have_truth);
	else if (fmt == FMT_CSV)
		print_csv(runs, (int)k->repeat, k->nwaits, have_truth);
	else
		print_table(hclock_sync_spec(s), t->size, k->nodes, desc, runs, (int)k->repeat,
		            k->nwaits, have_truth);
	fflush(stdout);
}

int cmd_check(int argc, char **argv)
{
	struct mpitool t;
	struct mpitool_opts o;
	struct check_cli k = {.waits = {0, 10}, .nwaits = 2, .sample = 1, .repeat = 1, .npp = 20,
	                      .seed = 1};
	hclock_sync *s = NULL;
	int rc;

	mpitool_init(&t, "hclock check", CHECK_DEFAULT_SYNC, &argc, &argv);
	if ((rc = read_input(&t, argc, argv, &o, &k)) >= 0 || (rc = setup(&t, &o, &k, &s)))
		return mpitool_finish(&t, rc);
	int have_truth = k.truth || t.emu;
	struct run *runs = calloc((size_t)k.repeat, sizeof(*runs));
	if ((rc = comm_agree(MPI_COMM_WORLD, runs ? 0 : err_set(HCLOCK_ENOMEM, "out of memory"))))
		mpitool_error(&t, "%s", hclock_last_error());
	struct check_opts co = {k.waits, k.nwaits, k.sample, (uint64_t)k.seed, (int)k.npp, t.emu,
	                        k.truth, (double)k.truth_width_ns};
	for (long i = 0; i < k.repeat && !rc; i++)
		rc = run_one(&t, s, &k, &co, i, &runs[i]);
	if (!rc)
		report(&t, s, o.fmt, runs, &k, have_truth);
	free(runs);
	hclock_sync_free(s);
	return mpitool_finish(&t, rc ? 1 : 0);
}
