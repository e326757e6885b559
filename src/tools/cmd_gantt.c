/*
 * cmd_gantt.c - hclock gantt: Fig. 10 of Hunold & Carpen-Amarie from a trace of hclock trace.
 *
 *   hclock gantt TRACE_DIR --op allreduce [--from S --to S] [--raw] -o FILE.svg
 *
 * One row per rank, a bar for every call of the chosen operation inside the window (other
 * MPI calls in grey, time outside MPI blank), on the global clock; with --raw a second panel
 * beside it shows the same calls on each process's raw local clock, placed so that rank 0's
 * bars coincide in both panels: the offsets the global clock removed are what moves the other
 * ranks' bars (and can push them out of the window: each row says how many). The window:
 * --from/--to in seconds since the trace's first event (default: from just before rank 0's
 * middle call of the operation to just after the eighth one after it).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hclock_api.h"
#include "tools/cmd.h"
#include "trace/merge.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: hclock gantt TRACE_DIR --op OP [--from S --to S] [--raw] -o FILE.svg\n"
	        "Per-rank bars of one MPI operation from a trace of hclock trace (Fig. 10 of\n"
	        "Hunold & Carpen-Amarie): on the global clock, and with --raw also on the raw\n"
	        "local clocks.\n\n"
	        "  --op OP            the call to draw: allreduce, MPI_Allreduce, barrier, send...\n"
	        "  --from S, --to S   the window, seconds since the trace's first event (default:\n"
	        "                     around rank 0's middle call of OP and the eight after it)\n"
	        "  --raw              add the same calls on each process's raw local clock\n"
	        "  -o, --output FILE  the SVG to write (written whole, then renamed)\n"
	        "  -h, --help\n");
}

static int is_op(const char *name, const char *op)
{
	if (!strncasecmp(op, "MPI_", 4))
		op += 4;
	return !strncmp(name, "MPI_", 4) && !strcasecmp(name + 4, op);
}

/* what is drawn: the operation, the window on the global clock, the page */
struct gantt {
	const char *op, *out;
	double from, to;  /* the window asked for, s since the first event (-1: the default) */
	int raw;          /* the raw panel too */
	int64_t w0, w1;   /* the window, ns (global clock) */
	int64_t shift0;   /* rank 0's local - global at its first call of op, ns */
	const char *dir;
};

struct panel {
	int raw;          /* 0: global clock, 1: local clocks */
	double x0, w;     /* pixel origin and width */
};

#define H_ROW 22.0
#define TOP 50.0
#define LEFT 70.0

static int64_t rec_start(const struct rec *r, int raw)
{
	return raw ? r->t_l : r->t_g;
}

static int64_t rec_end(const struct rec *r, int raw)
{
	return raw ? r->t2_l : r->t2_g;
}

