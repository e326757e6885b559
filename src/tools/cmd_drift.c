/*
 * cmd_drift.c - hclock drift: the HCA3 paper's Fig. 2 on the user's machine. Rank 0
 * measures every rank's offset every --interval for --duration, on the raw local clocks
 * (--sync none) or on a global clock; each rank's series gets a linear fit and its residual,
 * so a user sees whether the linear drift model holds here and how long a one-shot model
 * lasts. With emulation the true error and (bounded clocks) the bounds are recorded too.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/drift.h"
#include "numerics/linreg.h"
#include "numerics/stall.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/parse.h"

#define MAX_PROBES 1000000

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: mpirun -np P hclock drift [OPTIONS]\n"
	        "Every INTERVAL for DURATION rank 0 measures every rank's offset to its own clock\n"
	        "(SKaMPI-Offset); each rank's series gets a linear fit and its residual: is the\n"
	        "drift linear here, and how long does a one-shot model last?\n\n"
	        "  --duration D       how long to measure (default 60 s; e.g. 500, 10m)\n"
	        "  --interval I       time between probes (default 1 s)\n"
	        "  --sync SPEC        none: the raw local clocks; else a global clock (default\n"
	        "                     " HCLOCK_SYNC_DEFAULT_SPEC ")\n"
	        "  --pingpongs N      SKaMPI-Offset exchanges per probe (default 20)\n"
	        "  --plot FILE.svg    offsets with their fits, and the residuals, per rank\n"
	        "  --emulate SPEC     emulated clocks with known truth (true error and bounds too)\n"
	        "  --truth [realtime] true errors without emulation, as hclock check --truth\n"
	        "  --clock NAME       base clock (default monotonic)\n"
	        "  --format FMT       table (default: a line per rank), csv or json (every probe)\n"
	        "  --help             this text\n"
	        "Durations: %s.\n", PARSE_DURATION_RULE);
}

struct drift_cli {
	double duration_s, interval_s;
	long npp;
	const char *plot;
	int truth;
	enum truth_mode truth_mode;
};

static const char *drift_opt(int c, const char *arg, void *ctx)
{
	struct drift_cli *k = ctx;
	switch (c) {
	case 'D':
		return parse_duration_s_str(arg, 1e-3, 86400 * 7, &k->duration_s)
		       ? "--duration needs a duration from 1ms to 7 days, e.g. 500 or 10m" : NULL;
	case 'I':
		return parse_duration_s_str(arg, 1e-3, 86400, &k->interval_s)
		       ? "--interval needs a duration from 1ms to 1 day, e.g. 1 or 200ms" : NULL;
	case 'n':
		return opt_pingpongs(arg, &k->npp);
	case 'P':
		k->plot = arg;
		return NULL;
	case 't':
		k->truth = 1;
		return truth_mode_parse(arg, &k->truth_mode) ? hclock_last_error() : NULL;
	}
	return "internal error: unhandled option";
}

/* one rank's series, fitted */
struct series {
	const struct drift_sample *s;
	struct lm fit;
	int fitted;
	double rms_ns, max_ns;      /* residual */
	double true_max_ns, hw_max_ns;
	int have_truth, have_bounds, outside;
};

static double fit_at(const struct series *e, double t_s)
{
	return e->fitted ? lm_offset(&e->fit, llround(t_s * 1e9)) : NAN;
}

/* The line through the probes that did not go through a stall (numerics/stall.h: a round
 * trip far above the series' fastest; each probe is off by up to half its round trip), all
 * of them when fewer than 2 are clean; the residuals are of every probe. */
