/*
 * waitplot.c - the communication matrix and the wait states of a traced run as SVG
 * (waitplot.h).
 *
 * The matrix's colour: a cell of value v (messages, or bytes) among the non-empty cells'
 * [vmin, vmax] takes the point t = ln(v / vmin) / ln(vmax / vmin) (t = 1 when vmax = vmin)
 * of a sequential ramp, ColorBrewer's YlOrBr without its two palest steps so that the least
 * cell still stands out from an empty (white) one; its luminance falls monotonically: the
 * darker, the more. A log scale because counts span decades, which a linear one would show as
 * one dark cell among pale ones.
 *
 * The bars: a bar's height is its rows' estimates summed (waits_row's t.est_ns), stacked by
 * pattern in the table's order, without the patterns whose time another pattern counts
 * already (waits_pattern_also_counted: it would count twice); its proven part, the same
 * rows' lower ends summed (t.lo_ns: the waiting the clock's bounds make certain), is hatched
 * from the bar's foot up to a black tick.
 *
 * Nothing the user wrote reaches the SVG: pattern titles are the table's fixed strings, the
 * rest are numbers.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "trace/waitplot.h"
#include "util/err.h"
#include "util/path.h"

struct cell {
	uint64_t msgs;     /* messages sent from the row's ranks to the column's */
	uint64_t bytes;    /* ... their bytes summed */
};

struct waitplot {
	int nprocs;
	int k;             /* ranks per cell and per bar */
	int n;             /* cells a side (and bars): ceil(nprocs / k) <= WAITPLOT_MAX_CELLS */
	uint64_t outside;  /* messages with a rank out of [0, nprocs): left out */
	struct cell c[];   /* n x n, c[row * n + col], row the sender's block */
};

waitplot *waitplot_create(int nprocs)
{
	if (nprocs < 1)
		return NULL;
	int k = (nprocs - 1) / WAITPLOT_MAX_CELLS + 1;
	int n = (nprocs - 1) / k + 1;
	waitplot *p = calloc(1, sizeof(*p) + (size_t)n * (size_t)n * sizeof(struct cell));
	if (!p)
		return NULL;
	p->nprocs = nprocs;
	p->k = k;
	p->n = n;
	return p;
}

void waitplot_message(waitplot *p, int src, int dst, uint64_t bytes)
{
	if (src < 0 || dst < 0 || src >= p->nprocs || dst >= p->nprocs) {
		p->outside++;
		return;
	}
	struct cell *c = &p->c[(size_t)(src / p->k) * (size_t)p->n + (size_t)(dst / p->k)];
	c->msgs++;
	c->bytes += bytes;
}

int waitplot_ranks_per_cell(const waitplot *p)
{
	return p->k;
}

void waitplot_free(waitplot *p)
{
	free(p);
}

/* ---- common ----------------------------------------------------------------------------- */

static void svg_open(FILE *f, int width, int height)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "font-family=\"sans-serif\" font-size=\"12\">\n"
	        "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height, width, height);
}

/* "rank 3" or "ranks 8-15": the ranks of cell (or bar) i */
static void ranks_of(FILE *f, const waitplot *p, int i)
{
	int a = i * p->k, b = a + p->k - 1 < p->nprocs ? a + p->k - 1 : p->nprocs - 1;
	if (a == b)
		fprintf(f, "rank %d", a);
	else
		fprintf(f, "ranks %d-%d", a, b);
}

/* every how many cells (or bars) of px pixels a label fits */
static int label_every(double px)
{
	int s = (int)ceil(30.0 / px);
	return s < 1 ? 1 : s;
}

/* ---- comm_matrix.svg -------------------------------------------------------------------- */

#define MX_LEFT 80   /* px: the left panel's left edge */
#define MX_TOP 110   /* px: the panels' top edge */
#define MX_SIDE 440  /* px: a panel's side */
#define MX_GAP 100   /* px: between the panels (the right one's row labels) */
#define MX_W (MX_LEFT + 2 * MX_SIDE + MX_GAP + 30)
#define MX_H (MX_TOP + MX_SIDE + 110)

/* YlOrBr (ColorBrewer) from its third step: luminance falls along it */
static const unsigned char ramp[][3] = {
	{0xfe, 0xe3, 0x91}, {0xfe, 0xc4, 0x4f}, {0xfe, 0x99, 0x29}, {0xec, 0x70, 0x14},
	{0xcc, 0x4c, 0x02}, {0x99, 0x34, 0x04}, {0x66, 0x25, 0x06}};
