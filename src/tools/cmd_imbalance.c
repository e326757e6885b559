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

#include "bench/buf.h"
#include "bench/help.h"
#include "bench/op.h"
#include "bench/report.h"
#include "bench/scheme.h"
#include "bench/sizes.h"
#include "hclock_api.h"
#include "numerics/stats.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "transport/comm.h"
#include "util/err.h"
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
	        "  --sync SPEC        sync algorithm (default " HCLOCK_SYNC_DEFAULT_SPEC ")\n"
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
	struct mpitool_opts common; /* --sync, --emulate, --clock, --format, --help */
	const char *opname;
	const struct bench_op *op;  /* of opname, once checked */
	long reps, warmup, root;
	double slack_factor;
	size_t size;
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
		return opt_long(arg, 1, 100000000L, &k->reps)
		       ? "--reps needs an integer from 1 to 100000000" : NULL;
	case 'w':
		return opt_warmup(arg, &k->warmup);
	case 'B':
		return opt_slack_factor(arg, &k->slack_factor);
	case 'r':
		return opt_root(arg, &k->root);
	}
	return "internal error: unhandled option";
}

/* Collective: agree on rc (every rank gets the first failing rank's code and line,
 * "rank R: ...", transport/comm.h); on a failure rank 0 prints "what: " and that line. */
static int agree_line(struct mpitool *t, int rc, const char *what)
{
	if ((rc = comm_agree(MPI_COMM_WORLD, rc)))
		mpitool_error(t, "%s%s%s", what, what[0] ? ": " : "", hclock_last_error());
	return rc;
}

/* ---- input ------------------------------------------------------------------------- */

/* Parse argv into k and check it: NULL, or the error line. */
static const char *read_input(const struct mpitool *t, int argc, char **argv,
                              struct imbalance_cli *k, char *buf, size_t len)
{
	static const struct option longopts[] = {
		MPITOOL_LONGOPTS,
		{"op", required_argument, 0, 'o'},        {"size", required_argument, 0, 'z'},
		{"reps", required_argument, 0, 'n'},      {"warmup", required_argument, 0, 'w'},
		{"slack-factor", required_argument, 0, 'B'}, {"root", required_argument, 0, 'r'},
		{0, 0, 0, 0},
	};
	const char *bad = mpitool_parse(argc, argv, t, longopts, &k->common, imbalance_opt,
	                                k, buf, len);
	if (bad || k->common.help)
		return bad;
	if (bench_op_lookup(k->opname, &k->op)) {
		snprintf(buf, len, "--op: %s", hclock_last_error());
		return buf;
	}
	if (k->root >= t->size) {
		snprintf(buf, len, "--root %ld is not a rank of the %d processes", k->root, t->size);
		return buf;
	}
	if (bench_buf_check(k->op, t->size, &(struct bench_buf_opts){0}, k->size, (size_t)1 << 34)) {
		snprintf(buf, len, "%s", hclock_last_error());
		return buf;
	}
	return NULL;
}

/* ---- run --------------------------------------------------------------------------- */

/* The repetitions of one run on this rank, and on rank 0 their reduction. */
struct reps {
	long n;
	int64_t *start_ns; /* the common start of each repetition, global clock, ns */
	int64_t *exit_ns;  /* this rank's exit, global clock, ns */
	int64_t *late;     /* 1: this rank learned the start after it had passed */
	int64_t *red;      /* rank 0: per repetition -first exit, last exit, any late (3 n) */
	int64_t slack_ns;  /* the final start slack, ns */
};

static int reps_alloc(struct reps *r, long n, int rank)
{
	r->n = n;
	r->start_ns = malloc((size_t)n * sizeof(int64_t));
	r->exit_ns = malloc((size_t)n * sizeof(int64_t));
	r->late = malloc((size_t)n * sizeof(int64_t));
	r->red = rank == 0 ? malloc(3 * (size_t)n * sizeof(int64_t)) : NULL;
	if (r->start_ns && r->exit_ns && r->late && (rank != 0 || r->red))
		return 0;
	return err_set(HCLOCK_ENOMEM, "out of memory for %ld repetitions", n);
}

