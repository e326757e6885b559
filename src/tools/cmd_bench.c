/*
 * cmd_bench.c - hclock bench: latency of MPI collectives measured on the global clock
 * (last exit minus the common start), with the measurement schemes of src/bench.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/buf.h"
#include "bench/collect.h"
#include "bench/help.h"
#include "bench/op.h"
#include "bench/order.h"
#include "bench/overlap.h"
#include "bench/report.h"
#include "bench/scheme.h"
#include "bench/sizes.h"
#include "bench/subsets.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "transport/comm.h"
#include "util/err.h"
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
	        "                     default 8:1M; reductions need multiples of the extent of\n"
	        "                     --datatype\n"
	        "  --datatype T       element type of the reductions: int32 (default), int64,\n"
	        "                     float, double or vec (2 doubles at stride 2, extent 32)\n"
	        "  --reduce-op R      their operation: sum (default), max, min, prod, band\n"
	        "                     (integer types only) or user (a + b + 1, MPI_Op_create)\n"
	        "  --counts C         block sizes of the v-variants (gatherv, ..., reduce_scatter,\n"
	        "                     neighbor_allgatherv, neighbor_alltoallv):\n"
	        "                     regular (default: every rank's block is size) or skewed\n"
	        "                     (rank r's block proportional to r + 1; P blocks hold P x\n"
	        "                     size in both)\n"
	        "  --topology T       of the neighborhood collectives: cart (default: a periodic\n"
	        "                     2-D grid of MPI_Dims_create, 4 neighbors) or graph (a ring\n"
	        "                     with chords r +- 1 and r + P/2, 3 neighbors)\n"
	        "  --scheme LIST      comma list of schemes NAME[/ARG...] (default roundtime);\n"
	        "                     several, e.g. barrier,roundtime, to compare them:\n");
	bench_help_schemes(f, 21, 79);
	fprintf(f,
	        "  --sync SPEC        sync algorithm (default " HCLOCK_SYNC_DEFAULT_SPEC ")\n"
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
	        "  --buffers B        cached (default: one set of buffers), rotate[=SIZE] (sets\n"
	        "                     covering SIZE, the next one for every call) or\n"
	        "                     offcache[=SIZE] (SIZE bytes written before every\n"
	        "                     repetition); SIZE defaults to 2 x the last-level cache\n"
	        "  --align BYTES      buffers start at multiples of BYTES (8 to 1M, a power of 2)\n"
	        "  --in-place         use MPI_IN_PLACE where the operation allows it\n"
	        "  --root-shift       move the root to the next rank after every call (as IMB's\n"
	        "                     -root_shift)\n"
	        "  --validate         check each operation's result once per size first\n"
	        "  --nprocs LIST      also measure on the first P processes for each P of LIST\n"
	        "                     (e.g. 2,4,8; each from 1 to the processes started), the\n"
	        "                     others waiting\n"
	        "  --subsets          the same for P = 2, 4, 8, ... below the processes started\n"
	        "                     and all of them (as IMB's -npmin 2)\n"
	        "  --placement PL     which processes make the first P: packed (default: node by\n"
	        "                     node) or spread (round robin over the nodes)\n"
	        "  --overlap          also measure the nonblocking operations with a compute\n"
	        "                     phase of their median latency between start and wait and\n"
	        "                     report the overlap as OSU does: max(0, 100 (1 - (t_total -\n"
	        "                     t_cpu) / t_pure)) %%\n"
	        "  --order ORDER      sequential, shuffled or interleaved[=N] (default\n"
	        "                     interleaved: N = %d passes over all measurements, each with\n"
	        "                     1/N of the time slice, in a new random order)\n"
	        "  --seed N           seed of the random orders (default: drawn, and reported)\n"
	        "  --quick            a short run: time slice 100ms and at most 1000 valid\n"
	        "                     repetitions, unless given\n"
	        "  --format FMT       table (default), csv or json\n"
	        "  --raw FILE         every repetition of every rank (CSV: start and end on the\n"
	        "                     global clock, ns)\n"
	        "  --plot FILE.svg    latency against size per scheme with the 95%% CI band\n"
	        "  --emulate SPEC     emulated clocks with known truth, e.g.\n"
	        "                     skew=100e-6,offset=1,noise=20e-9,seed=7\n"
	        "  --clock NAME       base clock: monotonic (default), realtime, wtime, tsc\n"
	        "  --help             this text\n", BENCH_ORDER_PASSES);
}

struct opts {
	struct mpitool_opts common; /* --sync, --emulate, --clock, --format, --help */
	const char *ops, *sizes, *schemes, *raw, *plot;
	int64_t slice_ns;
	long max_reps, warmup, root;
	double rse, slack_factor;
	int in_place, validate, root_shift, quick, overlap;
	const char *nprocs;          /* --nprocs LIST, NULL */
	int subsets;                 /* --subsets */
	enum bench_placement placement;
	int slice_set, max_reps_set; /* given explicitly (--quick leaves them) */
	struct bench_order order;
	long seed;                   /* -1: drawn by rank 0 */
	struct bench_buf_opts buf;   /* --buffers, --align (root, in_place, root_shift: above) */
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