#define NRAMP ((int)(sizeof(ramp) / sizeof(ramp[0])))

/* the ramp's colour at t in [0, 1], "#rrggbb" */
static void ramp_at(double t, char out[8])
{
	double x = (t < 0 ? 0 : t > 1 ? 1 : t) * (NRAMP - 1);
	int i = (int)x < NRAMP - 1 ? (int)x : NRAMP - 2;
	double u = x - i;
	int c[3];
	for (int j = 0; j < 3; j++)
		c[j] = (int)lround(ramp[i][j] + u * (ramp[i + 1][j] - ramp[i][j]));
	snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* a figure for people: "512", "1.049 MB" (bytes: SI units) */
static void figure(char *out, size_t len, double v, int bytes)
{
	static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
	int u = 0;
	while (bytes && v >= 1000 && u < 6) {
		v /= 1000;
		u++;
	}
	if (bytes)
		snprintf(out, len, u ? "%.4g %s" : "%.0f %s", v, unit[u]);
	else
		snprintf(out, len, v < 1e6 && v == floor(v) ? "%.0f" : "%.4g", v);
}

static uint64_t cell_value(const struct cell *c, int bytes)
{
	return bytes ? c->bytes : c->msgs;
}

/* one panel: messages (bytes 0) or bytes (1) per cell, its labels and colour scale */
static void matrix_panel(FILE *f, const waitplot *p, int bytes, double x0)
{
	const char *what = bytes ? "bytes" : "messages";
	const double cs = (double)MX_SIDE / p->n; /* px a cell */
	const size_t nn = (size_t)p->n * (size_t)p->n;
	uint64_t vmin = UINT64_MAX, vmax = 0;
	for (size_t i = 0; i < nn; i++) {
		uint64_t v = cell_value(&p->c[i], bytes);
		if (v && v < vmin)
			vmin = v;
		if (v > vmax)
			vmax = v;
	}
	double span = vmax > vmin ? log((double)vmax / (double)vmin) : 0;

	fprintf(f, "<g id=\"%s\">\n<text x=\"%.1f\" y=\"%d\" font-size=\"14\" "
	        "font-weight=\"bold\">%s</text>\n", what, x0, MX_TOP - 48, what);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">receiver</text>\n"
	        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %d)\">"
	        "sender</text>\n", x0 + MX_SIDE / 2.0, MX_TOP - 24, x0 - 44,
	        MX_TOP + MX_SIDE / 2, x0 - 44, MX_TOP + MX_SIDE / 2);
	for (size_t i = 0; i < nn; i++) {
		const struct cell *c = &p->c[i];
		uint64_t v = cell_value(c, bytes);
		if (!v)
			continue; /* empty: the white background */
		int row = (int)(i / (size_t)p->n), col = (int)(i % (size_t)p->n);
		char colour[8];
		ramp_at(span > 0 ? log((double)v / (double)vmin) / span : 1, colour);
		fprintf(f, "<rect class=\"cell\" x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" "
		        "fill=\"%s\"><title>from ", x0 + col * cs, MX_TOP + row * cs, cs, cs, colour);
		ranks_of(f, p, row);
		fputs(" to ", f);
		ranks_of(f, p, col);
		fprintf(f, ": %" PRIu64 " messages, %" PRIu64 " bytes</title></rect>\n", c->msgs,
		        c->bytes);
	}
	fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
	        "stroke=\"#888\"/>\n", x0, MX_TOP, MX_SIDE, MX_SIDE);
	if (!vmax)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">no %s"
		        "</text>\n", x0 + MX_SIDE / 2.0, MX_TOP + MX_SIDE / 2, what);
	/* the rows' and columns' first ranks */
	int every = label_every(cs);
	for (int i = 0; i < p->n; i += every) {
		double mid = (i + 0.5) * cs;
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%d"
		        "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%d"
		        "</text>\n", x0 + mid, MX_TOP - 6, i * p->k, x0 - 6, MX_TOP + mid + 3.5,
		        i * p->k);
	}
	/* the colour scale: min, geometric middle, max */
	int ly = MX_TOP + MX_SIDE + 24;
	fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"14\" fill=\"url(#ramp)\" "
	        "stroke=\"#888\"/>\n", x0, ly, MX_SIDE);
	if (vmax) {
		char a[32], m[32], b[32];
		figure(a, sizeof(a), (double)vmin, bytes);
		figure(m, sizeof(m), sqrt((double)vmin * (double)vmax), bytes);
		figure(b, sizeof(b), (double)vmax, bytes);
		fprintf(f, "<text class=\"min\" x=\"%.1f\" y=\"%d\">%s</text>\n", x0, ly + 30, a);
		if (vmax > vmin)
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			        x0 + MX_SIDE / 2.0, ly + 30, m);
		fprintf(f, "<text class=\"max\" x=\"%.1f\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
		        x0 + MX_SIDE, ly + 30, b);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s per cell, "
	        "log colour scale (white: none)</text>\n</g>\n", x0 + MX_SIDE / 2.0, ly + 48, what);
}