static void reps_free(struct reps *r)
{
	free(r->start_ns);
	free(r->exit_ns);
	free(r->late);
	free(r->red);
}

/* Collective: warm-up, then every repetition from a harmonized start; lateness and
 * failures are agreed after each (outside the measured region) so that the slack adapts
 * and all ranks stop together. 0 or this rank's first error. */
static int run_reps(MPI_Comm comm, hclock_clock *g, const struct imbalance_cli *k,
                    struct bench_buf *b, struct reps *r)
{
	int64_t lat = 1;
	int rc = bench_bcast_latency(comm, g, 31, &lat);
	for (long i = 0; i < k->warmup; i++) {
		int c = bench_op_call(b);
		rc = rc ? rc : c;
	}
	int lrc = bench_slack_latency(comm, g, lat, &lat); /* the first may have met a stall */
	rc = rc ? rc : lrc;
	int64_t base = (int64_t)(k->slack_factor * (double)lat);
	struct bench_slack slack;
	slack_init(&slack, base > BENCH_MIN_SLACK_NS ? base : BENCH_MIN_SLACK_NS, 100000000);
	for (long i = 0; i < r->n; i++) {
		int64_t l = 0, mine[2], any[2] = {0, 1};
		r->start_ns[i] = 0;
		int hrc = hclock_harmonize(comm, g, slack.cur_ns, &r->start_ns[i], &l);
		int c = bench_op_call(b);
		r->exit_ns[i] = hclock_now(g);
		rc = rc ? rc : hrc ? hrc : c;
		r->late[i] = l > 0;
		mine[0] = r->late[i];
		mine[1] = rc != 0;
		int arc = MPI_Allreduce(mine, any, 2, MPI_INT64_T, MPI_MAX, comm);
		rc = rc ? rc : comm_check(arc, "MPI_Allreduce (agreeing on lateness)");
		slack_update(&slack, any[0] != 0);
		if (any[1] || rc)
			break;
	}
	r->slack_ns = slack.cur_ns;
	return rc;
}

/* Collective: per repetition the first exit (as the MAX of -exit), the last exit and
 * whether any rank was late, on rank 0. 0, HCLOCK_ENOMEM (agreed) or HCLOCK_EMPI. */
static int reduce_reps(MPI_Comm comm, struct reps *r)
{
	int64_t *neg = malloc((size_t)r->n * sizeof(int64_t));
	int64_t *red = r->red;
	int n = (int)r->n, rc[3];
	/* agreed first: a rank without memory must not leave the others in the reductions */
	rc[0] = comm_agree(comm, neg ? 0 : err_set(HCLOCK_ENOMEM, "out of memory for %ld "
	                                           "repetitions", r->n));
	if (rc[0]) {
		free(neg);
		return rc[0];
	}
	for (long i = 0; i < r->n; i++)
		neg[i] = -r->exit_ns[i];
	rc[0] = MPI_Reduce(neg, red, n, MPI_INT64_T, MPI_MAX, 0, comm);
	rc[1] = MPI_Reduce(r->exit_ns, red ? red + n : NULL, n, MPI_INT64_T, MPI_MAX, 0, comm);
	rc[2] = MPI_Reduce(r->late, red ? red + 2 * n : NULL, n, MPI_INT64_T, MPI_MAX, 0, comm);
	free(neg);
	for (int i = 0; i < 3; i++)
		if (rc[i] != MPI_SUCCESS)
			return comm_check(rc[i], "MPI_Reduce (exits and lateness)");
	return 0;
}

/* Collective: the measurement communicator, the buffers, the repetitions and their
 * reduction. 0, or the agreed rc (its line printed by the first failing rank). */
