/*
 * cmd_imbalance.c - hclock imbalance: how unevenly an operation (MPI_Barrier by default)
 * releases the processes. Every repetition starts at a common global time
 * (hclock_harmonize), each process records its exit on the global clock, and the
 * imbalance of the repetition is the last exit minus the first (the HCA3 paper's Fig. 8).
 * A barrier-based benchmark inherits this imbalance as error in its latencies.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/help.h"
#include "bench/op.h"
#include "bench/report.h"
#include "bench/scheme.h"
#include "bench/sizes.h"
#include "numerics/stats.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "util/parse.h"


static void usage(FILE *f)
{
	fprintf(f,
	        "usage: mpirun -np P hclock imbalance [OPTIONS]\n"
	        "Start an operation at one common global time, record every rank's exit, and\n"
	        "report the distribution of the exit imbalance (last exit - first exit).\n\n"
	        "  --op OP            operation (default barrier), one of:\n");
	bench_help_wrap(f, bench_op_names(), 0, 21, 79);
	fprintf(f,
	        "  --size N           message size in bytes for ops with a message (default 8)\n"
	        "  --reps N           repetitions (default 500)\n"
	        "  --warmup N         repetitions run first and not counted (default 10)\n"
	        "  --sync SPEC        sync algorithm (default " HCLOCK_DEFAULT_SYNC ")\n"
	        "  --slack-factor B   start slack = B x measured MPI_Bcast latency (default %g)\n"
	        "  --root N           root of rooted operations (default 0)\n"
	        "  --format FMT       table (default), csv or json\n"
	        "  --emulate SPEC     emulated clocks with known truth\n"
	        "  --clock NAME       base clock: monotonic (default), realtime, wtime, tsc\n"
	        "  --help             this text\n"
	        "Choose the barrier algorithm with the MPI library's own controls, e.g. Open MPI:\n"
	        "  mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_barrier_algorithm N\n"
	        "MPICH: MPIR_CVAR_BARRIER_INTRA_ALGORITHM=NAME in the environment.\n",
	        BENCH_DEFAULT_SLACK_FACTOR);
}

/* cmd_imbalance's own options */
struct imbalance_cli {
	const char *opname;
	long reps, warmup, root;
	double slack_factor;
	size_t size;
	char buf[256];
};

static const char *imbalance_opt(int c, const char *arg, void *ctx)
{
	struct imbalance_cli *k = ctx;
	switch (c) {
	case 'o':
		k->opname = arg;
		return NULL;
	case 'z': {
		size_t *v = NULL, n = 0;
		int bad = bench_sizes_parse(arg, &v, &n) || n != 1;
		if (!bad)
			k->size = v[0];
		free(v);
		return bad ? "--size needs one size in bytes, e.g. 8 or 1K" : NULL;
	}
	case 'n':
		return parse_int_str(arg, 1, 100000000L, &k->reps)
		       ? "--reps needs an integer from 1 to 100000000" : NULL;
	case 'w':
		return parse_int_str(arg, 0, 1000000L, &k->warmup)
		       ? "--warmup needs an integer from 0 to 1000000" : NULL;
	case 'B':
		return parse_number_str(arg, 1, 1e6, &k->slack_factor)
		       ? "--slack-factor needs a number from 1 to 1e6, e.g. 4" : NULL;
	case 'r':
		return parse_int_str(arg, 0, 0x7fffffffL, &k->root)
		       ? "--root needs a rank number >= 0" : NULL;
	}
	return "internal error: unhandled option";
}

