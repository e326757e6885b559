#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/mpitool.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/finwatch.h"
#include "util/parse.h"
#include "util/timeutil.h"
#include "transport/comm.h"
#include "transport/yield.h"

void mpitool_init(struct mpitool *t, const char *name, const char *default_sync, int *argc,
                  char ***argv)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->default_sync = default_sync;
	/* a continuous sync's background thread needs MPI_THREAD_MULTIPLE; ask for it only then
	 * (it may cost the MPI library locks on every call): a spec given, or the default */
	int want = 0, given = 0, got;
	for (int i = 1; i < *argc; i++) {
		want |= strstr((*argv)[i], "cont(") != NULL;
		given |= !strcmp((*argv)[i], "--sync") || !strncmp((*argv)[i], "--sync=", 7);
	}
	want |= !given && strstr(default_sync, "cont(") != NULL;
	if (want)
		MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
	else
		MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &t->size);
}

void mpitool_cont_sum(int n, const double *all, struct mpitool_cont *c)
{
	*c = (struct mpitool_cont){.failed_rank = -1};
	c->have = n > 0 && all[3] != 0;
	c->thread_cpu_max_s = -1;
	c->exchanges_min = UINT64_MAX;
	for (int r = 0; r < n && c->have; r++) {
		const double *a = all + MPITOOL_CONT_N * r;
		uint64_t ex = (uint64_t)a[0], to = (uint64_t)a[1];
		c->timeouts += to;
		c->thread_cpu_max_s = a[2] > c->thread_cpu_max_s ? a[2] : c->thread_cpu_max_s;
		if (!ex && !to)
			continue; /* the reference, or a follower: no exchanges of its own */
		c->exchanges_min = ex < c->exchanges_min ? ex : c->exchanges_min;
		c->exchanges_max = ex > c->exchanges_max ? ex : c->exchanges_max;
		c->rtt_max_ns = a[4] > c->rtt_max_ns ? a[4] : c->rtt_max_ns;
		c->noise_max_ns = a[5] > c->noise_max_ns ? a[5] : c->noise_max_ns;
		if (!ex && to) {
			if (c->failed_rank < 0)
				c->failed_rank = r;
			c->failed++;
		}
	}
	if (c->exchanges_min == UINT64_MAX)
		c->exchanges_min = 0;
}

void mpitool_cont_text(char *buf, size_t len, const struct mpitool_cont *c)
{
	int n;
	if (!c->exchanges_max && !c->timeouts)
		n = snprintf(buf, len, "0 exchanges (none made: the run ended before the first, or "
		             "every process reads the reference's node's clock)");
	else
		n = snprintf(buf, len, "%llu-%llu exchanges per process, %llu timeouts",
		             (unsigned long long)c->exchanges_min,
		             (unsigned long long)c->exchanges_max, (unsigned long long)c->timeouts);
	if (n >= 0 && (size_t)n < len && c->thread_cpu_max_s >= 0)
		snprintf(buf + n, len - (size_t)n, ", thread CPU %.3f s at most", c->thread_cpu_max_s);
}

void mpitool_cont_line(const char *name, const struct mpitool_cont *c)
{
	char text[200];
	if (!c->have)
		return;
	mpitool_cont_text(text, sizeof(text), c);
	fprintf(stderr, "%s: continuous clock: %s\n", name, text);
}

void mpitool_cont_warn(const char *name, const struct mpitool_cont *c)
{
	if (c->failed)
		fprintf(stderr, "%s: warning: the continuous clock of %d process%s (rank %d first) "
		        "made no exchange (%llu timeouts in all): %s on the one-shot model, its "
		        "bounds stale\n", name, c->failed, c->failed == 1 ? "" : "es",
		        c->failed_rank, (unsigned long long)c->timeouts,
		        c->failed == 1 ? "it ran" : "they ran");
}

void mpitool_cont_report(const struct mpitool *t, const hclock_sync *s, struct mpitool_cont *c)
{
	struct hclock_sync_stats st;
	/* every rank runs the same spec: all have statistics or none has */
	int have = hclock_sync_stats(s, &st) == 0;
	double mine[MPITOOL_CONT_N] = {have ? (double)st.exchanges : 0,
	                               have ? (double)st.timeouts : 0, have ? st.thread_cpu_s : -1,
	                               have, have ? st.rtt_ns : 0, have ? st.noise_ns : 0},
	       *all = NULL;
	*c = (struct mpitool_cont){.failed_rank = -1};
	if (t->rank == 0)
		all = malloc(MPITOOL_CONT_N * sizeof(double) * (size_t)t->size);
	yield_gather(mine, MPITOOL_CONT_N, MPI_DOUBLE, all, MPITOOL_CONT_N, MPI_DOUBLE, 0,
	             MPI_COMM_WORLD);
	if (t->rank != 0 || !all)
		return;
	mpitool_cont_sum(t->size, all, c);
	free(all);
	mpitool_cont_warn(t->name, c);
}