/* --buffers cached|rotate[=SIZE]|offcache[=SIZE]: NULL, or the error line */
static const char *parse_buffers(const char *arg, struct bench_buf_opts *b)
{
	static const char *const names[] = {"cached", "rotate", "offcache"};
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	for (int k = 0; k < 3; k++) {
		if (strlen(names[k]) != n || strncmp(arg, names[k], n) || (eq && k == BUF_CACHED))
			continue;
		size_t *v = NULL, nv = 0;
		b->mode = (enum bench_buffers)k;
		b->mode_bytes = k == BUF_CACHED ? 0 : bench_cache_bytes();
		if (!eq)
			return NULL;
		int bad = bench_sizes_parse(eq + 1, &v, &nv) || nv != 1 || v[0] < 1;
		if (!bad)
			b->mode_bytes = v[0];
		free(v);
		if (!bad)
			return NULL;
		break;
	}
	return "--buffers needs cached, rotate[=SIZE] or offcache[=SIZE] (SIZE in bytes, "
	       "K/M/G suffixes, e.g. offcache=64M)";
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
	case 'L': o->overlap = 1; return NULL;
	case 'H': o->root_shift = 1; return NULL;
	case 'F': return parse_buffers(arg, &o->buf);
	case 'A': {
		size_t *v = NULL, n = 0;
		int bad = bench_sizes_parse(arg, &v, &n) || n != 1 || v[0] < 8 || v[0] > (1 << 20) ||
		          (v[0] & (v[0] - 1));
		o->buf.align = bad ? 0 : v[0];
		free(v);
		return bad ? "--align needs a power of two from 8 to 1M, e.g. 64 or 4K" : NULL;
	}
	case 'Q': o->quick = 1; return NULL;
	case 'N': o->nprocs = arg; return NULL;
	case 'U': o->subsets = 1; return NULL;
	case 'Y':
		return bench_placement_parse(arg, &o->placement)
		       ? "--placement needs packed or spread" : NULL;
	case 'D':
		o->buf.type = bench_dtype_find(arg);
		return o->buf.type ? NULL : "--datatype needs one of int32, int64, float, double, vec";
	case 'X':
		o->buf.rop = bench_rop_find(arg);
		return o->buf.rop >= 0 ? NULL
		       : "--reduce-op needs one of sum, max, min, prod, band, user";
	case 'C':
		o->buf.counts = !strcmp(arg, "skewed") ? COUNTS_SKEWED : COUNTS_REGULAR;
		return !strcmp(arg, "regular") || !strcmp(arg, "skewed") ? NULL
		       : "--counts needs regular or skewed";
	case 'G':
		o->buf.topology = !strcmp(arg, "graph") ? TOPO_GRAPH : TOPO_CART;
		return !strcmp(arg, "cart") || !strcmp(arg, "graph") ? NULL
		       : "--topology needs cart or graph";
	case 'O':
		return bench_order_parse(arg, &o->order) ? hclock_last_error() : NULL;
	case 'S':
		return opt_seed(arg, &o->seed);
	case 'T':
		o->slice_set = 1;
		return parse_duration_ns(arg, strlen(arg), 1, MAX_SLICE_NS, &o->slice_ns)
		       ? "--time-slice needs a duration above zero and at most a day, e.g. 1s, "
		         "300ms or 10m; a bare number is seconds" : NULL;
	case 'n':
		o->max_reps_set = 1;
		return opt_long(arg, 0, 1000000000L, &o->max_reps)
		       ? "--max-reps needs an integer from 0 (no limit) to 1000000000" : NULL;
	case 'w':
		return opt_warmup(arg, &o->warmup);
	case 'E':
		return opt_double(arg, 0, 1, &o->rse)
		       ? "--rse needs a fraction from 0 (off) to 1, e.g. 0.01" : NULL;
	case 'B':
		return opt_slack_factor(arg, &o->slack_factor);
	case 'r':
		return opt_root(arg, &o->root);
	}
	return "internal error: unhandled option";
}

static const char *parse(int argc, char **argv, const struct mpitool *t, struct opts *o, char *buf,
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
		{"plot", required_argument, 0, 'P'},       {"root-shift", no_argument, 0, 'H'},
		{"order", required_argument, 0, 'O'},      {"seed", required_argument, 0, 'S'},
		{"quick", no_argument, 0, 'Q'},            {"buffers", required_argument, 0, 'F'},
		{"align", required_argument, 0, 'A'},      {"datatype", required_argument, 0, 'D'},
		{"reduce-op", required_argument, 0, 'X'},  {"counts", required_argument, 0, 'C'},
		{"topology", required_argument, 0, 'G'},   {"overlap", no_argument, 0, 'L'},
		{"nprocs", required_argument, 0, 'N'},     {"subsets", no_argument, 0, 'U'},
		{"placement", required_argument, 0, 'Y'},
		{0, 0, 0, 0},
	};
	return mpitool_parse(argc, argv, t, longopts, &o->common, bench_opt, o, buf, len);
}