static void fit_series(struct series *e, const struct drift_sample *s, int n)
{
	int64_t *x = malloc(2 * (size_t)n * sizeof(*x));
	double *y = malloc(2 * (size_t)n * sizeof(*y)), *rtt = malloc((size_t)n * sizeof(*rtt));
	memset(e, 0, sizeof(*e));
	e->s = s;
	if (x && y && rtt) {
		for (int i = 0; i < n; i++) {
			x[i] = llround(s[i].t_s * 1e9);
			y[i] = s[i].offset_ns;
			rtt[i] = s[i].rtt_ns;
		}
		size_t k = stall_keep(x, y, rtt, (size_t)n, x + n, y + n);
		e->fitted = k >= 2 ? !linreg_fit(x + n, y + n, k, &e->fit)
		                   : n >= 2 && !linreg_fit(x, y, (size_t)n, &e->fit);
	}
	free(x);
	free(y);
	free(rtt);
	double ss = 0;
	for (int i = 0; i < n; i++) {
		double r = e->fitted ? s[i].offset_ns - fit_at(e, s[i].t_s) : 0;
		ss += r * r;
		e->max_ns = fmax(e->max_ns, fabs(r));
		if (!isnan(s[i].true_err_ns)) {
			e->have_truth = 1;
			e->true_max_ns = fmax(e->true_max_ns, fabs(s[i].true_err_ns));
		}
		if (isfinite(s[i].lo_ns) && isfinite(s[i].hi_ns)) {
			e->have_bounds = 1;
			e->hw_max_ns = fmax(e->hw_max_ns, fmax(-s[i].lo_ns, s[i].hi_ns));
			/* the reference minus the reading is minus the true error */
			if (!isnan(s[i].true_err_ns) &&
			    !(-s[i].true_err_ns >= s[i].lo_ns && -s[i].true_err_ns <= s[i].hi_ns))
				e->outside++;
		}
	}
	e->rms_ns = n ? sqrt(ss / n) : 0;
}

static void json_num(double v)
{
	if (isfinite(v))
		printf("%.6f", v);
	else
		printf("null");
}

static void print_json(const char *spec, int p, const struct drift_cli *k, const struct series *e,
                       int n)
{
	printf("{\"tool\":\"hclock drift\",\"sync\":\"%s\",\"nprocs\":%d,\"duration_s\":%g,"
	       "\"interval_s\":%g,\"ranks\":[", spec, p, k->duration_s, k->interval_s);
	for (int r = 0; r < p; r++) {
		printf("%s{\"rank\":%d,\"slope\":%.12g,\"intercept_ns\":", r ? "," : "", r,
		       e[r].fitted ? e[r].fit.slope : 0.0);
		json_num(fit_at(&e[r], 0));
		printf(",\"residual_rms_ns\":%.3f,\"residual_max_ns\":%.3f,\"samples\":[", e[r].rms_ns,
		       e[r].max_ns);
		for (int i = 0; i < n; i++) {
			const struct drift_sample *s = &e[r].s[i];
			printf("%s{\"t_s\":%.9f,\"offset_ns\":%.3f,\"rtt_ns\":%.1f,\"residual_ns\":", i ? "," : "",
			       s->t_s, s->offset_ns, s->rtt_ns);
			json_num(s->offset_ns - fit_at(&e[r], s->t_s));
			printf(",\"true_error_ns\":");
			json_num(s->true_err_ns);
			printf(",\"bound_lo_ns\":");
			json_num(s->lo_ns);
			printf(",\"bound_hi_ns\":");
			json_num(s->hi_ns);
			printf("}");
		}
		printf("]}");
	}
	printf("]}\n");
}

static void print_csv(int p, const struct series *e, int n)
{
	printf("t_s,rank,offset_ns,rtt_ns,fit_ns,residual_ns,true_error_ns,bound_lo_ns,bound_hi_ns\n");
	for (int r = 0; r < p; r++)
		for (int i = 0; i < n; i++) {
			const struct drift_sample *s = &e[r].s[i];
			double f = fit_at(&e[r], s->t_s);
			printf("%.9f,%d,%.3f,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f\n", s->t_s, r, s->offset_ns, s->rtt_ns,
			       f, s->offset_ns - f, s->true_err_ns, s->lo_ns, s->hi_ns);
		}
}

static void print_table(const char *spec, int p, const struct drift_cli *k, const struct series *e,
                        int n)
{
	int truth = 0, bounds = 0;
	for (int r = 0; r < p; r++) {
		truth |= e[r].have_truth;
		bounds |= e[r].have_bounds;
	}
	printf("hclock drift: sync %s on %d processes, %d probes every %g s\n", spec, p, n,
	       k->interval_s);
	printf("%5s %12s %16s %14s %14s%s%s\n", "rank", "slope_ppm", "offset_at_0_ns", "resid_rms_ns",
	       "resid_max_ns", truth ? "  true_max|err|_ns" : "",
	       bounds ? "  bound_half_max_ns  outside" : "");
	for (int r = 1; r < p; r++) {
		printf("%5d %12.4f %16.1f %14.1f %14.1f", r, e[r].fitted ? e[r].fit.slope * 1e6 : 0.0,
		       fit_at(&e[r], 0), e[r].rms_ns, e[r].max_ns);
		if (truth)
			printf(" %18.1f", e[r].true_max_ns);
		if (bounds)
			printf(" %18.1f %8d", e[r].have_bounds ? e[r].hw_max_ns : INFINITY, e[r].outside);
		printf("\n");
	}
}

