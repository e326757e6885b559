/*
 * cmd_bench.c - hclock bench: latency of MPI collectives measured on the global clock
 * (last exit minus the common start), with the measurement schemes of src/bench.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/collect.h"
#include "bench/help.h"
#include "bench/op.h"
#include "bench/report.h"
#include "bench/scheme.h"
#include "bench/sizes.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define MAX_LIST 64
#define MAX_SLICE_NS (86400 * (int64_t)1000000000) /* a day */

static void usage(FILE *f)
{
	char rooted[256];
	fprintf(f,
	        "usage: mpirun -np P hclock bench [OPTIONS]\n"
	        "Measure MPI collectives on the global clock: latency = last exit minus the common\n"
	        "start of each repetition; also the OSU-style mean of the processes' local times.\n\n"
	        "  --op OPS           comma list of operations (default allreduce):\n");
	bench_help_wrap(f, bench_op_names(), 0, 21, 79);
	fprintf(f,
	        "  --sizes LIST       bytes per process: 8,64,1K,1M or 8:1M (powers of two);\n"
	        "                     default 8:1M; reductions need multiples of 4 (int32 sum)\n"
	        "  --scheme LIST      comma list of schemes NAME[/ARG...] (default roundtime);\n"
	        "                     several, e.g. barrier,roundtime, to compare them:\n");
	bench_help_schemes(f, 21, 79);
	fprintf(f,
	        "  --sync SPEC        sync algorithm (default " HCLOCK_DEFAULT_SYNC ")\n"
	        "  --time-slice T     time per operation and size, e.g. 1s (default), 300ms, 10m;\n"
	        "                     a bare number is seconds\n"
	        "  --max-reps N       stop after N valid repetitions (default 0: no limit)\n"
	        "  --warmup N         repetitions run first and not counted (default 10)\n"
	        "  --rse X            also stop when the relative standard error of the mean\n"
	        "                     latency falls below X, e.g. 0.01 (default 0: off)\n"
	        "  --slack-factor B   start slack = B x measured MPI_Bcast latency (default %g,\n"
	        "                     at least %d ns)\n", BENCH_DEFAULT_SLACK_FACTOR,
	        BENCH_MIN_SLACK_NS);
	fprintf(f, "  --root N           root of");
	bench_help_wrap(f, bench_op_names_where(OP_ROOTED, OP_NONBLOCKING, rooted,
	                                        sizeof(rooted)), 28, 21, 79);
	fprintf(f,
	        "                     and their nonblocking forms (default 0)\n"
	        "  --in-place         use MPI_IN_PLACE where the operation allows it\n"
	        "  --validate         check each operation's result once per size first\n"
	        "  --format FMT       table (default), csv or json\n"
	        "  --raw FILE         every repetition of every rank (CSV: start and end on the\n"
	        "                     global clock, ns)\n"
	        "  --plot FILE.svg    latency against size per scheme with the 95%% CI band\n"
	        "  --emulate SPEC     emulated clocks with known truth, e.g.\n"
	        "                     skew=100e-6,offset=1,noise=20e-9,seed=7\n"
	        "  --clock NAME       base clock: monotonic (default), realtime, wtime, tsc\n"
	        "  --help             this text\n");
}

struct opts {
	struct mpitool_opts common; /* --sync, --emulate, --clock, --format, --help */
	const char *ops, *sizes, *schemes, *raw, *plot;
	int64_t slice_ns;
	long max_reps, warmup, root;
	double rse, slack_factor;
	int in_place, validate;
};