struct raw_ctx {
	FILE *f;
	const char *scheme, *op;
	size_t size;
	size_t first_rep; /* repetitions of the job's earlier passes */
	int nprocs;       /* a sweep: the processes measured on (the column nprocs), else 0 */
};

static void raw_row(void *arg, int rank, size_t rep, int64_t common_ns, int64_t start_ns,
                    int64_t end_ns, int valid)
{
	struct raw_ctx *c = arg;
	fprintf(c->f, "%s,%s,%zu,%zu,%d,%d,", c->scheme, c->op, c->size, c->first_rep + rep, rank,
	        valid);
	if (common_ns != BENCH_NO_COMMON)
		fprintf(c->f, "%lld", (long long)common_ns);
	fprintf(c->f, ",%lld,%lld", (long long)start_ns, (long long)end_ns);
	if (c->nprocs)
		fprintf(c->f, ",%d", c->nprocs);
	fputc('\n', c->f);
}

/* Collective over comm: agree on rc (every rank gets the first failing rank's code and line,
 * "rank R: ...", transport/comm.h); on a failure world rank 0 (rank 0 of every measurement
 * communicator) prints "what: " and that line. */
static int agree_on(struct mpitool *t, MPI_Comm comm, int rc, const char *what)
{
	if ((rc = comm_agree(comm, rc)))
		mpitool_error(t, "%s%s%s", what, what[0] ? ": " : "", hclock_last_error());
	return rc;
}

/* ---- input: options, the plan, and whether its buffers fit --------------------------- */

struct plan {
	struct bench_scheme *schemes[MAX_LIST];
	const struct bench_op *ops[MAX_LIST];
	int nschemes, nops;
	size_t *sizes, nsizes;
	int *counts, ncounts; /* process counts measured on (one: all, without a sweep) */
	int sweep;            /* --nprocs or --subsets */
};

static void free_plan(struct plan *pl)
{
	for (int i = 0; i < pl->nschemes; i++)
		bench_scheme_free(pl->schemes[i]);
	free(pl->sizes);
	free(pl->counts);
}

/* The operations of list into pl: 0, or -1 with the error line in buf. */
static int plan_ops(const char *list, struct plan *pl, char *buf, size_t len)
{
	char *copy = NULL, *items[MAX_LIST];
	int n = split(list, &copy, items, MAX_LIST), rc = 0;
	if (n < 0) {
		snprintf(buf, len, "--op needs a comma list of operations, e.g. allreduce,bcast");
		rc = -1;
	}
	for (int i = 0; !rc && i < n; i++, pl->nops = i)
		if ((rc = bench_op_lookup(items[i], &pl->ops[i])))
			snprintf(buf, len, "--op: %s", hclock_last_error());
	free(copy);
	return rc;
}

/* The schemes of list into pl: 0, or -1 with the error line in buf. */
static int plan_schemes(const char *list, struct plan *pl, char *buf, size_t len)
{
	char *copy = NULL, *items[MAX_LIST];
	int n = split(list, &copy, items, MAX_LIST), rc = 0;
	if (n < 0) {
		snprintf(buf, len, "--scheme needs a comma list of schemes, e.g. barrier,roundtime");
		rc = -1;
	}
	for (int i = 0; !rc && i < n; i++, pl->nschemes = i)
		if ((rc = bench_scheme_create(items[i], &pl->schemes[i])))
			snprintf(buf, len, "--scheme: %s", hclock_last_error());
	free(copy);
	return rc;
}