static int matrix_svg(void *ctx, FILE *f)
{
	const waitplot *p = ctx;
	uint64_t msgs = 0, bytes = 0;
	for (size_t i = 0; i < (size_t)p->n * (size_t)p->n; i++) {
		msgs += p->c[i].msgs;
		bytes += p->c[i].bytes;
	}
	char total[32];
	figure(total, sizeof(total), (double)bytes, 1);
	svg_open(f, MX_W, MX_H);
	fputs("<defs><linearGradient id=\"ramp\">", f);
	for (int i = 0; i < NRAMP; i++)
		fprintf(f, "<stop offset=\"%.4f\" stop-color=\"#%02x%02x%02x\"/>",
		        (double)i / (NRAMP - 1), ramp[i][0], ramp[i][1], ramp[i][2]);
	fputs("</linearGradient></defs>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"15\">hclock trace: communication matrix of "
	        "%d processes (sender row, receiver column)", MX_LEFT, p->nprocs);
	if (p->k > 1)
		fprintf(f, "; ranks per cell: %d", p->k);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"38\">%" PRIu64 " messages, %s in all", MX_LEFT,
	        msgs, total);
	if (p->outside)
		fprintf(f, "; %" PRIu64 " messages naming a rank out of range left out", p->outside);
	fputs("</text>\n", f);
	matrix_panel(f, p, 0, MX_LEFT);
	matrix_panel(f, p, 1, MX_LEFT + MX_SIDE + MX_GAP);
	fputs("</svg>\n", f);
	return 0;
}

/* ---- wait_states.svg -------------------------------------------------------------------- */

#define WS_W 1000
#define WS_H 580
#define WS_LEFT 90               /* px: the plot's left edge */
#define WS_TOP 70                /* px: its top */
#define WS_PW 620                /* px: its width */
#define WS_PH 430                /* px: its height */
#define WS_BASE (WS_TOP + WS_PH) /* px: the bars' foot */

/* a colour per pattern, in the table's order (Tableau 10) */
static const char *const pattern_colour[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                             "#bcbd22", "#7f7f7f"};
#define NCOLOUR ((int)(sizeof(pattern_colour) / sizeof(pattern_colour[0])))

/* the bars, summed from the rows */
struct bars {
	int n, np;          /* bars, patterns */
	int64_t *est;       /* est[bar * np + pattern]: the estimates summed, ns */
	int64_t *lo;        /* lo[bar]: the stacked patterns' lower ends summed, ns */
	int64_t *other;     /* other[pattern]: the time of a pattern not stacked, ns */
	int64_t run_ns;     /* the run's length, ns (<= 0: not known) */
	const waitplot *p;
};

/* a bar's stacked height, ns */
static int64_t bar_total(const struct bars *b, int i)
{
	int64_t s = 0;
	for (int q = 0; q < b->np; q++)
		if (!waits_pattern_also_counted(q))
			s += b->est[(size_t)i * (size_t)b->np + (size_t)q];
	return s;
}

/* 1, 2 or 5 times a power of ten: at most 5 steps up to top */
static double tick_step(double top)
{
	double s = pow(10, floor(log10(top))); /* top in [s, 10 s) */
	return top / s > 5 ? 2 * s : top / s > 2 ? s : s / 2;
}