/* offsets and fits above, residuals below; one colour per rank */
static int plot_svg(const char *path, const char *spec, int p, const struct series *e, int n,
                    double duration_s)
{
	static const char *const col[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
	                                  "#8c564b", "#e377c2", "#17becf"};
	const int W = 900, H = 640, ML = 90, MR = 20, T1 = 60, B1 = 330, T2 = 380, B2 = 600;
	double o0 = INFINITY, o1 = -INFINITY, r1 = 0;
	for (int r = 1; r < p; r++)
		for (int i = 0; i < n; i++) {
			double o = e[r].s[i].offset_ns * 1e-3;
			o0 = fmin(o0, o);
			o1 = fmax(o1, o);
			r1 = fmax(r1, fabs(e[r].s[i].offset_ns - fit_at(&e[r], e[r].s[i].t_s)));
		}
	if (!(o1 > o0)) {
		o0 = isfinite(o0) ? o0 - 1 : -1;
		o1 = o0 + 2;
	}
	if (!(r1 > 0))
		r1 = 1;
	FILE *f = fopen(path, "w");
	if (!f)
		return err_set(HCLOCK_EIO, "cannot write '%s': %s", path, strerror(errno));
	double tx = (W - ML - MR) / (duration_s > 0 ? duration_s : 1);
#define X(t) (ML + (t) * tx)
#define Y1(v) (B1 - ((v) - o0) / (o1 - o0) * (B1 - T1))
#define Y2(v) ((T2 + B2) / 2.0 - (v) / r1 * (B2 - T2) / 2)
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
	        "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
	        "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	        "<text x=\"%d\" y=\"22\" font-size=\"15\">hclock drift: offset to rank 0 (us) with "
	        "linear fits; residuals below (ns, +-%.0f)</text>\n<text x=\"%d\" y=\"40\" "
	        "fill=\"#555\">%d processes, sync %s</text>\n", W, H, W, H, ML, r1, ML, p, spec);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n"
	        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
	        ML, T1, W - ML - MR, B1 - T1, ML, T2, W - ML - MR, B2 - T2);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3f us</text>\n<text x=\"%d\" "
	        "y=\"%d\" text-anchor=\"end\">%.3f us</text>\n<text x=\"%d\" y=\"%d\" "
	        "text-anchor=\"end\">+%.0f ns</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\">"
	        "-%.0f ns</text>\n<text x=\"%d\" y=\"%d\">0 s</text>\n<text x=\"%d\" y=\"%d\" "
	        "text-anchor=\"end\">%g s</text>\n", ML - 6, T1 + 4, o1, ML - 6, B1 + 4, o0, ML - 6,
	        T2 + 4, r1, ML - 6, B2 + 4, r1, ML, B2 + 18, W - MR, B2 + 18, duration_s);
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", ML,
	        Y2(0.0), W - MR, Y2(0.0));
	for (int r = 1; r < p; r++) {
		const char *c = col[(r - 1) % 8];
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1\" points=\"", c);
		for (int i = 0; i < n; i++)
			fprintf(f, "%.1f,%.1f ", X(e[r].s[i].t_s), Y1(e[r].s[i].offset_ns * 1e-3));
		fprintf(f, "\"/>\n");
		if (e[r].fitted)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			        "stroke-dasharray=\"6 4\"/>\n", X(0.0), Y1(fit_at(&e[r], 0) * 1e-3),
			        X(duration_s), Y1(fit_at(&e[r], duration_s) * 1e-3), c);
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" points=\"", c);
		for (int i = 0; i < n; i++)
			fprintf(f, "%.1f,%.1f ", X(e[r].s[i].t_s),
			        Y2(e[r].s[i].offset_ns - fit_at(&e[r], e[r].s[i].t_s)));
		fprintf(f, "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\">rank %d: %.3f ppm</text>\n",
		        W - MR - 160, T1 + 16 * r, c, r, e[r].fitted ? e[r].fit.slope * 1e6 : 0.0);
	}