/* The operations, schemes and sizes of o: NULL, or the error line (in buf). */
static const char *make_plan(const struct opts *o, int nprocs, struct plan *pl, char *buf,
                             size_t len)
{
	if (plan_ops(o->ops, pl, buf, len) || plan_schemes(o->schemes, pl, buf, len))
		return buf;
	if (bench_sizes_parse(o->sizes, &pl->sizes, &pl->nsizes)) {
		snprintf(buf, len, "%s", hclock_last_error());
		return buf;
	}
	if (o->buf.type && !bench_rop_allowed(o->buf.type, o->buf.rop)) {
		snprintf(buf, len, "--reduce-op %s needs an integer --datatype (int32 or int64), not "
		         "%s", bench_rop_name(o->buf.rop), o->buf.type->name);
		return buf;
	}
	int nb = 0;
	for (int i = 0; i < pl->nops; i++)
		nb |= (pl->ops[i]->flags & OP_NONBLOCKING) != 0;
	if (o->overlap && !nb) {
		snprintf(buf, len, "--overlap needs a nonblocking operation in --op (e.g. "
		         "iallreduce, ialltoall): the compute phase goes between its start and wait");
		return buf;
	}
	if (o->nprocs && o->subsets) {
		snprintf(buf, len, "--nprocs and --subsets both give the process counts; give one");
		return buf;
	}
	pl->sweep = o->nprocs || o->subsets;
	if (!pl->sweep && (pl->counts = malloc(sizeof(int)))) {
		pl->counts[0] = nprocs;
		pl->ncounts = 1;
	} else if (!pl->sweep || bench_counts_parse(o->nprocs, nprocs, &pl->counts,
	                                              &pl->ncounts)) {
		snprintf(buf, len, "%s", pl->sweep ? hclock_last_error() : "out of memory");
		return buf;
	}
	if (o->root >= pl->counts[0]) {
		snprintf(buf, len, "--root %ld is not a rank of the %d processes%s", o->root,
		         pl->counts[0], pl->sweep ? " of the smallest count" : "");
		return buf;
	}
	return NULL;
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

/* Collective (memory_per_process): parse argv into o and pl and check that every buffer
 * fits before anything runs: NULL, or the error line. */
static const char *read_input(struct mpitool *t, int argc, char **argv, struct opts *o,
                              struct plan *pl, char *buf, size_t len)
{
	const char *bad = parse(argc, argv, t, o, buf, len);
	if (!bad && !o->common.help)
		bad = make_plan(o, t->size, pl, buf, len);
	o->buf.root = (int)o->root;
	o->buf.in_place = o->in_place;
	o->buf.root_shift = o->root_shift;
	if (o->quick && !o->slice_set)
		o->slice_ns = 100000000;
	if (o->quick && !o->max_reps_set)
		o->max_reps = 1000;
	size_t maxmem = memory_per_process();
	for (int i = 0; !bad && i < pl->nops; i++)
		for (size_t k = 0; !bad && k < pl->nsizes; k++)
			if (bench_buf_check(pl->ops[i], t->size, &o->buf, pl->sizes[k], maxmem)) {
				snprintf(buf, len, "%s", hclock_last_error());
				bad = buf;
			}
	return bad;
}

/* ---- run: every (scheme, op, size) ------------------------------------------------- */

/* One (scheme, op, size) and, on rank 0, its merged passes. */
struct job {
	int si, oi;
	int ci;          /* the process count: plan counts[ci], run subsets[ci] */
	size_t zi;
	size_t nreps;    /* repetitions recorded over the passes (every rank) */
	size_t nvalid;
	double *lat_ns;  /* rank 0: the valid latencies of all passes, ns */
	double osu_sum;  /* rank 0: osu_mean_ns x nvalid summed over the passes */
	double dur_s;    /* rank 0: wall time over the passes */
	int64_t slack_ns, window_ns; /* of the last pass */
	struct stats_running rse_acc; /* every rank of the measurement: its valid latencies over
	                                 the passes so far, for --rse (zero: none yet) */
	/* rank 0, --overlap: t_pure, t_total (median latencies) and t_cpu (the slowest
	 * rank's median compute phase), ns; have_ov: measured */
	int have_ov;
	double pure_ns, total_ns, cpu_ns;
};

struct run {
	struct mpitool *t;
	const struct opts *o;
	const struct plan *pl;
	struct bench_params p; /* p.comm: the measurement communicator of the job measured */
	struct bench_subset *sub; /* per process count of the plan: its communicator */
	uint64_t seed;          /* of the shuffled orders (agreed) */
	FILE *raw;             /* rank 0, --raw */
	struct job *jobs;      /* in the plan's order: scheme, op, size */
	size_t njobs;
	int64_t *bcast_ns;     /* per process count: its MPI_Bcast latency, ns */
	struct bench_row *rows; /* rank 0: the results, in the plan's order */
	size_t nrows;
};

/* Rank 0: the result row of a job whose passes are all in. */
static void add_row(struct run *r, const struct job *j)
{
	struct bench_row *w = &r->rows[r->nrows++];
	w->scheme = bench_scheme_spec(r->pl->schemes[j->si]);
	w->op = r->pl->ops[j->oi]->name;
	w->size = (r->pl->ops[j->oi]->flags & OP_NOSIZE) ? 0 : r->pl->sizes[j->zi];
	w->nprocs = r->pl->counts[j->ci];
	w->nodes = r->sub[j->ci].nodes;
	w->valid = j->nvalid;
	w->invalid = j->nreps - j->nvalid;
	w->have_stats = j->nvalid > 0 && !stats_summarize(j->lat_ns, j->nvalid, &w->st);
	w->osu_mean_ns = j->nvalid ? j->osu_sum / (double)j->nvalid : NAN;
	w->duration_s = j->dur_s;
	w->slack_ns = j->slack_ns;
	w->window_ns = j->window_ns;
	w->have_overlap = j->have_ov;
	w->pure_ns = j->pure_ns;
	w->total_ns = j->total_ns;
	w->cpu_ns = j->cpu_ns;
	w->overlap_pct = j->have_ov ? overlap_pct(j->pure_ns, j->total_ns, j->cpu_ns) : NAN;
}

/* Collective: one pass's series into its job (rank 0's latencies) and to --raw. 0, or the
 * agreed rc. */
static int gather_one(struct run *r, struct job *j, const struct bench_buf *b,
                      const struct bench_series *s, double dur)
{
	struct bench_result res;
	const char *scheme = bench_scheme_spec(r->pl->schemes[j->si]);
	int rc = agree_on(r->t, r->p.comm, bench_collect(r->p.comm, s, &res),
	                  "collecting the repetitions");
	if (rc)
		return rc;
	if (r->t->rank == 0 && res.nvalid) {
		double *l = realloc(j->lat_ns, (j->nvalid + res.nvalid) * sizeof(*l));
		if (!l)
			rc = err_set(HCLOCK_ENOMEM, "out of memory for %zu latencies",
			             j->nvalid + res.nvalid);
		else
			memcpy(l + j->nvalid, res.lat_ns, res.nvalid * sizeof(*l));
		j->lat_ns = l ? l : j->lat_ns;
		j->osu_sum += res.osu_mean_ns * (double)res.nvalid;
	}
	if ((rc = agree_on(r->t, r->p.comm, rc, "collecting the repetitions"))) {
		bench_result_free(&res);
		return rc;
	}
	size_t first = j->nreps;
	j->nreps += res.nreps;
	j->nvalid += res.nvalid;
	j->dur_s += dur;
	j->slack_ns = s->slack_ns;
	j->window_ns = s->window_ns;
	bench_result_free(&res);
	if (r->o->raw && !b->compute_iters) { /* --overlap's measurements are not in --raw */
		struct raw_ctx ctx = {r->raw, scheme, b->op->name, b->bytes, first,
		                      r->pl->sweep ? r->pl->counts[j->ci] : 0};
		rc = agree_on(r->t, r->p.comm, bench_collect_raw(r->p.comm, s, raw_row, &ctx),
		              "--raw");
	}
	return rc;
}

#define CPU_SAMPLES 4096 /* --overlap: compute phases kept per measurement, the last ones */

/* the median of x[0..n), ns; NAN when n is 0 (or without memory) */
static double median_ns(int64_t *x, size_t n)
{
	double *d = n ? malloc(n * sizeof(*d)) : NULL;
	struct stats_summary st;
	double m = NAN;
	for (size_t i = 0; d && i < n; i++)
		d[i] = (double)x[i];
	if (d && !stats_summarize(d, n, &st))
		m = st.median;
	free(d);
	return m;
}

/* Collective: one pass of one job (iters > 0: --overlap's, with a compute phase of iters
 * iterations in every call, not validated again). 0, or the agreed rc (its line printed). */
static int measure_one(struct run *r, struct job *j, uint64_t iters)
{
	struct bench_scheme *sc = r->pl->schemes[j->si];
	const struct bench_op *op = r->pl->ops[j->oi];
	struct bench_buf b;
	struct bench_series s;
	char what[256];
	int rc = bench_buf_init(&b, op, r->p.comm, &r->o->buf, r->pl->sizes[j->zi]);
	/* with --root-shift, --validate checks every root the measurement will use */
	int nroots = b.root_shift ? b.nprocs : 1;
	b.root_shift = 0;
	rc = agree_on(r->t, r->p.comm, rc, "");
	for (int k = 0; !rc && r->o->validate && !iters && k < nroots; k++) {
		b.root = (int)((r->o->root + k) % b.nprocs);
		rc = agree_on(r->t, r->p.comm, bench_op_validate(&b), "--validate");
	}
	if (rc) {
		bench_buf_free(&b);
		return rc;
	}
	b.root = (int)r->o->root;
	b.root_shift = nroots > 1;
	int64_t cpu[CPU_SAMPLES];
	b.compute_iters = iters;
	b.compute_ns = cpu;
	b.compute_cap = iters ? CPU_SAMPLES : 0;
	bench_series_init(&s);
	/* the start slack's latency once more, outside the measurement's time: the launch's
	 * figure may have met a stall (bench_slack_latency) */
	r->p.slack_lat_ns = 0;
	if (sc->type->common_start &&
	    (rc = agree_on(r->t, r->p.comm, bench_slack_latency(r->p.comm, r->p.clk,
	                   r->p.bcast_lat_ns, &r->p.slack_lat_ns), "measuring the MPI_Bcast "
	                   "latency"))) {
		bench_buf_free(&b);
		return rc;
	}
	int64_t t0 = real_now_ns();
	rc = bench_scheme_measure(sc, &r->p, &b, &s);
	double dur = (double)(real_now_ns() - t0) * 1e-9;
	snprintf(what, sizeof(what), "%s of %s at %zu bytes", bench_scheme_spec(sc), op->name,
	         b.bytes);
	if (!(rc = agree_on(r->t, r->p.comm, rc, what)))
		rc = gather_one(r, j, &b, &s, dur);
	if (!rc && iters) {
		/* t_cpu: the slowest rank's median compute phase (the latency is the slowest
		 * rank's; a median, as t_pure and t_total are, so that phases a preemption
		 * stretched count no more there than in t_total) */
		double mine = median_ns(cpu, b.ncompute < CPU_SAMPLES ? b.ncompute : CPU_SAMPLES);
		double most = NAN;
		rc = agree_on(r->t, r->p.comm, comm_check(MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE,
		              MPI_MAX, r->p.comm), "MPI_Allreduce (t_cpu)"), "--overlap");
		j->cpu_ns = most;
	}
	bench_series_free(&s);
	bench_buf_free(&b);
	return rc;
}