/* bar i: its segments, bottom up, then the hatched proven part and its tick */
static void bar(FILE *f, const struct bars *b, int i, double top_ns)
{
	const double slot = (double)WS_PW / b->n, w = slot * 0.8 > 0.6 ? slot * 0.8 : 0.6;
	const double x = WS_LEFT + i * slot + (slot - w) / 2;
	int64_t total = bar_total(b, i), lo = b->lo[i] < total ? b->lo[i] : total;
	fputs("<g class=\"bar\"><title>", f);
	ranks_of(f, b->p, i);
	fprintf(f, ": %.6g s waiting, %.6g s of it proven</title>\n", total * 1e-9, lo * 1e-9);
	double y = WS_BASE;
	for (int q = 0; q < b->np; q++) {
		int64_t v = b->est[(size_t)i * (size_t)b->np + (size_t)q];
		if (waits_pattern_also_counted(q) || v <= 0)
			continue;
		double h = WS_PH * (double)v / top_ns;
		y -= h;
		fprintf(f, "<rect class=\"seg %s\" x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" "
		        "height=\"%.3f\" fill=\"%s\"><title>%s: %.6g s</title></rect>\n",
		        waits_pattern_name(q), x, y, w, h, pattern_colour[q % NCOLOUR],
		        waits_pattern_title(q), v * 1e-9);
	}
	if (lo > 0) {
		double h = WS_PH * (double)lo / top_ns;
		fprintf(f, "<rect class=\"proven\" x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\""
		        " fill=\"url(#hatch)\"/><line x1=\"%.3f\" x2=\"%.3f\" y1=\"%.3f\" y2=\"%.3f\" "
		        "stroke=\"black\" stroke-width=\"2\"/>\n", x, WS_BASE - h, w, h, x, x + w,
		        WS_BASE - h, WS_BASE - h);
	}
	fputs("</g>\n", f);
}

/* the legend right of the plot: the stacked patterns, the hatch, the patterns left out */
static void legend(FILE *f, const struct bars *b)
{
	const int x = WS_LEFT + WS_PW + 24;
	int y = WS_TOP;
	for (int q = 0; q < b->np; q++) {
		if (waits_pattern_also_counted(q))
			continue;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
		        "<text class=\"legend\" x=\"%d\" y=\"%d\">%s</text>\n", x, y,
		        pattern_colour[q % NCOLOUR], x + 20, y + 11, waits_pattern_title(q));
		y += 20;
	}
	y += 6;
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"#bbb\"/>"
	        "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"url(#hatch)\"/>"
	        "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"black\" stroke-width=\"2\"/>"
	        "<text x=\"%d\" y=\"%d\">proven by the clock's bounds</text>"
	        "<text x=\"%d\" y=\"%d\" fill=\"#555\">(hatched, up to the black tick)</text>\n",
	        x, y, x, y, x, x + 14, y, y, x + 20, y + 11, x + 20, y + 26);
	y += 52;
	int any = 0;
	for (int q = 0; q < b->np; q++) {
		if (!waits_pattern_also_counted(q))
			continue;
		if (!any++) {
			fprintf(f, "<text class=\"note\" x=\"%d\" y=\"%d\">Not stacked (their time is "
			        "another</text><text class=\"note\" x=\"%d\" y=\"%d\">pattern's too, "
			        "it would count twice):</text>\n", x, y, x, y + 15);
			y += 15;
		}
		y += 15;
		fprintf(f, "<text class=\"note\" x=\"%d\" y=\"%d\">%s, %.6g s</text>\n", x + 10, y,
		        waits_pattern_title(q), b->other[q] * 1e-9);
	}
}

