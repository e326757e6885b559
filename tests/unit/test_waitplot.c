/*
 * test_waitplot.c - the communication matrix and wait-state plots (src/trace/waitplot.c),
 * written and read back.
 *
 *   test_waitplot [DIR]   DIR: leave the SVGs in DIR/small, DIR/binned, DIR/empty (for
 *                         waitplot_xml_test.py, which parses them as XML); else a temporary
 *                         directory, removed at the end
 *
 * Checked:
 *   - 4 processes, messages 0->1 x10 of 100 B and 2->3 x1 of 1 MB: two non-empty cells per
 *     panel, each where its pair is, its figures in its title; the cell with most messages
 *     (bytes) the darkest of its panel; the scales' min and max; no binning said;
 *   - wait states of known size (a Waitall completing two late messages out of order: a
 *     Late Sender and a Wrong Order; a late send to a blocking receive; a barrier entered at
 *     four times): a bar per process whose height is its stacked waiting time to within a
 *     pixel of the tallest's scale, its hatched part the rows' lower ends likewise, Wrong
 *     Order in no bar and named in the note, every stacked pattern's title in the legend;
 *   - 1000 processes: 8 ranks per cell (said in the titles), at most 128 columns and bars,
 *     the cells' counts and bytes summing to what was sent, out-of-range ranks counted;
 *     the bars' heights the blocks' sums;
 *   - no messages, no wait states: said; no analysis: wait_states.svg not written;
 *   - a directory that does not exist: HCLOCK_EIO, one line naming the file; no .part left;
 *   - garbage: random sizes and ranks, no crash.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hclock_api.h"
#include "test.h"
#include "trace/waitplot.h"
#include "util/rng.h"
#include "waits/waits.h"

/* the layout waitplot.c draws (px) */
#define MX_LEFT 80.0
#define MX_TOP 110.0
#define MX_SIDE 440.0
#define WS_PH 430.0

/* ---- reading the SVG back -------------------------------------------------------------- */

static char *slurp(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *s = NULL;
	size_t n = 0, cap = 0, r;
	do {
		if (n + 4096 + 1 > cap) {
			cap = 2 * cap + 8192;
			char *t = realloc(s, cap);
			if (!t)
				break;
			s = t;
		}
		r = fread(s + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0);
	fclose(f);
	if (s)
		s[n] = 0;
	return s;
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* attribute name of the element starting at tag, as a number (NAN if absent) */
static double num_attr(const char *tag, const char *name)
{
	char key[32];
	snprintf(key, sizeof(key), " %s=\"", name);
	const char *end = strchr(tag, '>'), *a = strstr(tag, key);
	return a && end && a < end ? strtod(a + strlen(key), NULL) : NAN;
}

/* attribute name of the element at tag into out (empty if absent) */
static void str_attr(const char *tag, const char *name, char *out, size_t len)
{
	char key[32];
	snprintf(key, sizeof(key), " %s=\"", name);
	const char *end = strchr(tag, '>'), *a = strstr(tag, key);
	out[0] = 0;
	if (a && end && a < end) {
		a += strlen(key);
		size_t n = strcspn(a, "\"");
		snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), a);
	}
}

/* the text of the element of class cls in panel id, into out (empty if none) */
static void panel_text(const char *svg, const char *id, const char *cls, char *out, size_t len)
{
	char head[64], key[64];
	snprintf(head, sizeof(head), "<g id=\"%s\">", id);
	snprintf(key, sizeof(key), "class=\"%s\"", cls);
	const char *p = strstr(svg, head), *end = p ? strstr(p, "</g>") : NULL;
	const char *t = p ? strstr(p, key) : NULL;
	out[0] = 0;
	if (t && t < end && (t = strchr(t, '>')))
		snprintf(out, len, "%.*s", (int)strcspn(t + 1, "<"), t + 1);
}