/* The jobs of the plan in its order (barrier: one size). 0 or HCLOCK_ENOMEM. */
static int make_jobs(struct run *r)
{
	const struct plan *pl = r->pl;
	r->jobs = calloc((size_t)pl->nschemes * (size_t)pl->nops * (size_t)pl->ncounts *
	                 pl->nsizes + 1, sizeof(*r->jobs));
	if (!r->jobs)
		return err_set(HCLOCK_ENOMEM, "out of memory for the measurements");
	for (int si = 0; si < pl->nschemes; si++)
		for (int oi = 0; oi < pl->nops; oi++)
			for (int ci = 0; ci < pl->ncounts; ci++)
				for (size_t zi = 0; zi < pl->nsizes; zi++) {
					if ((pl->ops[oi]->flags & OP_NOSIZE) && zi > 0)
						break;
					r->jobs[r->njobs++] = (struct job){.si = si, .oi = oi, .ci = ci,
					                                   .zi = zi};
				}
	return 0;
}

/* rank 0: the median of the valid latencies of j, ns (NAN without any) */
static double job_median(const struct job *j)
{
	struct stats_summary st;
	return j->nvalid && !stats_summarize(j->lat_ns, j->nvalid, &st) ? st.median : NAN;
}

/* Collective, --overlap: after all passes, every job of a nonblocking operation once more
 * (one pass's share of the slice, the plan's order), with a compute phase between start and
 * wait calibrated on each rank to take the job's t_pure (the median latency measured so
 * far). 0, or the agreed rc. */