static int waits_svg(void *ctx, FILE *f)
{
	const struct bars *b = ctx;
	const waitplot *p = b->p;
	int64_t max = 0, all = 0, proven = 0;
	for (int i = 0; i < b->n; i++) {
		int64_t t = bar_total(b, i);
		max = t > max ? t : max;
		all += t;
		proven += b->lo[i] < t ? b->lo[i] : t;
	}
	svg_open(f, WS_W, WS_H);
	fputs("<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
	      "patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"black\" "
	      "fill-opacity=\"0.45\"/></pattern></defs>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"15\">hclock trace: waiting time per process "
	        "and wait-state pattern, %d processes", WS_LEFT, p->nprocs);
	if (p->k > 1)
		fprintf(f, "; ranks per bar: %d", p->k);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"38\">%.6g s waiting in all, %.6g s of it proven by "
	        "the clock's bounds", WS_LEFT, all * 1e-9, proven * 1e-9);
	if (b->run_ns > 0)
		fprintf(f, "; run %.6g s", b->run_ns * 1e-9);
	fputs("</text>\n", f);

	/* the axis in s, ms or us, whichever keeps its numbers from 1 up */
	double unit = max >= 1000000000 ? 1e9 : max >= 1000000 ? 1e6 : 1e3;
	const char *uname = unit == 1e9 ? "s" : unit == 1e6 ? "ms" : "us";
	double top = 1;
	if (max > 0) {
		double st = tick_step((double)max);
		top = ceil((double)max / st) * st;
		for (int k = 0; k * st <= top * (1 + 1e-9); k++) {
			double y = WS_BASE - WS_PH * k * st / top;
			fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\"/>"
			        "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n", WS_LEFT,
			        WS_LEFT + WS_PW, y, y, WS_LEFT - 6, y + 4, k * st / unit);
		}
	} else {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">no wait states "
		        "found</text>\n", WS_LEFT + WS_PW / 2, WS_TOP + WS_PH / 2);
	}
	for (int i = 0; i < b->n && max > 0; i++)
		bar(f, b, i, top);
	int every = label_every((double)WS_PW / b->n);
	for (int i = 0; i < b->n; i += every)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%d</text>"
		        "\n", WS_LEFT + (i + 0.5) * WS_PW / b->n, WS_BASE + 14, i * p->k);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
	        "stroke=\"black\"/>\n", WS_LEFT, WS_TOP, WS_PW, WS_PH);
	if (p->k > 1)
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">processes (ranks per bar: "
		        "%d; the first labelled)</text>\n", WS_LEFT + WS_PW / 2, WS_BASE + 36, p->k);
	else
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">process (rank)</text>\n",
		        WS_LEFT + WS_PW / 2, WS_BASE + 36);
	fprintf(f, "<text x=\"24\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 24 %d)\">"
	        "waiting time (%s)</text>\n", WS_TOP + WS_PH / 2, WS_TOP + WS_PH / 2, uname);
	legend(f, b);
	fputs("</svg>\n", f);
	return 0;
}

/* the bars from w's rows; 0 or HCLOCK_ENOMEM */
static int bars_sum(struct bars *b, const waitplot *p, waits *w)
{
	b->p = p;
	b->n = p->n;
	b->np = waits_pattern_count();
	b->est = calloc((size_t)b->n * (size_t)b->np, sizeof(*b->est));
	b->lo = calloc((size_t)b->n, sizeof(*b->lo));
	b->other = calloc((size_t)b->np, sizeof(*b->other));
	if (!b->est || !b->lo || !b->other)
		return HCLOCK_ENOMEM;
	size_t n;
	const struct waits_row *r = waits_rows(w, &n);
	for (int q = 0; !r && q < b->np; q++)
		if (waits_pattern_total(w, q).n)
			return HCLOCK_ENOMEM; /* rows there are, their sorted copy failed */
	for (size_t i = 0; i < n; i++) {
		int q = r[i].pattern;
		if (q < 0 || q >= b->np || r[i].proc < 0 || r[i].proc >= p->nprocs)
			continue;
		int k = r[i].proc / p->k;
		b->est[(size_t)k * (size_t)b->np + (size_t)q] += r[i].t.est_ns;
		if (waits_pattern_also_counted(q))
			b->other[q] += r[i].t.est_ns;
		else
			b->lo[k] += r[i].t.lo_ns;
	}
	return 0;
}

int waitplot_write(const waitplot *p, waits *w, int64_t run_ns, const char *dir)
{
	char path[4096];
	if (path_fmt(path, sizeof(path), "%s/comm_matrix.svg", dir))
		return err_set(HCLOCK_EIO, "%s: the path is too long", dir);
	int rc = path_write(path, matrix_svg, (void *)p);
	if (rc || !w)
		return rc;
	path_fmt(path, sizeof(path), "%s/wait_states.svg", dir);
	struct bars b = {.run_ns = run_ns};
	rc = bars_sum(&b, p, w);
	if (rc)
		err_set(rc, "out of memory for the wait states' plot of %d processes", p->nprocs);
	else
		rc = path_write(path, waits_svg, &b);
	free(b.est);
	free(b.lo);
	free(b.other);
	return rc;
}