static int run(struct mpitool *t, hclock_clock *g, const struct imbalance_cli *k,
               struct reps *r)
{
	MPI_Comm comm = MPI_COMM_NULL;
	struct bench_buf b = {0};
	int rc = agree_line(t, bench_comm_create(MPI_COMM_WORLD, &comm), "");
	if (!rc) {
		int arc = reps_alloc(r, k->reps, t->rank);
		if (!arc)
			arc = bench_buf_init(&b, k->op, comm, &(struct bench_buf_opts){.root = (int)k->root}, k->size);
		rc = agree_line(t, arc, "");
	}
	if (!rc)
		rc = agree_line(t, run_reps(comm, g, k, &b, r), k->op->name);
	if (!rc)
		rc = agree_line(t, reduce_reps(comm, r), "");
	bench_buf_free(&b);
	if (comm != MPI_COMM_NULL)
		MPI_Comm_free(&comm);
	return rc;
}

/* ---- report (rank 0) ------------------------------------------------------------------ */

struct summary {
	size_t nvalid;
	int have;                    /* nvalid > 0 and the statistics are filled */
	struct stats_summary imb;    /* last exit - first exit, ns */
	struct stats_summary lat;    /* last exit - common start, ns */
};

/* The statistics over the repetitions no rank was late for. */
static void summarize(const struct reps *r, struct summary *sm)
{
	long n = r->n;
	double *imb = malloc((size_t)n * sizeof(double));
	double *lat = malloc((size_t)n * sizeof(double));
	size_t nv = 0;
	for (long i = 0; imb && lat && i < n; i++) {
		if (r->red[2 * n + i])
			continue;
		imb[nv] = (double)(r->red[n + i] + r->red[i]); /* last - first */
		lat[nv] = (double)(r->red[n + i] - r->start_ns[i]);
		nv++;
	}
	sm->nvalid = nv;
	sm->have = imb && lat && nv > 0 && !stats_summarize(imb, nv, &sm->imb) &&
	           !stats_summarize(lat, nv, &sm->lat);
	free(imb);
	free(lat);
}

struct report_ctx {
	const struct imbalance_cli *k;
	const char *sync; /* canonical sync spec */
	int nprocs;
	size_t size;      /* message size reported: 0 for operations without one */
	long reps;
	int64_t slack_ns;
	const struct summary *sm;
};

static void print_json(const struct report_ctx *c)
{
	const struct summary *sm = c->sm;
	printf("{\"tool\":\"hclock imbalance\",\"op\":\"%s\",\"size\":%zu,\"sync\":\"%s\","
	       "\"nprocs\":%d,\"reps\":%ld,\"valid\":%zu,\"invalid\":%zu,\"slack_s\":",
	       c->k->op->name, c->size, c->sync, c->nprocs, c->reps, sm->nvalid,
	       (size_t)c->reps - sm->nvalid);
	json_num(stdout, (double)c->slack_ns * 1e-9);
	printf(",\"imbalance\":");
	report_json_stats(stdout, sm->have ? &sm->imb : NULL);
	printf(",\"latency\":");
	report_json_stats(stdout, sm->have ? &sm->lat : NULL);
	printf("}\n");
}

static void print_csv(const struct report_ctx *c)
{
	const struct summary *sm = c->sm;
	const char *names[] = {"imbalance", "latency"};
	const struct stats_summary *v[] = {&sm->imb, &sm->lat};
	printf("metric,op,size,nprocs,valid,invalid");
	report_csv_stats_header(stdout);
	printf("\n");
	for (int i = 0; i < 2; i++) {
		printf("%s,%s,%zu,%d,%zu,%zu", names[i], c->k->op->name, c->size, c->nprocs,
		       sm->nvalid, (size_t)c->reps - sm->nvalid);
		report_csv_stats(stdout, sm->have ? v[i] : NULL);
		printf("\n");
	}
}