/* Collective over the world: job j (with iters, --overlap's compute phase) on its
 * subset's communicator; in a sweep the processes outside it wait. 0, or the agreed rc. */
static int run_job(struct run *r, struct job *j, uint64_t iters)
{
	const struct bench_subset *ss = &r->sub[j->ci];
	int member = ss->comm != MPI_COMM_NULL, rc = 0;
	r->p.comm = ss->comm;
	r->p.bcast_lat_ns = r->bcast_ns[j->ci];
	/* --rse judges the measurement over its passes: one that met it in an earlier pass is
	 * left out (its members hold the same agreed latencies, so they all leave it out) */
	r->p.rse_acc = &j->rse_acc;
	if (member && !stop_rse_reached(&j->rse_acc, r->p.rse))
		rc = measure_one(r, j, iters);
	r->p.rse_acc = NULL;
	return r->pl->sweep ? bench_subsets_join(MPI_COMM_WORLD, rc, member) : rc;
}

static int measure_overlap(struct run *r)
{
	double rate = overlap_rate(); /* iterations per ns, on this rank */
	int rc = 0;
	for (size_t k = 0; !rc && k < r->njobs; k++) {
		struct job *j = &r->jobs[k];
		if (!(r->pl->ops[j->oi]->flags & OP_NONBLOCKING))
			continue;
		const struct bench_subset *ss = &r->sub[j->ci];
		int member = ss->comm != MPI_COMM_NULL;
		double pure = r->t->rank == 0 ? job_median(j) : 0;
		struct job ov = {.si = j->si, .oi = j->oi, .ci = j->ci, .zi = j->zi};
		r->p.comm = ss->comm;
		r->p.bcast_lat_ns = r->bcast_ns[j->ci];
		if (member)
			rc = agree_on(r->t, ss->comm, comm_check(MPI_Bcast(&pure, 1, MPI_DOUBLE, 0,
			              ss->comm), "MPI_Bcast (t_pure)"), "--overlap");
		if (r->pl->sweep)
			rc = bench_subsets_join(MPI_COMM_WORLD, rc, member);
		if (rc)
			break;
		/* no valid repetition: no overlap either (every rank knows: the join spread
		 * nothing but rc, so the members decide alone and the others only wait) */
		if (member && isfinite(pure))
			rc = measure_one(r, &ov, (uint64_t)(pure * rate) + 1);
		if (r->pl->sweep)
			rc = bench_subsets_join(MPI_COMM_WORLD, rc, member);
		if (!rc && r->t->rank == 0 && isfinite(pure)) {
			j->pure_ns = pure;
			j->total_ns = job_median(&ov);
			j->cpu_ns = ov.cpu_ns;
			j->have_ov = isfinite(j->total_ns) && isfinite(j->cpu_ns);
		}
		free(ov.lat_ns);
	}
	return rc;
}