#undef X
#undef Y1
#undef Y2
	fputs("</svg>\n", f);
	if (fclose(f))
		return err_set(HCLOCK_EIO, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

/* Rank 0: every rank's series fitted, printed in fmt, and plotted if asked (non-zero: the plot
 * could not be written, its line printed). */
static int report(const struct mpitool *t, const char *spec, enum tool_format fmt,
                  const struct drift_cli *k, const struct drift_sample *smp, struct series *e,
                  int n)
{
	for (int r = 0; r < t->size; r++)
		fit_series(&e[r], smp + (size_t)r * n, n);
	if (fmt == FMT_JSON)
		print_json(spec, t->size, k, e, n);
	else if (fmt == FMT_CSV)
		print_csv(t->size, e, n);
	else
		print_table(spec, t->size, k, e, n);
	fflush(stdout);
	if (k->plot && plot_svg(k->plot, spec, t->size, e, n, k->duration_s)) {
		fprintf(stderr, "hclock drift: %s\n", hclock_last_error());
		return HCLOCK_EIO;
	}
	return 0;
}

int cmd_drift(int argc, char **argv)
{
	static const struct option longopts[] = {
		MPITOOL_LONGOPTS,
		{"duration", required_argument, 0, 'D'}, {"interval", required_argument, 0, 'I'},
		{"pingpongs", required_argument, 0, 'n'}, {"plot", required_argument, 0, 'P'},
		{"truth", optional_argument, 0, 't'},
		{0, 0, 0, 0},
	};
	struct mpitool t;
	struct mpitool_opts o;
	struct drift_cli k = {.duration_s = 60, .interval_s = 1, .npp = 20};
	hclock_sync *s = NULL;
	hclock_clock *g = NULL;
	char badbuf[640];

	mpitool_init(&t, "hclock drift", HCLOCK_SYNC_DEFAULT_SPEC, &argc, &argv);
	const char *bad = mpitool_parse(argc, argv, &t, longopts, &o, drift_opt, &k, badbuf,
	                                sizeof(badbuf));
	if (o.help) {
		if (t.rank == 0)
			usage(stdout);
		return mpitool_finish(&t, 0);
	}
	if (!bad)
		bad = mpitool_truth_env(&k.truth, &k.truth_mode);
	if (!bad && drift_nprobes(k.duration_s, k.interval_s) > MAX_PROBES)
		bad = "--duration / --interval gives more than 1000000 probes; take a longer interval";
	if (bad) {
		mpitool_error(&t, "%s", bad);
		return mpitool_finish(&t, 2);
	}
	if (mpitool_sync_setup(&t, o.sync, o.emulate, o.clock, &s))
		return mpitool_finish(&t, 2);
	if (k.truth && !t.emu && mpitool_truth_setup(&t, k.truth_mode, NULL)) {
		hclock_sync_free(s);
		return mpitool_finish(&t, 2);
	}
	int n = drift_nprobes(k.duration_s, k.interval_s);
	struct drift_sample *smp = NULL;
	struct series *e = NULL;
	int rc = hclock_sync_run(s, MPI_COMM_WORLD, t.base, &g);
	if (!rc) /* a failed sync: its one line */
		mpitool_warnings(&t, s);
	if (rc) {
		mpitool_error(&t, "sync %s failed: %s", hclock_sync_spec(s), hclock_last_error());
	} else {
		if (t.rank == 0 && (!(smp = calloc((size_t)t.size * (size_t)n, sizeof(*smp))) ||
		                    !(e = calloc((size_t)t.size, sizeof(*e)))))
			rc = err_set(HCLOCK_ENOMEM, "out of memory for %d probes of %d ranks", n, t.size);
		if ((rc = comm_agree(MPI_COMM_WORLD, rc))) {
			mpitool_error(&t, "%s", hclock_last_error());
		} else {
			if (t.rank == 0 && k.duration_s >= 2)
				fprintf(stderr, "hclock drift: measuring for %g s\n", k.duration_s);
			if ((rc = drift_run(MPI_COMM_WORLD, g, t.emu, k.truth, k.duration_s, k.interval_s,
			                    (int)k.npp, smp)))
				mpitool_error(&t, "drift measurement failed: %s", hclock_last_error());
		}
		int src = hclock_sync_stop(s); /* collective: a continuous sync ends here */
		if (src && !rc)
			mpitool_error(&t, "%s", hclock_last_error());
		rc = rc ? rc : src;
		struct mpitool_cont cs;
		mpitool_cont_report(&t, s, &cs); /* a clock whose exchanges failed: one line */
		mpitool_cont_line(t.name, &cs);
	}
	if (!rc && t.rank == 0)
		rc = report(&t, hclock_sync_spec(s), o.fmt, &k, smp, e, n);
	rc = mpitool_agree(&t, rc); /* a plot rank 0 could not write: every rank exits 1 */
	free(smp);
	free(e);
	hclock_clock_free(g);
	hclock_sync_free(s);
	return mpitool_finish(&t, rc ? 1 : 0);
}
