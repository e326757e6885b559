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

#include "mpi/check.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "util/timeutil.h"

#define DEFAULT_SYNC HCLOCK_DEFAULT_SYNC
#define MAX_WAITS 32

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: mpirun -np P hclock check [OPTIONS]\n"
	        "Synchronize the ranks' clocks, then measure the global clock's offsets to rank 0\n"
	        "right after the sync and after each wait (Check-Global-Clock, Alg. 6).\n\n"
	        "  --sync SPEC        sync algorithm (default " DEFAULT_SYNC "), e.g.\n"
	        "                     hca3/1000/skampi/100, jk/500/rtt/20, hca3/500/skampi/20/ri,\n"
	        "                     skampi/skampi/20, dunigan/1/20, none\n"
	        "  --wait LIST        seconds after the sync to check at (default 0,10)\n"
	        "  --sample FRACTION  check a random fraction of the processes (default 1)\n"
	        "  --repeat N         sync and check N times in this launch (default 1)\n"
	        "  --pingpongs N      SKaMPI-Offset exchanges per check measurement (default 20)\n"
	        "  --emulate SPEC     emulated clocks with known truth, e.g.\n"
	        "                     skew=100e-6,offset=1,noise=20e-9,nodes=2,seed=7\n"
	        "                     (also from the environment variable HCLOCK_EMULATE)\n"
	        "  --truth            report true errors on one machine's shared physical clock\n"
	        "  --clock NAME       base clock: monotonic (default), realtime, wtime, tsc\n"
	        "  --seed N           seed of the process sample (default 1)\n"
	        "  --format FMT       table (default), json or csv\n"
	        "  --help             this text\n");
}

struct run {
	double sync_s;
	uint64_t pingpongs_max, rounds;
	struct check_point pt[MAX_WAITS];
};

static void print_json(const char *spec, int p, const struct run *runs, int nruns, int nwaits,
                       int truth)
{
	printf("{\"tool\":\"hclock check\",\"sync\":\"%s\",\"nprocs\":%d,\"runs\":[", spec, p);
	for (int i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		printf("%s{\"sync_duration_s\":%.9f,\"pingpongs_max\":%llu,\"rounds\":%llu,\"checks\":[",
		       i ? "," : "", r->sync_s, (unsigned long long)r->pingpongs_max,
		       (unsigned long long)r->rounds);
		for (int w = 0; w < nwaits; w++) {
			const struct check_point *c = &r->pt[w];
			printf("%s{\"after_s\":%g,\"max_abs_offset_s\":%.12g,\"mean_abs_offset_s\":%.12g,"
			       "\"measured\":%d,\"rtt_min_s\":%.12g",
			       w ? "," : "", c->after_s, c->max_abs_offset_ns * 1e-9,
			       c->mean_abs_offset_ns * 1e-9, c->nmeasured, c->rtt_min_ns * 1e-9);
			if (truth)
				printf(",\"true_max_abs_error_s\":%.12g", c->true_max_abs_error_ns * 1e-9);
			printf("}");
		}
		printf("]}");
	}
	printf("]}\n");
}

static void print_csv(const struct run *runs, int nruns, int nwaits, int truth)
{
	printf("run,sync_duration_s,pingpongs_max,rounds,after_s,max_abs_offset_s,mean_abs_offset_s,"
	       "rtt_min_s%s\n",
	       truth ? ",true_max_abs_error_s" : "");
	for (int i = 0; i < nruns; i++)
		for (int w = 0; w < nwaits; w++) {
			const struct check_point *c = &runs[i].pt[w];
			printf("%d,%.9f,%llu,%llu,%g,%.12g,%.12g,%.12g", i + 1, runs[i].sync_s,
			       (unsigned long long)runs[i].pingpongs_max, (unsigned long long)runs[i].rounds,
			       c->after_s, c->max_abs_offset_ns * 1e-9, c->mean_abs_offset_ns * 1e-9,
			       c->rtt_min_ns * 1e-9);
			if (truth)
				printf(",%.12g", c->true_max_abs_error_ns * 1e-9);
			printf("\n");
		}
}