/* Collective: every pass of every job in --order's order, then rank 0's rows in the
 * plan's order. 0, or the agreed rc of the first failure. */
static int measure_all(struct run *r)
{
	const struct bench_order *ord = &r->o->order;
	int rc = make_jobs(r);
	size_t *idx = NULL;
	if (!rc && !(idx = calloc(r->njobs + 1, sizeof(*idx))))
		rc = err_set(HCLOCK_ENOMEM, "out of memory for the measurements");
	if (!rc && r->t->rank == 0 && !(r->rows = calloc(r->njobs + 1, sizeof(*r->rows))))
		rc = err_set(HCLOCK_ENOMEM, "out of memory for %zu results", r->njobs);
	rc = agree_on(r->t, MPI_COMM_WORLD, rc, "");
	/* each pass gets its share of the slice and of --max-reps */
	r->p.time_slice_ns = r->o->slice_ns / ord->passes;
	if (r->o->max_reps)
		r->p.max_reps = (r->o->max_reps + ord->passes - 1) / ord->passes;
	for (int pass = 0; !rc && pass < ord->passes; pass++) {
		bench_order_pass(ord, r->seed, pass, idx, r->njobs);
		for (size_t k = 0; !rc && k < r->njobs; k++)
			rc = run_job(r, &r->jobs[idx[k]], 0);
	}
	if (!rc && r->o->overlap)
		rc = measure_overlap(r);
	for (size_t k = 0; !rc && r->t->rank == 0 && k < r->njobs; k++)
		add_row(r, &r->jobs[k]);
	free(idx);
	return rc;
}

/* Collective: the seed of the orders, --seed or drawn by rank 0. */
static uint64_t agree_seed(const struct opts *o)
{
	uint64_t seed = o->seed >= 0 ? (uint64_t)o->seed
	                             : (uint64_t)real_now_ns() ^ ((uint64_t)getpid() << 32);
	seed &= 0x7fffffffffffffffULL; /* as --seed takes it */
	MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	return seed;
}

/* Collective: the global clock, the measurement communicator and the MPI_Bcast latency,
 * then the whole plan. 0, or the agreed rc (its line printed). */
static int run(struct run *r, hclock_sync *sync)
{
	hclock_clock *g = NULL;
	int rc = hclock_sync_run(sync, MPI_COMM_WORLD, r->t->base, &g);
	if (!rc) /* a failed sync: its one line */
		mpitool_warnings(r->t, sync);
	if (rc) {
		mpitool_error(r->t, "sync %s failed: %s", r->o->common.sync, hclock_last_error());
		return rc;
	}
	r->p = (struct bench_params){
		.comm = MPI_COMM_NULL, .clk = g, .time_slice_ns = r->o->slice_ns,
		.max_reps = r->o->max_reps, .warmup = r->o->warmup, .rse = r->o->rse,
		.slack_factor = r->o->slack_factor, .min_slack_ns = BENCH_MIN_SLACK_NS,
	};
	int nc = r->pl->ncounts;
	r->sub = calloc((size_t)nc, sizeof(*r->sub));
	r->bcast_ns = calloc((size_t)nc, sizeof(*r->bcast_ns));
	rc = agree_on(r->t, MPI_COMM_WORLD, r->sub && r->bcast_ns ? 0 :
	              err_set(HCLOCK_ENOMEM, "out of memory"), "");
	if (!rc)
		rc = agree_on(r->t, MPI_COMM_WORLD, bench_subsets_create(MPI_COMM_WORLD,
		              r->t->base, r->o->placement, r->pl->counts, nc,
		              r->sub), "");
	/* the MPI_Bcast latency of each process count, which the start slack is made of */
	for (int i = 0; !rc && i < nc; i++) {
		int member = r->sub[i].comm != MPI_COMM_NULL;
		if (member)
			rc = agree_on(r->t, r->sub[i].comm, bench_bcast_latency(r->sub[i].comm, g, 31,
			              &r->bcast_ns[i]), "measuring the MPI_Bcast latency");
		if (r->pl->sweep)
			rc = bench_subsets_join(MPI_COMM_WORLD, rc, member);
	}
	r->seed = agree_seed(r->o);
	if (!rc)
		rc = measure_all(r);
	int src = hclock_sync_stop(sync); /* collective: a continuous sync ends here */
	if (src && !rc)
		mpitool_error(r->t, "%s", hclock_last_error());
	rc = rc ? rc : src;
	struct mpitool_cont cs;
	mpitool_cont_report(r->t, sync, &cs); /* a clock whose exchanges failed: one line */
	mpitool_cont_line(r->t->name, &cs);
	if (r->sub)
		bench_subsets_free(r->sub, nc);
	free(r->sub);
	r->sub = NULL;
	r->p.comm = MPI_COMM_NULL;
	r->p.bcast_lat_ns = r->bcast_ns ? r->bcast_ns[nc - 1] : 0;
	hclock_clock_free(g);
	r->p.clk = NULL;
	return rc;
}