/* Split a comma list into at most max pointers into copy (strdup'ed, caller frees). */
static int split(const char *s, char **copy, char **items, int max)
{
	int n = 0;
	*copy = strdup(s);
	if (!*copy)
		return -1;
	char *save = NULL;
	for (char *t = strtok_r(*copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return -1;
		items[n++] = t;
	}
	if (!*s || strstr(s, ",,") || s[0] == ',' || s[strlen(s) - 1] == ',')
		return -1;
	return n;
}

/* cmd_bench's own options */
static const char *bench_opt(int c, const char *arg, void *ctx)
{
	struct opts *o = ctx;
	switch (c) {
	case 'o': o->ops = arg; return NULL;
	case 'z': o->sizes = arg; return NULL;
	case 'm': o->schemes = arg; return NULL;
	case 'R': o->raw = arg; return NULL;
	case 'P': o->plot = arg; return NULL;
	case 'I': o->in_place = 1; return NULL;
	case 'V': o->validate = 1; return NULL;
	case 'T':
		return parse_duration_ns(arg, strlen(arg), 1, MAX_SLICE_NS, &o->slice_ns)
		       ? "--time-slice needs a duration above zero and at most a day, e.g. 1s, "
		         "300ms or 10m; a bare number is seconds" : NULL;
	case 'n':
		return parse_int_str(arg, 0, 1000000000L, &o->max_reps)
		       ? "--max-reps needs an integer from 0 (no limit) to 1000000000" : NULL;
	case 'w':
		return parse_int_str(arg, 0, 1000000L, &o->warmup)
		       ? "--warmup needs an integer from 0 to 1000000" : NULL;
	case 'E':
		return parse_number_str(arg, 0, 1, &o->rse)
		       ? "--rse needs a fraction from 0 (off) to 1, e.g. 0.01" : NULL;
	case 'B':
		return parse_number_str(arg, 1, 1e6, &o->slack_factor)
		       ? "--slack-factor needs a number from 1 to 1e6 (B of Alg. 5), e.g. 4" : NULL;
	case 'r':
		return parse_int_str(arg, 0, 0x7fffffffL, &o->root)
		       ? "--root needs a rank number >= 0" : NULL;
	}
	return "internal error: unhandled option";
}

static const char *parse(int argc, char **argv, const char *name, struct opts *o, char *buf,
                         size_t len)
{
	static const struct option longopts[] = {
		MPITOOL_LONGOPTS,
		{"op", required_argument, 0, 'o'},         {"sizes", required_argument, 0, 'z'},
		{"scheme", required_argument, 0, 'm'},     {"time-slice", required_argument, 0, 'T'},
		{"max-reps", required_argument, 0, 'n'},   {"warmup", required_argument, 0, 'w'},
		{"rse", required_argument, 0, 'E'},        {"slack-factor", required_argument, 0, 'B'},
		{"root", required_argument, 0, 'r'},       {"in-place", no_argument, 0, 'I'},
		{"validate", no_argument, 0, 'V'},         {"raw", required_argument, 0, 'R'},
		{"plot", required_argument, 0, 'P'},       {0, 0, 0, 0},
	};
	return mpitool_parse(argc, argv, name, longopts, &o->common, bench_opt, o, buf, len);
}

/* Bytes of buffers one process may allocate: 3/4 of the node's memory shared by its ranks. */
static size_t memory_per_process(void)
{
	MPI_Comm node;
	int local = 1;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
	    MPI_SUCCESS) {
		MPI_Comm_size(node, &local);
		MPI_Comm_free(&node);
	}
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || page <= 0)
		return (size_t)1 << 40;
	double mem = (double)pages * (double)page * 0.75 / local;
	return mem > (double)((size_t)1 << 50) ? (size_t)1 << 50 : (size_t)mem;
}

struct raw_ctx {
	FILE *f;
	const char *scheme, *op;
	size_t size;
};

static void raw_row(void *arg, int rank, size_t rep, int64_t common_ns, int64_t start_ns,
                    int64_t end_ns, int valid)
{
	struct raw_ctx *c = arg;
	fprintf(c->f, "%s,%s,%zu,%zu,%d,%d,", c->scheme, c->op, c->size, rep, rank, valid);
	if (common_ns != BENCH_NO_COMMON)
		fprintf(c->f, "%lld", (long long)common_ns);
	fprintf(c->f, ",%lld,%lld\n", (long long)start_ns, (long long)end_ns);
}

/* The first rank with rc != 0 prints msg; returns the agreed rc. */
static int agree_msg(struct mpitool *t, int rc, const char *msg)
{
	int all = mpitool_agree(t, rc);
	if (all) {
		int who = rc ? t->rank : t->size, first;
		MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (t->rank == first)
			fprintf(stderr, "%s: %s\n", t->name, msg);
	}
	return all;
}

/* --validate: fill, call once, check on every rank. */
static int validate(struct mpitool *t, struct bench_buf *b)
{
	char line[600];
	int rc = bench_op_validate(b);
	snprintf(line, sizeof(line), "--validate: %s", hclock_last_error());
	return agree_msg(t, rc, line);
}

struct plan {
	struct bench_scheme *schemes[MAX_LIST];
	const char *scheme_names[MAX_LIST];
	const struct bench_op *ops[MAX_LIST];
	int nschemes, nops;
	size_t *sizes, nsizes;
};