/* luminance of "#rrggbb" (Rec. 709 weights on the coded values) */
static double luminance(const char *c)
{
	unsigned r, g, b;
	if (sscanf(c, "#%2x%2x%2x", &r, &g, &b) != 3)
		return -1;
	return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/* one panel's cells */
struct cells {
	int n;
	double x[20000], y[20000], w[20000], lum[20000];
	uint64_t msgs[20000], bytes[20000];
};

static void read_panel(const char *svg, const char *id, struct cells *c)
{
	char head[64];
	snprintf(head, sizeof(head), "<g id=\"%s\">", id);
	c->n = 0;
	const char *p = strstr(svg, head), *end = p ? strstr(p, "</g>") : NULL;
	TEST_CHECK(p && end, "no panel %s", id);
	if (!p || !end)
		return;
	while ((p = strstr(p, "<rect class=\"cell\"")) && p < end && c->n < 20000) {
		char fill[16];
		str_attr(p, "fill", fill, sizeof(fill));
		c->x[c->n] = num_attr(p, "x");
		c->y[c->n] = num_attr(p, "y");
		c->w[c->n] = num_attr(p, "width");
		c->lum[c->n] = luminance(fill);
		const char *t = strstr(p, ": ");
		if (!t || sscanf(t, ": %" SCNu64 " messages, %" SCNu64 " bytes", &c->msgs[c->n],
		                 &c->bytes[c->n]) != 2)
			TEST_CHECK(0, "a cell's title without its figures in %s", id);
		c->n++;
		p++;
	}
}

/* the index of the largest value, and whether it has the lowest luminance of all */
static void check_darkest(const struct cells *c, int bytes, const char *what)
{
	int best = 0, dark = 0;
	for (int i = 0; i < c->n; i++) {
		uint64_t v = bytes ? c->bytes[i] : c->msgs[i], vb = bytes ? c->bytes[best] : c->msgs[best];
		if (v > vb)
			best = i;
		if (c->lum[i] < c->lum[dark])
			dark = i;
	}
	TEST_CHECK(c->n > 0 && best == dark, "%s: the largest cell (%d) is not the darkest (%d)",
	           what, best, dark);
	for (int i = 0; i < c->n; i++)
		if (i != best && (bytes ? c->bytes[i] < c->bytes[best] : c->msgs[i] < c->msgs[best]))
			TEST_CHECK(c->lum[i] > c->lum[best], "%s: cell %d as dark as the largest", what, i);
}

/* the bars of wait_states.svg: per bar its first rank, stacked height, proven height */
struct barsread {
	int n;
	int rank[200];
	double h[200], proven[200];
};

static void read_bars(const char *svg, struct barsread *b)
{
	b->n = 0;
	const char *p = svg;
	while ((p = strstr(p, "<g class=\"bar\">")) && b->n < 200) {
		const char *end = strstr(p, "</g>");
		const char *t = strstr(p, "<title>rank"); /* "rank 3" or "ranks 8-15" */
		b->rank[b->n] = t && t < end ? atoi(t + strlen("<title>rank") + (t[11] == 's')) : -1;
		b->h[b->n] = b->proven[b->n] = 0;
		for (const char *s = p; (s = strstr(s, "<rect class=\"seg ")) && s < end; s++)
			b->h[b->n] += num_attr(s, "height");
		const char *pr = strstr(p, "<rect class=\"proven\"");
		if (pr && pr < end)
			b->proven[b->n] = num_attr(pr, "height");
		b->n++;
		p = end;
	}
}

/* ---- runs of known waiting -------------------------------------------------------------- */

/* a stamp whose bounds are +-hw ns */
static struct waits_stamp bounded(int64_t t, int64_t hw)
{
	return (struct waits_stamp){.t_ns = t, .below_ns = hw, .above_ns = hw};
}

static struct waits_stamp exact(int64_t t)
{
	return bounded(t, 10);
}

static struct waits_call call(int proc, int64_t enter, int64_t leave)
{
	return (struct waits_call){.proc = proc, .func = 1, .enter = exact(enter),
	                           .leave = exact(leave)};
}

static void barrier(waits *w, int n, const int64_t *enter, int64_t leave)
{
	for (int i = 0; i < n; i++) {
		struct waits_coll c = {.call = call(i, enter[i], leave), .comm = 7, .size = n,
		                       .root = -1, .kind = WAITS_COLL_BARRIER, .seq = -1};
		c.start = c.call.enter;
		waits_add_coll(w, &c);
	}
}

/* the 4 processes' waiting: see the top; expected per process, stacked and proven */
static waits *small_waits(void)
{
	waits *w = waits_create(&(struct waits_opts){0});
	struct waits_send a = {.call = call(1, 5000, 5100), .dst = 0, .comm = 1, .tag = 1};
	struct waits_send b = {.call = call(2, 3000, 3100), .dst = 0, .comm = 1, .tag = 1};
	struct waits_recv ra = {.call = call(0, 1000, 9000), .src = 1, .comm = 1, .tag = 1};
	struct waits_recv rb = ra;
	rb.src = 2;
	rb.call.leave = exact(9001);
	struct waits_send c = {.call = call(2, 20000, 20100), .dst = 3, .comm = 1, .tag = 2,
	                       .bytes = 1000000};
	/* its bounds +-3 us: a third of its waiting not proven */
	struct waits_recv rc = {.call = {.proc = 3, .func = 1, .enter = bounded(0, 3000),
	                                 .leave = bounded(20500, 3000)},
	                        .src = 2, .comm = 1, .tag = 2, .posted_in_call = 1};
	waits_add_send(w, &a);
	waits_add_send(w, &b);
	waits_add_recv(w, &ra);
	waits_add_recv(w, &rb);
	waits_add_send(w, &c);
	waits_add_recv(w, &rc);
	barrier(w, 4, (const int64_t[]){30000, 30100, 30200, 31000}, 31100);
	waits_finish(w);
	return w;
}

/* per process (or block of k), the stacked estimate and lower end summed from w's rows */
static void expected(waits *w, int nbars, int k, int64_t *est, int64_t *lo, int64_t *other)
{
	memset(est, 0, (size_t)nbars * sizeof(*est));
	memset(lo, 0, (size_t)nbars * sizeof(*lo));
	*other = 0;
	size_t n;
	const struct waits_row *r = waits_rows(w, &n);
	for (size_t i = 0; i < n; i++) {
		if (waits_pattern_also_counted(r[i].pattern)) {
			*other += r[i].t.est_ns;
			continue;
		}
		est[r[i].proc / k] += r[i].t.est_ns;
		lo[r[i].proc / k] += r[i].t.lo_ns;
	}
}

/* the bars against the expected sums: heights proportional within a pixel */
static void check_bars(const char *svg, int nbars, int k, const int64_t *est,
                       const int64_t *lo)
{
	struct barsread b;
	read_bars(svg, &b);
	TEST_CHECK(b.n == nbars, "%d bars drawn, expected %d", b.n, nbars);
	int64_t max = 0;
	double hmax = 0;
	for (int i = 0; i < nbars; i++)
		max = est[i] > max ? est[i] : max;
	for (int i = 0; i < b.n; i++)
		hmax = b.h[i] > hmax ? b.h[i] : hmax;
	TEST_CHECK(hmax > WS_PH / 2 && hmax <= WS_PH + 0.01, "the tallest bar is %.1f px of %.0f",
	           hmax, WS_PH);
	for (int i = 0; i < b.n && i < nbars; i++) {
		TEST_CHECK(b.rank[i] == i * k, "bar %d labelled rank %d, expected %d", i, b.rank[i],
		           i * k);
		double want = hmax * (double)est[i] / (double)max;
		TEST_CHECK(fabs(b.h[i] - want) <= 1, "bar %d: %.2f px high, expected %.2f (%" PRId64
		           " ns of %" PRId64 ")", i, b.h[i], want, est[i], max);
		double wantp = hmax * (double)(lo[i] < est[i] ? lo[i] : est[i]) / (double)max;
		TEST_CHECK(fabs(b.proven[i] - wantp) <= 1, "bar %d: proven %.2f px, expected %.2f", i,
		           b.proven[i], wantp);
	}
}

/* ---- the cases -------------------------------------------------------------------------- */

static void small(const char *dir)
{
	waitplot *p = waitplot_create(4);
	for (int i = 0; i < 10; i++)
		waitplot_message(p, 0, 1, 100);
	waitplot_message(p, 2, 3, 1000000);
	waits *w = small_waits();
	int rc = waitplot_write(p, w, 2000000000, dir);
	TEST_CHECK(rc == 0, "write: %d %s", rc, hclock_last_error());
	TEST_CHECK(waitplot_ranks_per_cell(p) == 1, "4 processes binned");

	char *m = slurp(dir, "comm_matrix.svg");
	TEST_CHECK(m, "%s/comm_matrix.svg not written", dir);
	if (m) {
		static struct cells c;
		TEST_CHECK(strstr(m, "communication matrix of 4 processes") &&
		           !strstr(m, "ranks per cell"), "the matrix's title");
		TEST_CHECK(strstr(m, "11 messages, 1.001 MB in all"), "the totals");
		read_panel(m, "messages", &c);
		TEST_CHECK(c.n == 2, "%d non-empty message cells, 2 pairs sent", c.n);
		double cs = MX_SIDE / 4;
		for (int i = 0; i < c.n; i++) {
			int row = (int)lround((c.y[i] - MX_TOP) / cs),
			    col = (int)lround((c.x[i] - MX_LEFT) / cs);
			TEST_CHECK(fabs(c.w[i] - cs) < 0.01, "a cell %.3f px wide", c.w[i]);
			TEST_CHECK((row == 0 && col == 1 && c.msgs[i] == 10 && c.bytes[i] == 1000) ||
			           (row == 2 && col == 3 && c.msgs[i] == 1 && c.bytes[i] == 1000000),
			           "cell at row %d col %d: %" PRIu64 " messages, %" PRIu64 " bytes", row,
			           col, c.msgs[i], c.bytes[i]);
		}
		check_darkest(&c, 0, "messages");
		read_panel(m, "bytes", &c);
		TEST_CHECK(c.n == 2, "%d non-empty byte cells, 2 pairs sent", c.n);
		check_darkest(&c, 1, "bytes");
		char a[32], b[32];
		panel_text(m, "messages", "min", a, sizeof(a));
		panel_text(m, "messages", "max", b, sizeof(b));
		TEST_CHECK(!strcmp(a, "1") && !strcmp(b, "10"), "messages scale %s to %s", a, b);
		panel_text(m, "bytes", "min", a, sizeof(a));
		panel_text(m, "bytes", "max", b, sizeof(b));
		TEST_CHECK(!strcmp(a, "1 kB") && !strcmp(b, "1 MB"), "bytes scale %s to %s", a, b);
		TEST_CHECK(count(m, "log colour scale") == 2, "the scales' captions");
	}
	free(m);

	char *s = slurp(dir, "wait_states.svg");
	TEST_CHECK(s, "%s/wait_states.svg not written", dir);
	if (s) {
		int64_t est[4], lo[4], other;
		expected(w, 4, 1, est, lo, &other);
		/* the scenario itself: proc 0 a Late Sender (4000) and a barrier (1000), its Wrong
		 * Order (4000) not stacked; 1 and 2 the barrier; 3 a late sender (20000) */
		TEST_CHECK(est[0] == 5000 && est[1] == 900 && est[2] == 800 && est[3] == 20000 &&
		           other == 4000, "the run's waiting: %" PRId64 " %" PRId64 " %" PRId64 " %"
		           PRId64 ", not stacked %" PRId64, est[0], est[1], est[2], est[3], other);
		TEST_CHECK(lo[3] < 16000 && lo[0] > 4900, "proven: rank 3 %" PRId64 " (< 16000), "
		           "rank 0 %" PRId64 " (> 4900)", lo[3], lo[0]);
		check_bars(s, 4, 1, est, lo);
		TEST_CHECK(!strstr(s, "seg wrong_order"), "Wrong Order stacked");
		TEST_CHECK(strstr(s, "class=\"note\"") && strstr(s, ">Wrong Order, 4e-06 s<"),
		           "the note on Wrong Order");
		for (int q = 0; q < waits_pattern_count(); q++) {
			char t[128];
			snprintf(t, sizeof(t), ">%s</text>", waits_pattern_title(q));
			TEST_CHECK(waits_pattern_also_counted(q) || strstr(s, t), "no legend entry %s",
			           waits_pattern_title(q));
		}
		TEST_CHECK(strstr(s, "seg late_sender") && strstr(s, "seg wait_barrier"),
		           "the stacked patterns");
		TEST_CHECK(strstr(s, "waiting time per process and wait-state pattern, 4 processes<") &&
		           strstr(s, "; run 2 s"), "the title");
		TEST_CHECK(strstr(s, "proven by the clock's bounds"), "the hatch's legend");
	}
	free(s);
	waits_free(w);
	waitplot_free(p);
}

static void binned(const char *dir)
{
	enum { N = 1000 };
	waitplot *p = waitplot_create(N);
	uint64_t msgs = 0, bytes = 0;
	for (int i = 0; i < N; i++) {
		waitplot_message(p, i, (i + 1) % N, (uint64_t)i + 1);
		waitplot_message(p, i, (i * 7 + 3) % N, 10);
		msgs += 2;
		bytes += (uint64_t)i + 1 + 10;
	}
	waitplot_message(p, -1, 0, 5);
	waitplot_message(p, 0, N, 5);
	/* a barrier entered by rank i at i us, left at 1 ms: rank i waits (999 - i) us */
	waits *w = waits_create(&(struct waits_opts){0});
	static int64_t enter[N];
	for (int i = 0; i < N; i++)
		enter[i] = 1000 * (int64_t)i;
	barrier(w, N, enter, 1000000);
	waits_finish(w);
	int rc = waitplot_write(p, w, 0, dir);
	TEST_CHECK(rc == 0, "write: %d %s", rc, hclock_last_error());
	TEST_CHECK(waitplot_ranks_per_cell(p) == 8, "%d ranks per cell of 1000, expected 8",
	           waitplot_ranks_per_cell(p));
	char *m = slurp(dir, "comm_matrix.svg");
	if (m) {
		static struct cells c;
		TEST_CHECK(strstr(m, "of 1000 processes (sender row, receiver column); ranks per "
		                  "cell: 8<"), "the binned matrix's title");
		TEST_CHECK(strstr(m, "; 2 messages naming a rank out of range left out"),
		           "out-of-range messages not said");
		read_panel(m, "messages", &c);
		uint64_t sm = 0, sb = 0;
		int cols = 0;
		static char seen[1000];
		for (int i = 0; i < c.n; i++) {
			sm += c.msgs[i];
			sb += c.bytes[i];
			int col = (int)lround((c.x[i] - MX_LEFT) / c.w[i]);
			if (col >= 0 && col < 1000 && !seen[col]++)
				cols++;
		}
		TEST_CHECK(sm == msgs && sb == bytes, "cells sum to %" PRIu64 " messages, %" PRIu64
		           " bytes; sent %" PRIu64 ", %" PRIu64, sm, sb, msgs, bytes);
		TEST_CHECK(c.n > 0 && MX_SIDE / c.w[0] <= 128.001 && cols <= 128 && cols == 125,
		           "%d columns (%.1f a side), expected 125 <= 128", cols, MX_SIDE / c.w[0]);
		check_darkest(&c, 0, "binned messages");
	} else {
		TEST_CHECK(0, "%s/comm_matrix.svg not written", dir);
	}
	free(m);
	char *s = slurp(dir, "wait_states.svg");
	if (s) {
		int64_t est[125], lo[125], other;
		expected(w, 125, 8, est, lo, &other);
		TEST_CHECK(strstr(s, "1000 processes; ranks per bar: 8<") && !strstr(s, "; run "),
		           "the binned bars' title");
		check_bars(s, 125, 8, est, lo);
	} else {
		TEST_CHECK(0, "%s/wait_states.svg not written", dir);
	}
	free(s);
	waits_free(w);
	waitplot_free(p);
}

static void empty(const char *dir)
{
	waitplot *p = waitplot_create(2);
	waits *w = waits_create(&(struct waits_opts){0});
	waits_finish(w);
	int rc = waitplot_write(p, w, -1, dir);
	TEST_CHECK(rc == 0, "write: %d %s", rc, hclock_last_error());
	char *m = slurp(dir, "comm_matrix.svg"), *s = slurp(dir, "wait_states.svg");
	TEST_CHECK(m && count(m, "class=\"cell\"") == 0 && strstr(m, ">no messages<") &&
	           strstr(m, ">no bytes<"), "the empty matrix");
	TEST_CHECK(s && !strstr(s, "class=\"bar\"") && strstr(s, ">no wait states found<"),
	           "no wait states");
	free(m);
	free(s);
	waits_free(w);
	waitplot_free(p);
}

/* without an analysis: the matrix only */
static void matrix_only(const char *dir)
{
	waitplot *p = waitplot_create(3);
	waitplot_message(p, 2, 0, 0); /* an empty message: a message, no bytes */
	int rc = waitplot_write(p, NULL, 0, dir);
	TEST_CHECK(rc == 0, "write: %d %s", rc, hclock_last_error());
	char *m = slurp(dir, "comm_matrix.svg"), *s = slurp(dir, "wait_states.svg");
	TEST_CHECK(m && !s, "without an analysis: the matrix %s, the wait states %s",
	           m ? "written" : "missing", s ? "written" : "not");
	TEST_CHECK(m && count(m, "class=\"cell\"") == 1 && strstr(m, ">no bytes<"),
	           "an empty message: a cell of messages, none of bytes");
	free(m);
	free(s);
	waitplot_free(p);
}

static void io_error(const char *dir)
{
	char bad[4200];
	snprintf(bad, sizeof(bad), "%s/no/such/dir", dir);
	waitplot *p = waitplot_create(2);
	waitplot_message(p, 0, 1, 8);
	int rc = waitplot_write(p, NULL, 0, bad);
	const char *e = hclock_last_error();
	TEST_CHECK(rc == HCLOCK_EIO, "a missing directory gives %d, expected HCLOCK_EIO", rc);
	TEST_CHECK(strstr(e, bad) && strstr(e, "comm_matrix.svg") && !strchr(e, '\n') &&
	           strstr(e, "No such file"), "the error line: '%s'", e);
	waitplot_free(p);
}

/* no file.part left in dir */
static void no_parts(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		TEST_CHECK(!strstr(de->d_name, ".part"), "%s/%s left behind", dir, de->d_name);
	if (d)
		closedir(d);
}

static void garbage(const char *dir)
{
	struct rng g;
	test_seed = 7;
	rng_seed(&g, test_seed);
	TEST_CHECK(!waitplot_create(0) && !waitplot_create(-5), "a plot of no process");
	for (int round = 0; round < 20; round++) {
		int n = 1 + (int)(rng_uniform(&g) * 3000);
		waitplot *p = waitplot_create(n);
		for (int i = 0; i < 2000; i++)
			waitplot_message(p, (int)(rng_uniform(&g) * (n + 4)) - 2,
			                 (int)(rng_uniform(&g) * (n + 4)) - 2,
			                 (uint64_t)(rng_uniform(&g) * 1e12));
		waits *w = waits_create(&(struct waits_opts){0});
		for (int i = 0; i < 500; i++) {
			int s = (int)(rng_uniform(&g) * n), r = (int)(rng_uniform(&g) * n);
			int64_t t = (int64_t)(rng_uniform(&g) * 1e6);
			waits_add_send(w, &(struct waits_send){.call = call(s, t, t + 10), .dst = r});
			waits_add_recv(w, &(struct waits_recv){.call = call(r, t / 2, t + 50), .src = s});
		}
		waits_finish(w);
		int rc = waitplot_write(p, round % 3 ? w : NULL, (int64_t)round, dir);
		TEST_CHECK(rc == 0, "garbage round %d (%d processes): %d %s", round, n, rc,
		           hclock_last_error());
		waits_free(w);
		waitplot_free(p);
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/test_waitplot.XXXXXX", sub[4200];
	const char *base = argc > 1 ? argv[1] : mkdtemp(tmp);
	if (!base) {
		perror("mkdtemp");
		return 1;
	}
	static const char *const cases[] = {"small", "binned", "empty", "matrix_only", "garbage"};
	static void (*const run[])(const char *) = {small, binned, empty, matrix_only, garbage};
	mkdir(base, 0777);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(sub, sizeof(sub), "%s/%s", base, cases[i]);
		mkdir(sub, 0777);
		run[i](sub);
		no_parts(sub);
	}
	io_error(base);
	if (argc <= 1)
		nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return test_end("test_waitplot");
}