void mpitool_warnings(const struct mpitool *t, const hclock_sync *s)
{
	for (const char *w = hclock_sync_warnings(s), *e; *w; w = *e ? e + 1 : e) {
		e = w + strcspn(w, "\n");
		fprintf(stderr, "%s: warning: %.*s\n", t->name, (int)(e - w), w);
	}
}

void mpitool_error(const struct mpitool *t, const char *fmt, ...)
{
	if (t->rank != 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	err_vline(t->name, fmt, ap);
	va_end(ap);
}

int mpitool_agree(const struct mpitool *t, int rc)
{
	int all;
	(void)t;
	MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return all;
}

int mpitool_clock(struct mpitool *t, const char *emulate, const char *clock)
{
	int rc = hclock_emu_create(emulate, MPI_COMM_WORLD, &t->emu);
	if (rc) {
		mpitool_error(t, "%s", hclock_last_error());
		return rc;
	}
	if (t->emu && clock && strcmp(clock, "monotonic")) {
		mpitool_error(t, "--clock %s cannot be combined with emulation; the emulated clocks run "
		              "on the real monotonic time", clock);
		return HCLOCK_EINVAL;
	}
	rc = comm_agree(MPI_COMM_WORLD, hclock_base_create(clock, t->emu, &t->base));
	if (rc)
		mpitool_error(t, "%s", hclock_last_error()); /* the first failing rank's line */
	return rc;
}

const char *mpitool_truth_env(int *truth, enum truth_mode *mode)
{
	static char line[400];
	const char *v = getenv("HCLOCK_TRUTH");
	if (*truth || !v || !*v)
		return NULL;
	if (truth_mode_parse(v, mode)) {
		snprintf(line, sizeof(line), "HCLOCK_TRUTH: %s", hclock_last_error());
		return line;
	}
	*truth = 1;
	return NULL;
}

int mpitool_truth_setup(struct mpitool *t, enum truth_mode mode, int64_t *width_ns)
{
	double e;
	if (truth_setup(MPI_COMM_WORLD, t->base, mode, width_ns) ||
	    comm_agree(MPI_COMM_WORLD, hclock_true_error(t->base, NULL, &e))) {
		mpitool_error(t, "%s", hclock_last_error());
		return 2;
	}
	return 0;
}

int mpitool_sync_setup(struct mpitool *t, const char *spec, const char *emulate,
                       const char *clock, hclock_sync **s)
{
	*s = NULL;
	if (hclock_sync_create(spec, s)) {
		mpitool_error(t, "%s", hclock_last_error());
		return HCLOCK_EINVAL;
	}
	int rc = mpitool_clock(t, emulate, clock);
	if (rc) {
		hclock_sync_free(*s);
		*s = NULL;
	}
	return rc;
}

/* MPI_Finalize, with an end (util/finwatch.h). The run's results are out and agreed on by
 * then, so a rank the MPI library keeps in its shutdown exits with the run's code after the
 * limit. */
int mpitool_finish(struct mpitool *t, int code)
{
	hclock_clock_free(t->base);
	hclock_emu_free(t->emu);
	t->base = NULL;
	t->emu = NULL;
	char after[64];
	snprintf(after, sizeof(after), "exiting with the run's code %d", code);
	struct finwatch_how how = {.who = t->name, .rank = t->rank, .code = code, .after = after};
	finwatch_finalize(MPI_Finalize, &how);
	return code;
}

int opt_double(const char *s, double lo, double hi, double *out)
{
	return parse_number_str(s, lo, hi, out);
}

int opt_long(const char *s, long lo, long hi, long *out)
{
	return parse_int_str(s, lo, hi, out);
}

const char *opt_warmup(const char *arg, long *reps)
{
	return opt_long(arg, 0, 1000000L, reps) ? "--warmup needs an integer from 0 to 1000000" : NULL;
}

const char *opt_slack_factor(const char *arg, double *b)
{
	return opt_double(arg, 1, 1e6, b)
	       ? "--slack-factor needs a number from 1 to 1e6 (B of Alg. 5), e.g. 4" : NULL;
}

const char *opt_root(const char *arg, long *rank)
{
	return opt_long(arg, 0, 0x7fffffffL, rank) ? "--root needs a rank number >= 0" : NULL;
}

const char *opt_seed(const char *arg, long *seed)
{
	return opt_long(arg, 0, LONG_MAX, seed)
	       ? "--seed needs a non-negative integer, at most 9223372036854775807" : NULL;
}

const char *opt_pingpongs(const char *arg, long *n)
{
	return opt_long(arg, 1, 1000000L, n) ? "--pingpongs needs an integer from 1 to 1000000" : NULL;
}

int opt_duration_list(const char *s, double lo, double hi, double *out, int max)
{
	int n = 0;
	if (!s || !*s)
		return -1;
	for (const char *p = s;; p++) {
		size_t k = strcspn(p, ",");
		if (n == max || parse_duration_s(p, k, lo, hi, &out[n]) || (n && out[n] < out[n - 1]))
			return -1;
		n++;
		p += k;
		if (!*p)
			return n;
	}
}

int opt_format(const char *s, enum tool_format *out)
{
	static const char *names[] = {"table", "json", "csv"};
	for (int i = 0; i < 3; i++)
		if (s && !strcmp(s, names[i])) {
			*out = (enum tool_format)i;
			return 0;
		}
	return -1;
}

/* Collective: every rank has the same command line, HCLOCK_EMULATE and HCLOCK_TRUTH; else the
 * line. */
static int same_options(int argc, char **argv, char *buf, size_t len)
{
	char text[1024];
	size_t pos = 0;
	const char *env = getenv("HCLOCK_EMULATE"), *truth = getenv("HCLOCK_TRUTH");
	text[0] = 0;
	for (int i = 1; i < argc && pos < sizeof(text); i++)
		pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "%s%s", i > 1 ? " " : "", argv[i]);
	if (env && pos < sizeof(text))
		pos += (size_t)snprintf(text + pos, sizeof(text) - pos, " [HCLOCK_EMULATE=%s]", env);
	if (truth && pos < sizeof(text))
		snprintf(text + pos, sizeof(text) - pos, " [HCLOCK_TRUTH=%s]", truth);
	if (!comm_same(MPI_COMM_WORLD, "options (command line, HCLOCK_EMULATE and HCLOCK_TRUTH)",
	               text))
		return 0;
	snprintf(buf, len, "%s", hclock_last_error());
	return -1;
}