static void print_table(const char *spec, int p, const char *clockdesc, const struct run *runs,
                        int nruns, int nwaits, int truth)
{
	printf("hclock check: sync %s on %d process%s, clock %s\n", spec, p, p == 1 ? "" : "es",
	       clockdesc);
	printf("%4s %10s %10s %8s %10s %14s %15s%s\n", "run", "sync_s", "pingpongs", "after_s",
	       "rtt_min_ns", "max|off|_ns", "mean|off|_ns", truth ? "  true_max|err|_ns" : "");
	for (int i = 0; i < nruns; i++)
		for (int w = 0; w < nwaits; w++) {
			const struct check_point *c = &runs[i].pt[w];
			printf("%4d %10.4f %10llu %8g %10.0f %14.1f %15.1f", i + 1, runs[i].sync_s,
			       (unsigned long long)runs[i].pingpongs_max, c->after_s, c->rtt_min_ns,
			       c->max_abs_offset_ns, c->mean_abs_offset_ns);
			if (truth)
				printf(" %18.1f", c->true_max_abs_error_ns);
			printf("\n");
		}
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sync", required_argument, 0, 's'},    {"wait", required_argument, 0, 'w'},
		{"sample", required_argument, 0, 'S'},  {"repeat", required_argument, 0, 'r'},
		{"pingpongs", required_argument, 0, 'n'}, {"emulate", required_argument, 0, 'e'},
		{"truth", no_argument, 0, 't'},         {"clock", required_argument, 0, 'c'},
		{"seed", required_argument, 0, 'x'},    {"format", required_argument, 0, 'f'},
		{"help", no_argument, 0, 'h'},          {0, 0, 0, 0},
	};
	struct mpitool t;
	const char *spec = DEFAULT_SYNC, *emulate = NULL, *clock = NULL, *bad = NULL;
	char badbuf[256];
	double waits[MAX_WAITS] = {0, 10}, sample = 1;
	int nwaits = 2, truth = 0, help = 0;
	long repeat = 1, npp = 20, seed = 1;
	enum tool_format fmt = FMT_TABLE;

	mpitool_init(&t, "hclock check", &argc, &argv);
	opterr = 0;
	optind = 1;
	int c;
	while (!bad && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': spec = optarg; break;
		case 'w':
			if ((nwaits = opt_double_list(optarg, 0, 86400, waits, MAX_WAITS)) < 0)
				bad = "--wait needs ascending seconds separated by commas, e.g. 0,1,10";
			break;
		case 'S':
			if (opt_double(optarg, 1e-9, 1, &sample))
				bad = "--sample needs a fraction in (0, 1], e.g. 0.1";
			break;
		case 'r':
			if (opt_long(optarg, 1, 100000, &repeat))
				bad = "--repeat needs an integer from 1 to 100000";
			break;
		case 'n':
			if (opt_long(optarg, 1, 1000000, &npp))
				bad = "--pingpongs needs an integer from 1 to 1000000";
			break;
		case 'e': emulate = optarg; break;
		case 't': truth = 1; break;
		case 'c': clock = optarg; break;
		case 'x':
			if (opt_long(optarg, 0, 0x7fffffffL, &seed))
				bad = "--seed needs a non-negative integer";
			break;
		case 'f':
			if (opt_format(optarg, &fmt))
				bad = "--format must be table, json or csv";
			break;
		case 'h': help = 1; break;
		default:
			snprintf(badbuf, sizeof(badbuf), "unknown option or missing value '%s'; see hclock "
			         "check --help", argv[optind - 1]);
			bad = badbuf;
		}
	}
	if (!bad && optind < argc) {
		snprintf(badbuf, sizeof(badbuf), "unexpected argument '%s'; see hclock check --help",
		         argv[optind]);
		bad = badbuf;
	}
	if (help) {
		if (t.rank == 0)
			usage(stdout);
		return mpitool_finish(&t, 0);
	}
	if (bad) {
		mpitool_error(&t, "%s", bad);
		return mpitool_finish(&t, 2);
	}
	hclock_sync *s = NULL;
	if (mpitool_sync_setup(&t, spec, emulate, clock, &s))
		return mpitool_finish(&t, 2);
	if (truth && t.emu)
		truth = 0; /* the emulation is the truth */
	int have_truth = truth || t.emu;
	if (truth) {
		double e;
		int rc = mpitool_agree(&t, hclock_true_error(t.base, NULL, &e));
		if (rc) {
			mpitool_error(&t, "%s", hclock_last_error());
			hclock_sync_free(s);
			return mpitool_finish(&t, 2);
		}
	}

	struct run *runs = calloc((size_t)repeat, sizeof(*runs));
	struct check_opts co = {waits, nwaits, sample, (uint64_t)seed, (int)npp, t.emu, truth};
	int rc = 0;
	double longest = waits[nwaits - 1];
	for (long i = 0; i < repeat && !rc; i++) {
		hclock_clock *g = NULL;
		MPI_Barrier(MPI_COMM_WORLD);
		int64_t t0 = real_now_ns();
		rc = hclock_sync_run(s, MPI_COMM_WORLD, t.base, &g);
		double dur = (double)(real_now_ns() - t0) * 1e-9, maxdur;
		uint64_t pp = hclock_sync_pingpongs(s), ppmax, rounds = hclock_sync_rounds(s), rmax;
		MPI_Reduce(&dur, &maxdur, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		MPI_Reduce(&pp, &ppmax, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
		MPI_Reduce(&rounds, &rmax, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rc) {
			mpitool_error(&t, "sync %s failed: %s", spec, hclock_last_error());
			break;
		}
		runs[i].sync_s = maxdur;
		runs[i].pingpongs_max = ppmax;
		runs[i].rounds = rmax;
		if (t.rank == 0 && (repeat > 1 || longest >= 2))
			fprintf(stderr, "hclock check: run %ld/%ld: synchronized in %.3f s; checking for "
			        "%g s\n", i + 1, repeat, maxdur, longest);
		co.seed = (uint64_t)seed + (uint64_t)i;
		rc = mpitool_agree(&t, check_clock(MPI_COMM_WORLD, g, &co, runs[i].pt));
		if (rc)
			mpitool_error(&t, "check failed: %s", hclock_last_error());
		hclock_clock_free(g);
	}
	if (!rc && t.rank == 0) {
		char desc[128];
		if (t.emu)
			snprintf(desc, sizeof(desc), "emulated (%d virtual nodes)", hclock_emu_nodes(t.emu));
		else
			hclock_clock_describe(t.base, desc, sizeof(desc));
		if (fmt == FMT_JSON)
			print_json(hclock_sync_spec(s), t.size, runs, (int)repeat, nwaits, have_truth);
		else if (fmt == FMT_CSV)
			print_csv(runs, (int)repeat, nwaits, have_truth);
		else
			print_table(hclock_sync_spec(s), t.size, desc, runs, (int)repeat, nwaits, have_truth);
		fflush(stdout);
	}
	free(runs);
	hclock_sync_free(s);
	return mpitool_finish(&t, rc ? 1 : 0);
}