int cmd_imbalance(int argc, char **argv)
{
	static const struct option longopts[] = {
		MPITOOL_LONGOPTS,
		{"op", required_argument, 0, 'o'},        {"size", required_argument, 0, 'z'},
		{"reps", required_argument, 0, 'n'},      {"warmup", required_argument, 0, 'w'},
		{"slack-factor", required_argument, 0, 'B'}, {"root", required_argument, 0, 'r'},
		{0, 0, 0, 0},
	};
	struct mpitool t;
	struct mpitool_opts o;
	struct imbalance_cli k = {.opname = "barrier", .reps = 500, .warmup = 10,
	                          .slack_factor = BENCH_DEFAULT_SLACK_FACTOR, .size = 8};
	char buf[512];

	mpitool_init(&t, "hclock imbalance", &argc, &argv);
	const char *bad = mpitool_parse(argc, argv, t.name, longopts, &o, imbalance_opt, &k, buf,
	                                sizeof(buf));
	if (!bad && o.help) {
		if (t.rank == 0)
			usage(stdout);
		return mpitool_finish(&t, 0);
	}
	const char *opname = k.opname, *spec = o.sync;
	const long reps = k.reps, warmup = k.warmup, root = k.root;
	const double slack_factor = k.slack_factor;
	const size_t size = k.size;
	const enum tool_format fmt = o.fmt;
	const struct bench_op *op = NULL;
	if (!bad && bench_op_lookup(opname, &op)) {
		snprintf(buf, sizeof(buf), "--op: %s", hclock_last_error());
		bad = buf;
	}
	if (!bad && root >= t.size) {
		snprintf(buf, sizeof(buf), "--root %ld is not a rank of the %d processes", root, t.size);
		bad = buf;
	}
	if (!bad && bench_buf_check(op, t.size, 0, size, (size_t)1 << 34)) {
		snprintf(buf, sizeof(buf), "%s", hclock_last_error());
		bad = buf;
	}
	if (bad) {
		mpitool_error(&t, "%s", bad);
		return mpitool_finish(&t, 2);
	}
	hclock_sync *s = NULL;
	if (mpitool_sync_setup(&t, spec, o.emulate, o.clock, &s))
		return mpitool_finish(&t, 2);
	hclock_clock *g = NULL;
	int rc = hclock_sync_run(s, MPI_COMM_WORLD, t.base, &g);
	if (rc) {
		mpitool_error(&t, "sync %s failed: %s", spec, hclock_last_error());
		hclock_sync_free(s);
		return mpitool_finish(&t, 1);
	}
	struct bench_buf b = {0};
	int64_t *exit_ns = malloc((size_t)reps * sizeof(int64_t));
	int64_t *start_ns = malloc((size_t)reps * sizeof(int64_t));
	int64_t *late = malloc((size_t)reps * sizeof(int64_t));
	int64_t *red = t.rank == 0 ? malloc(3 * (size_t)reps * sizeof(int64_t)) : NULL;
	int ok = exit_ns && start_ns && late && (t.rank != 0 || red) &&
	         !bench_buf_init(&b, op, MPI_COMM_WORLD, (int)root, 0, size);
	if ((rc = mpitool_agree(&t, ok ? 0 : -1))) {
		mpitool_error(&t, "out of memory for %ld repetitions", reps);
		goto out;
	}
	int64_t lat = 1;
	if ((rc = mpitool_agree(&t, bench_bcast_latency(MPI_COMM_WORLD, g, 31, &lat)))) {
		mpitool_error(&t, "%s", hclock_last_error());
		goto out;
	}
	int64_t base = (int64_t)(slack_factor * (double)lat);
	struct bench_slack slack;
	slack_init(&slack, base > BENCH_MIN_SLACK_NS ? base : BENCH_MIN_SLACK_NS, 100000000);
	for (long i = 0; i < warmup; i++)
		bench_op_call(&b);
	for (long i = 0; i < reps; i++) {
		int64_t l, any;
		hclock_harmonize(MPI_COMM_WORLD, g, slack.cur_ns, &start_ns[i], &l);
		bench_op_call(&b);
		exit_ns[i] = hclock_now(g);
		late[i] = l > 0;
		/* agree on lateness outside the measured region, for the slack to adapt */
		MPI_Allreduce(&late[i], &any, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
		slack_update(&slack, any != 0);
	}
	bench_buf_free(&b);
	/* first exit (as MAX of -exit), last exit, any late: three MAX reductions of reps */
	int64_t *neg = malloc((size_t)reps * sizeof(int64_t));
	if ((rc = mpitool_agree(&t, neg ? 0 : -1))) {
		mpitool_error(&t, "out of memory for %ld repetitions", reps);
		goto out;
	}
	for (long i = 0; i < reps; i++)
		neg[i] = -exit_ns[i];
	MPI_Reduce(neg, red, (int)reps, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(exit_ns, red ? red + reps : NULL, (int)reps, MPI_INT64_T, MPI_MAX, 0,
	           MPI_COMM_WORLD);
	MPI_Reduce(late, red ? red + 2 * reps : NULL, (int)reps, MPI_INT64_T, MPI_MAX, 0,
	           MPI_COMM_WORLD);
	free(neg);
	if (t.rank == 0) {
		double *imb = malloc((size_t)reps * sizeof(double));
		double *lat_end = malloc((size_t)reps * sizeof(double));
		size_t nv = 0;
		for (long i = 0; imb && lat_end && i < reps; i++) {
			if (red[2 * reps + i])
				continue;
			imb[nv] = (double)(red[reps + i] + red[i]); /* last - first */
			lat_end[nv] = (double)(red[reps + i] - start_ns[i]);
			nv++;
		}
		struct stats_summary si, sl;
		int have = imb && lat_end && nv > 0 && !stats_summarize(imb, nv, &si) &&
		           !stats_summarize(lat_end, nv, &sl);
		const char *sp = hclock_sync_spec(s);
		size_t msg = (op->flags & OP_NOSIZE) ? 0 : size;
		if (fmt == FMT_JSON) {
			printf("{\"tool\":\"hclock imbalance\",\"op\":\"%s\",\"size\":%zu,\"sync\":\"%s\","
			       "\"nprocs\":%d,\"reps\":%ld,\"valid\":%zu,\"invalid\":%zu,\"slack_s\":",
			       op->name, msg, sp, t.size, reps, nv, (size_t)reps - nv);
			json_num(stdout, (double)slack.cur_ns * 1e-9);
			printf(",\"imbalance\":");
			report_json_stats(stdout, have ? &si : NULL);
			printf(",\"latency\":");
			report_json_stats(stdout, have ? &sl : NULL);
			printf("}\n");
		} else if (fmt == FMT_CSV) {
			printf("metric,op,size,nprocs,valid,invalid");
			report_csv_stats_header(stdout);
			printf("\n");
			const char *names[] = {"imbalance", "latency"};
			const struct stats_summary *v[] = {&si, &sl};
			for (int k = 0; k < 2; k++) {
				printf("%s,%s,%zu,%d,%zu,%zu", names[k], op->name, msg, t.size, nv,
				       (size_t)reps - nv);
				report_csv_stats(stdout, have ? v[k] : NULL);
				printf("\n");
			}
		} else {
			char what[64];
			snprintf(what, sizeof(what), msg ? "%s of %zu bytes" : "%s", op->name, msg);
			printf("hclock imbalance: %s on %d processes, sync %s, %zu valid of %ld "
			       "repetitions (final slack %.2f us)\n", what, t.size, sp, nv, reps,
			       (double)slack.cur_ns * 1e-3);
			printf("%-10s %10s %10s %10s %10s %10s %10s %10s   (us)\n", "", "mean", "median",
			       "min", "max", "p90", "p99", "std");
			const char *names[] = {"imbalance", "latency"};
			const struct stats_summary *v[] = {&si, &sl};
			for (int k = 0; have && k < 2; k++)
				printf("%-10s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", names[k],
				       v[k]->mean * 1e-3, v[k]->median * 1e-3, v[k]->min * 1e-3,
				       v[k]->max * 1e-3, v[k]->p90 * 1e-3, v[k]->p99 * 1e-3, v[k]->std * 1e-3);
			printf("imbalance = last exit - first exit; latency = last exit - common start\n");
		}
		fflush(stdout);
		free(imb);
		free(lat_end);
	}
out:
	bench_buf_free(&b);
	free(exit_ns);
	free(start_ns);
	free(late);
	free(red);
	hclock_clock_free(g);
	hclock_sync_free(s);
	return mpitool_finish(&t, rc ? 1 : 0);
}