static const char *make_plan(const struct opts *o, int nprocs, struct plan *pl, char *buf,
                             size_t len)
{
	char *copy = NULL, *items[MAX_LIST];
	int n = split(o->ops, &copy, items, MAX_LIST);
	if (n < 0) {
		free(copy);
		return "--op needs a comma list of operations, e.g. allreduce,bcast";
	}
	for (int i = 0; i < n; i++) {
		if (bench_op_lookup(items[i], &pl->ops[i])) {
			snprintf(buf, len, "--op: %s", hclock_last_error());
			free(copy);
			return buf;
		}
	}
	pl->nops = n;
	free(copy);
	n = split(o->schemes, &copy, items, MAX_LIST);
	if (n < 0) {
		free(copy);
		return "--scheme needs a comma list of schemes, e.g. barrier,roundtime";
	}
	for (int i = 0; i < n; i++) {
		if (bench_scheme_create(items[i], &pl->schemes[i])) {
			snprintf(buf, len, "--scheme: %s", hclock_last_error());
			free(copy);
			return buf;
		}
		pl->scheme_names[i] = bench_scheme_spec(pl->schemes[i]);
		pl->nschemes = i + 1;
	}
	free(copy);
	if (bench_sizes_parse(o->sizes, &pl->sizes, &pl->nsizes)) {
		snprintf(buf, len, "%s", hclock_last_error());
		return buf;
	}
	if (o->root >= nprocs) {
		snprintf(buf, len, "--root %ld is not a rank of the %d processes", o->root, nprocs);
		return buf;
	}
	return NULL;
}

static void free_plan(struct plan *pl)
{
	for (int i = 0; i < pl->nschemes; i++)
		bench_scheme_free(pl->schemes[i]);
	free(pl->sizes);
}