static void print_table(const struct report_ctx *c)
{
	const struct summary *sm = c->sm;
	const char *names[] = {"imbalance", "latency"};
	const struct stats_summary *v[] = {&sm->imb, &sm->lat};
	char what[64];
	snprintf(what, sizeof(what), c->size ? "%s of %zu bytes" : "%s", c->k->op->name, c->size);
	printf("hclock imbalance: %s on %d processes, sync %s, %zu valid of %ld "
	       "repetitions (final slack %.2f us)\n", what, c->nprocs, c->sync, sm->nvalid, c->reps,
	       (double)c->slack_ns * 1e-3);
	printf("%-10s %10s %10s %10s %10s %10s %10s %10s   (us)\n", "", "mean", "median",
	       "min", "max", "p90", "p99", "std");
	for (int i = 0; sm->have && i < 2; i++)
		printf("%-10s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", names[i],
		       v[i]->mean * 1e-3, v[i]->median * 1e-3, v[i]->min * 1e-3, v[i]->max * 1e-3,
		       v[i]->p90 * 1e-3, v[i]->p99 * 1e-3, v[i]->std * 1e-3);
	printf("imbalance = last exit - first exit; latency = last exit - common start\n");
}

static void report(const struct mpitool *t, const struct imbalance_cli *k, hclock_sync *s,
                   const struct reps *r)
{
	struct summary sm;
	summarize(r, &sm);
	struct report_ctx c = {
		.k = k, .sync = hclock_sync_spec(s), .nprocs = t->size,
		.size = (k->op->flags & OP_NOSIZE) ? 0 : k->size, .reps = r->n,
		.slack_ns = r->slack_ns, .sm = &sm,
	};
	if (k->common.fmt == FMT_JSON)
		print_json(&c);
	else if (k->common.fmt == FMT_CSV)
		print_csv(&c);
	else
		print_table(&c);
	fflush(stdout);
}

int cmd_imbalance(int argc, char **argv)
{
	struct mpitool t;
	struct imbalance_cli k = {.opname = "barrier", .reps = 500, .warmup = 10,
	                          .slack_factor = BENCH_DEFAULT_SLACK_FACTOR, .size = 8};
	struct reps r = {0};
	hclock_sync *s = NULL;
	hclock_clock *g = NULL;
	char buf[1024];

	mpitool_init(&t, "hclock imbalance", HCLOCK_SYNC_DEFAULT_SPEC, &argc, &argv);
	const char *bad = read_input(&t, argc, argv, &k, buf, sizeof(buf));
	if (!bad && k.common.help) {
		if (t.rank == 0)
			usage(stdout);
		return mpitool_finish(&t, 0);
	}
	if (bad)
		mpitool_error(&t, "%s", bad);
	if (bad || mpitool_sync_setup(&t, k.common.sync, k.common.emulate, k.common.clock, &s))
		return mpitool_finish(&t, 2);
	int rc = hclock_sync_run(s, MPI_COMM_WORLD, t.base, &g);
	if (!rc) /* a failed sync: its one line */
		mpitool_warnings(&t, s);
	if (rc)
		mpitool_error(&t, "sync %s failed: %s", k.common.sync, hclock_last_error());
	else if (!(rc = run(&t, g, &k, &r)) && t.rank == 0)
		report(&t, &k, s, &r);
	if (!rc && (rc = hclock_sync_stop(s))) /* collective: a continuous sync ends here */
		mpitool_error(&t, "%s", hclock_last_error());
	struct mpitool_cont cs;
	if (!rc) { /* a clock whose exchanges failed: one line */
		mpitool_cont_report(&t, s, &cs);
		mpitool_cont_line(t.name, &cs);
	}
	reps_free(&r);
	hclock_clock_free(g);
	hclock_sync_free(s);
	return mpitool_finish(&t, rc ? 1 : 0);
}