/* ---- report ------------------------------------------------------------------------ */

static const char *const buffer_names[] = {"cached", "rotate", "offcache"};

/* Rank 0: print the rows in the chosen format, and the plot. 0 or HCLOCK_EIO. */
static int report(const struct run *r, hclock_sync *sync)
{
	const struct opts *o = r->o;
	struct bench_report rep = {
		.schemes = o->schemes, .common_schemes = bench_scheme_names(1),
		.local_schemes = bench_scheme_names(0), .sync = hclock_sync_spec(sync),
		.nprocs = r->t->size, .root = (int)o->root, .in_place = o->in_place,
		.bcast_latency_s = (double)r->p.bcast_lat_ns * 1e-9, .slack_factor = o->slack_factor,
		.time_slice_s = (double)o->slice_ns * 1e-9, .rows = r->rows, .nrows = r->nrows,
		.order = bench_order_name(&o->order), .passes = o->order.passes, .seed = r->seed,
		.root_shift = o->root_shift, .buffers = buffer_names[o->buf.mode],
		.buffer_bytes = o->buf.mode_bytes, .align = o->buf.align,
		.datatype = o->buf.type ? o->buf.type->name : "int32",
		.reduce_op = bench_rop_name(o->buf.rop), .counts = bench_counts_name(o->buf.counts),
		.topology = bench_topology_name(o->buf.topology), .overlap = o->overlap,
		.sweep = r->pl->sweep, .placement = bench_placement_name(o->placement),
	};
	if (o->common.fmt == FMT_JSON)
		report_json(stdout, &rep);
	else if (o->common.fmt == FMT_CSV)
		report_csv(stdout, &rep);
	else
		report_table(stdout, &rep);
	fflush(stdout);
	int rc = o->plot ? report_svg(o->plot, &rep) : 0;
	if (rc)
		fprintf(stderr, "%s: --plot: %s\n", r->t->name, hclock_last_error());
	return rc;
}

/* Collective: open --raw on rank 0 and write its header. 0, or the agreed failure. */
static int open_raw(struct run *r)
{
	int rc = 0;
	if (r->o->raw && r->t->rank == 0 && !(r->raw = fopen(r->o->raw, "w")))
		rc = HCLOCK_EIO;
	if ((rc = mpitool_agree(r->t, rc))) {
		mpitool_error(r->t, "--raw: cannot write '%s'", r->o->raw);
		return rc;
	}
	if (r->raw)
		fprintf(r->raw, "scheme,op,size,rep,rank,valid,common_start_ns,start_ns,end_ns%s\n",
		        r->pl->sweep ? ",nprocs" : "");
	return 0;
}

/* Rank 0: close --raw; HCLOCK_EIO (and its line) when writing it failed. */
static int close_raw(struct run *r)
{
	if (!r->raw)
		return 0;
	int bad = ferror(r->raw);
	if (fclose(r->raw) || bad) {
		fprintf(stderr, "%s: --raw: error writing '%s'\n", r->t->name, r->o->raw);
		return HCLOCK_EIO;
	}
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct mpitool t;
	struct opts o = {
		.ops = "allreduce", .sizes = "8:1M", .schemes = "roundtime", .slice_ns = 1000000000,
		.warmup = 10, .slack_factor = BENCH_DEFAULT_SLACK_FACTOR, .seed = -1,
		.order = {ORDER_INTERLEAVED, BENCH_ORDER_PASSES},
	};
	struct plan pl = {0};
	struct run r = {.t = &t, .o = &o, .pl = &pl};
	hclock_sync *sync = NULL;
	char buf[1024];

	mpitool_init(&t, "hclock bench", HCLOCK_SYNC_DEFAULT_SPEC, &argc, &argv);
	const char *bad = read_input(&t, argc, argv, &o, &pl, buf, sizeof(buf));
	if (!bad && o.common.help) {
		if (t.rank == 0)
			usage(stdout);
		return mpitool_finish(&t, 0);
	}
	if (bad)
		mpitool_error(&t, "%s", bad);
	if (bad || mpitool_sync_setup(&t, o.common.sync, o.common.emulate, o.common.clock, &sync) ||
	    open_raw(&r)) {
		free_plan(&pl);
		hclock_sync_free(sync);
		return mpitool_finish(&t, 2);
	}
	int rc = run(&r, sync);
	if (!rc && t.rank == 0)
		rc = report(&r, sync);
	int crc = close_raw(&r);
	rc = mpitool_agree(&t, rc ? rc : crc);
	free(r.rows);
	free(r.bcast_ns);
	for (size_t k = 0; k < r.njobs; k++)
		free(r.jobs[k].lat_ns);
	free(r.jobs);
	hclock_sync_free(sync);
	free_plan(&pl);
	return mpitool_finish(&t, rc ? 1 : 0);
}