int cmd_bench(int argc, char **argv)
{
	struct mpitool t;
	struct opts o = {
		.ops = "allreduce", .sizes = "8:1M", .schemes = "roundtime", .slice_ns = 1000000000,
		.warmup = 10, .slack_factor = BENCH_DEFAULT_SLACK_FACTOR,
	};
	struct plan pl = {0};
	char buf[512];
	const char *bad;

	mpitool_init(&t, "hclock bench", &argc, &argv);
	bad = parse(argc, argv, t.name, &o, buf, sizeof(buf));
	if (!bad && o.common.help) {
		if (t.rank == 0)
			usage(stdout);
		return mpitool_finish(&t, 0);
	}
	if (!bad)
		bad = make_plan(&o, t.size, &pl, buf, sizeof(buf));
	/* every buffer must fit before anything runs */
	size_t maxmem = memory_per_process();
	for (int i = 0; !bad && i < pl.nops; i++)
		for (size_t k = 0; !bad && k < pl.nsizes; k++)
			if (bench_buf_check(pl.ops[i], t.size, o.in_place, pl.sizes[k], maxmem)) {
				snprintf(buf, sizeof(buf), "%s", hclock_last_error());
				bad = buf;
			}
	if (bad) {
		mpitool_error(&t, "%s", bad);
		free_plan(&pl);
		return mpitool_finish(&t, 2);
	}
	hclock_sync *sync = NULL;
	if (hclock_sync_create(o.common.sync, &sync)) {
		mpitool_error(&t, "%s", hclock_last_error());
		free_plan(&pl);
		return mpitool_finish(&t, 2);
	}
	FILE *raw = NULL;
	int rc = 0;
	if (o.raw && t.rank == 0 && !(raw = fopen(o.raw, "w")))
		rc = -1;
	snprintf(buf, sizeof(buf), "--raw: cannot write '%s'", o.raw ? o.raw : "");
	if (agree_msg(&t, rc, buf) || mpitool_clock(&t, o.common.emulate, o.common.clock)) {
		if (raw)
			fclose(raw);
		hclock_sync_free(sync);
		free_plan(&pl);
		return mpitool_finish(&t, 2);
	}
	if (raw)
		fprintf(raw, "scheme,op,size,rep,rank,valid,common_start_ns,start_ns,end_ns\n");

	hclock_clock *g = NULL;
	rc = hclock_sync_run(sync, MPI_COMM_WORLD, t.base, &g);
	if (rc) {
		mpitool_error(&t, "sync %s failed: %s", o.common.sync, hclock_last_error());
		goto out;
	}
	struct bench_params p = {
		.comm = MPI_COMM_WORLD, .clk = g, .time_slice_ns = o.slice_ns,
		.max_reps = o.max_reps, .warmup = o.warmup, .rse = o.rse,
		.slack_factor = o.slack_factor, .min_slack_ns = BENCH_MIN_SLACK_NS,
	};
	rc = bench_bcast_latency(MPI_COMM_WORLD, g, 31, &p.bcast_lat_ns);
	snprintf(buf, sizeof(buf), "%s", hclock_last_error());
	if ((rc = agree_msg(&t, rc, buf)))
		goto out;

	size_t maxrows = (size_t)pl.nschemes * (size_t)pl.nops * pl.nsizes;
	struct bench_row *rows = calloc(maxrows, sizeof(*rows));
	size_t nrows = 0;
	rc = agree_msg(&t, rows ? 0 : -1, "out of memory");
	for (int si = 0; !rc && si < pl.nschemes; si++)
		for (int oi = 0; !rc && oi < pl.nops; oi++)
			for (size_t zi = 0; !rc && zi < pl.nsizes; zi++) {
				const struct bench_op *op = pl.ops[oi];
				if ((op->flags & OP_NOSIZE) && zi > 0)
					break; /* barrier: one row */
				struct bench_buf b;
				int brc = bench_buf_init(&b, op, MPI_COMM_WORLD, (int)o.root, o.in_place,
				                         pl.sizes[zi]);
				snprintf(buf, sizeof(buf), "%s", hclock_last_error());
				if ((rc = agree_msg(&t, brc, buf)))
					break;
				if (o.validate && (rc = validate(&t, &b))) {
					bench_buf_free(&b);
					break;
				}
				struct bench_series s;
				bench_series_init(&s);
				int64_t t0 = real_now_ns();
				int mrc = bench_scheme_measure(pl.schemes[si], &p, &b, &s);
				double dur = (double)(real_now_ns() - t0) * 1e-9;
				snprintf(buf, sizeof(buf), "%s of %s at %zu bytes: %s", pl.scheme_names[si],
				         op->name, b.bytes, hclock_last_error());
				bench_buf_free(&b);
				struct bench_result res;
				int crc = 0;
				if (!(rc = agree_msg(&t, mrc, buf))) {
					crc = bench_collect(MPI_COMM_WORLD, &s, &res);
					snprintf(buf, sizeof(buf), "collecting the repetitions: %s",
					         hclock_last_error());
				}
				if (!rc && !(rc = agree_msg(&t, crc, buf))) {
					if (t.rank == 0) {
						struct bench_row *w = &rows[nrows++];
						w->scheme = pl.scheme_names[si];
						w->op = op->name;
						w->size = b.bytes;
						w->valid = res.nvalid;
						w->invalid = res.nreps - res.nvalid;
						w->have_stats = res.nvalid > 0 &&
						                !stats_summarize(res.lat_ns, res.nvalid, &w->st);
						w->osu_mean_ns = res.osu_mean_ns;
						w->duration_s = dur;
						w->slack_ns = s.slack_ns;
						w->window_ns = s.window_ns;
					}
					bench_result_free(&res);
					if (o.raw) {
						struct raw_ctx rc_ = {raw, pl.scheme_names[si], op->name, b.bytes};
						crc = bench_collect_raw(MPI_COMM_WORLD, &s, raw_row, &rc_);
						snprintf(buf, sizeof(buf), "--raw: %s", hclock_last_error());
						rc = agree_msg(&t, crc, buf);
					}
				}
				bench_series_free(&s);
			}
	if (!rc && t.rank == 0) {
		struct bench_report rep = {
			.schemes = o.schemes, .common_schemes = bench_scheme_names(1),
			.local_schemes = bench_scheme_names(0), .sync = hclock_sync_spec(sync), .nprocs = t.size,
			.root = (int)o.root, .in_place = o.in_place,
			.bcast_latency_s = (double)p.bcast_lat_ns * 1e-9, .slack_factor = o.slack_factor,
			.time_slice_s = (double)o.slice_ns * 1e-9, .rows = rows, .nrows = nrows,
		};
		if (o.common.fmt == FMT_JSON)
			report_json(stdout, &rep);
		else if (o.common.fmt == FMT_CSV)
			report_csv(stdout, &rep);
		else
			report_table(stdout, &rep);
		fflush(stdout);
		if (o.plot && (rc = report_svg(o.plot, &rep)))
			fprintf(stderr, "%s: --plot: %s\n", t.name, hclock_last_error());
	}
	free(rows);
out:
	if (raw && fclose(raw) && !rc) {
		fprintf(stderr, "%s: --raw: error writing '%s'\n", t.name, o.raw);
		rc = -1;
	}
	rc = mpitool_agree(&t, rc);
	hclock_clock_free(g);
	hclock_sync_free(sync);
	free_plan(&pl);
	return mpitool_finish(&t, rc ? 1 : 0);
}