/* optarg; for an option whose value is optional, also the next word when it is not an option
 * ("--truth realtime" as "--truth=realtime") */
static const char *optional_value(const struct option *longopts, int c, int argc, char **argv)
{
	if (optarg)
		return optarg;
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == c && o->has_arg == optional_argument && optind < argc &&
		    argv[optind][0] != '-')
			return argv[optind++];
	return NULL;
}

const char *mpitool_parse(int argc, char **argv, const struct mpitool *t, const struct option *longopts,
                          struct mpitool_opts *o, mpitool_optfn own, void *ctx, char *buf,
                          size_t len)
{
	const char *name = t->name;
	*o = (struct mpitool_opts){.sync = t->default_sync, .fmt = FMT_TABLE};
	/* before anything that could differ between the ranks: an MPMD launch or a per-rank
	 * environment with other options would otherwise send some ranks into the sync and
	 * others to an error exit, and the first group would wait forever */
	if (same_options(argc, argv, buf, len))
		return buf;
	opterr = 0;
	optind = 1;
	int c;
	const char *bad = NULL;
	while (!bad && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->sync = optarg; break;
		case 'e': o->emulate = optarg; break;
		case 'c': o->clock = optarg; break;
		case 'h': o->help = 1; break;
		case 'f':
			if (opt_format(optarg, &o->fmt))
				bad = "--format must be table, json or csv";
			break;
		case '?':
		case ':':
			snprintf(buf, len, "unknown option or missing value '%s'; see %s --help",
			         argv[optind - 1], name);
			bad = buf;
			break;
		default:
			bad = own(c, optional_value(longopts, c, argc, argv), ctx);
		}
	}
	if (!bad && optind < argc) {
		snprintf(buf, len, "unexpected argument '%s'; see %s --help", argv[optind], name);
		bad = buf;
	}
	return bad;
}