/* the options into g; -1, or the exit code */
static int parse(int argc, char **argv, struct gantt *g)
{
	static const struct option opts[] = {
		{"op", required_argument, 0, 'p'}, {"from", required_argument, 0, 'f'},
		{"to", required_argument, 0, 't'}, {"raw", no_argument, 0, 'r'},
		{"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		char *end = NULL;
		switch (c) {
		case 'p': g->op = optarg; break;
		case 'o': g->out = optarg; break;
		case 'r': g->raw = 1; break;
		case 'f':
		case 't': {
			double v = strtod(optarg, &end);
			if (end == optarg || *end || v < 0) {
				fprintf(stderr, "hclock gantt: --%s '%s': expected seconds >= 0 since the "
				        "trace's first event\n", c == 'f' ? "from" : "to", optarg);
				return 2;
			}
			*(c == 'f' ? &g->from : &g->to) = v;
			break;
		}
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "hclock gantt: %s: unknown option or missing value (hclock gantt "
			        "--help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1 || !g->op || !g->out) {
		fprintf(stderr, "hclock gantt: needs one TRACE_DIR, --op OP and -o FILE.svg (hclock "
		        "gantt --help)\n");
		return 2;
	}
	if ((g->from >= 0) != (g->to >= 0) || (g->from >= 0 && g->to <= g->from)) {
		fprintf(stderr, "hclock gantt: give --from and --to together, --to after --from\n");
		return 2;
	}
	g->dir = argv[optind];
	return -1;
}

/* the window and the raw panel's origin, from rank 0's calls of op (or --from, --to).
 * Returns 0 or 1 (no such call, no memory) */
static int window(const struct rec_set *ts, struct gantt *g)
{
	const struct rec_proc *p0 = &ts->p[0];
	size_t n0 = 0, *idx = malloc((p0->nrec + 1) * sizeof(size_t));
	if (!idx) {
		fprintf(stderr, "hclock gantt: out of memory for %zu records\n", p0->nrec);
		return 1;
	}
	for (size_t i = 0; i < p0->nrec; i++)
		if ((p0->rec[i].kind == REC_CALL || p0->rec[i].kind == REC_COLL) &&
		    is_op(rec_func_name(p0, &p0->rec[i]), g->op))
			idx[n0++] = i;
	if (!n0) {
		fprintf(stderr, "hclock gantt: rank 0 made no %s call in %s (or it was filtered out)\n",
		        g->op, g->dir);
		free(idx);
		return 1;
	}
	if (g->from >= 0) {
		g->w0 = ts->t0_g + (int64_t)(g->from * 1e9);
		g->w1 = ts->t0_g + (int64_t)(g->to * 1e9);
	} else {
		size_t a = n0 / 2, b = a + 8 < n0 ? a + 8 : n0 - 1;
		const struct rec *ra = &p0->rec[idx[a]], *rb = &p0->rec[idx[b]];
		int64_t span = rb->t2_g - ra->t_g;
		g->w0 = ra->t_g - span / 10;
		g->w1 = rb->t2_g + span / 10;
	}
	/* local clock origin: rank 0's own offset local - global at its first op call */
	g->shift0 = p0->rec[idx[0]].t_l - p0->rec[idx[0]].t_g;
	free(idx);
	return 0;
}

/* rank r's row of panel pn: a bar per call inside the window */
static void row(FILE *f, const struct gantt *g, const struct rec_proc *p, int r,
                const struct panel *pn)
{
	int64_t w0 = g->w0, w1 = g->w1;
	double y = TOP + r * H_ROW;
	if (pn->raw == 0)
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">rank %d</text>\n",
		        LEFT - 6, y + 14, r);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f7f7f7\"/>"
	        "\n", pn->x0, y + 2, pn->w, H_ROW - 4);
	long outside = 0;
	for (size_t i = 0; i < p->nrec; i++) {
		const struct rec *x = &p->rec[i];
		if (x->kind != REC_CALL && x->kind != REC_COLL)
			continue;
		int64_t s = rec_start(x, pn->raw), e = rec_end(x, pn->raw);
		if (pn->raw) {
			s -= g->shift0;
			e -= g->shift0;
		}
		int mine = is_op(rec_func_name(p, x), g->op);
		if (e < w0 || s > w1) {
			/* an op call that the global clock puts inside the window */
			outside += pn->raw && mine && x->t2_g >= w0 && x->t_g <= w1;
			continue;
		}
		double xs = pn->x0 + pn->w * (double)((s < w0 ? w0 : s) - w0) / (double)(w1 - w0);
		double xe = pn->x0 + pn->w * (double)((e > w1 ? w1 : e) - w0) / (double)(w1 - w0);
		fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\">"
		        "<title>%s %.3f us</title></rect>\n", xs, y + (mine ? 3 : 8),
		        xe - xs > 0.5 ? xe - xs : 0.5, mine ? H_ROW - 6 : H_ROW - 16,
		        mine ? "#d62728" : "#bbbbbb", rec_func_name(p, x), (e - s) * 1e-3);
	}
	if (outside)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\">%ld outside</text>\n",
		        pn->x0 + pn->w - 70, y + 14, outside);
}

/* the SVG of the window's calls */
static void svg(FILE *f, const struct rec_set *ts, const struct gantt *g)
{
	const double W = g->raw ? 1400 : 900;
	double ph = TOP + ts->size * H_ROW + 40;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	        "font-family=\"sans-serif\" font-size=\"11\">\n", W, ph);
	fprintf(f, "<text x=\"%.0f\" y=\"18\" font-size=\"13\">%s per rank, %.1f us window; clock: %s"
	        "</text>\n", LEFT, g->op, (g->w1 - g->w0) * 1e-3, ts->p[0].h.sync);
	int npanels = g->raw ? 2 : 1;
	double pw = (W - LEFT - 20 - (npanels - 1) * 60) / npanels;
	for (int k = 0; k < npanels; k++) {
		struct panel pn = {k, LEFT + k * (pw + 60), pw};
		fprintf(f, "<text x=\"%.1f\" y=\"38\">%s</text>\n", pn.x0,
		        k ? "raw local clocks (each process's own time, rank 0's bars aligned)"
		          : "global clock (hclock)");
		for (int r = 0; r < ts->size; r++)
			row(f, g, &ts->p[r], r, &pn);
		/* axis */
		double ya = TOP + ts->size * H_ROW + 4;
		for (int t = 0; t <= 4; t++) {
			double x = pn.x0 + pn.w * t / 4;
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n"
			        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.1f us</text>\n", x, x,
			        (double)TOP, ya, x, ya + 14,
			        (g->w1 - g->w0) * 1e-3 * t / 4 + (g->w0 - ts->t0_g) * 1e-3);
		}
	}
	fprintf(f, "</svg>\n");
}

int cmd_gantt(int argc, char **argv)
{
	struct gantt g = {.from = -1, .to = -1};
	int rc = parse(argc, argv, &g);
	if (rc >= 0)
		return rc;
	struct rec_set ts;
	if (rec_load(g.dir, &ts)) {
		fprintf(stderr, "hclock gantt: %s\n", hclock_last_error());
		return 1;
	}
	rc = 1;
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.part", g.out);
	FILE *f = NULL;
	if (window(&ts, &g))
		goto out;
	if (!(f = fopen(tmp, "w"))) {
		fprintf(stderr, "hclock gantt: cannot write %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	svg(f, &ts, &g);
	int bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, g.out)) {
		fprintf(stderr, "hclock gantt: writing %s failed: %s\n", g.out, strerror(errno));
		remove(tmp);
		goto out;
	}
	rc = 0;
out:
	rec_set_free(&ts);
	return rc;
}
