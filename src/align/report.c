/*
 * report.c - what hclock align tells: the per-node table or JSON object, the bounds at every
 * event as CSV, the events the repair of message order moved as CSV, and an SVG plot of the
 * accuracy band and broadcast differential delays over time (like Fig. 6 of Poirier, Roy &
 * Dagenais). Reads the engine's results, computes nothing new.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align/align_priv.h"
#include "align/outbuf.h"
#include "util/err.h"

/* Text into SVG markup: the two characters XML reserves in text. */
static void svg_escaped(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
}

static const char *quality(const struct anode *n)
{
	return n->quality == NODE_REFERENCE ? "reference" : pair_quality_name(n->quality);
}

/* a JSON string (node names come from file names: escape what JSON requires) */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, long double v, int prec)
{
	if (isfinite(v))
		fprintf(f, "%.*Lf", prec, v);
	else
		fputs("null", f);
}

/* one ordered pair's messages and one-sided events; from the engine's arrays */
struct pair_count {
	size_t from, to;
	size_t msgs, lone_sends, lone_recvs;
};

/* every ordered pair with messages or one-sided events, by (from, to); *n of them; NULL
 * with *n = 0 if none or out of memory (then *bad) */
static struct pair_count *pair_counts(const hclock_align *a, size_t *n, int *bad)
{
	size_t nn = a->set.nnodes, k = 0;
	size_t *m = calloc(nn * nn, sizeof(*m));
	struct pair_count *pc = NULL;

	*n = 0;
	*bad = !m;
	if (!m)
		return NULL;
	for (size_t i = 0; i < a->nmsg; i++)
		m[(size_t)a->msg[i].src * nn + a->msg[i].dst]++;
	for (size_t i = 0; i < nn * nn; i++)
		k += m[i] || a->unmatched[2 * i] || a->unmatched[2 * i + 1];
	if (k && !(pc = malloc(k * sizeof(*pc)))) {
		*bad = 1;
		free(m);
		return NULL;
	}
	for (size_t i = 0; i < nn * nn; i++)
		if (m[i] || a->unmatched[2 * i] || a->unmatched[2 * i + 1])
			pc[(*n)++] = (struct pair_count){i / nn, i % nn, m[i], a->unmatched[2 * i],
			                                 a->unmatched[2 * i + 1]};
	free(m);
	return pc;
}

static size_t unmatched_total(const hclock_align *a)
{
	size_t t = 0;

	for (size_t i = 0; i < 2 * a->set.nnodes * a->set.nnodes; i++)
		t += a->unmatched[i];
	return t;
}

/* the repair's totals: events moved, largest move (ns) */
static size_t moved_total(const hclock_align *a, int64_t *max_ns)
{
	size_t t = 0;

	*max_ns = 0;
	for (size_t v = 0; v < a->set.nnodes; v++) {
		t += a->node[v].moved;
		if (a->node[v].moved_max > *max_ns)
			*max_ns = a->node[v].moved_max;
	}
	return t;
}

static const char *estimate_name(const hclock_align *a)
{
	return a->opts.mode == HCLOCK_ALIGN_REGRESSION ? "regression" :
	       a->opts.estimate == HCLOCK_ALIGN_MEAN ? "mean" : "bisector";
}

static int report_json(const hclock_align *a, FILE *f)
{
	size_t np;
	int bad;
	struct pair_count *pc = pair_counts(a, &np, &bad);

	if (bad)
		return HCLOCK_ENOMEM;
	fputs("{\"tool\":\"hclock align\",\"reference\":", f);
	json_str(f, a->set.nodes[a->ref].name);
	fprintf(f, ",\"mode\":\"%s\",\"estimate\":\"%s\",\"messages\":%zu,\"unmatched\":%zu",
	        a->opts.mode == HCLOCK_ALIGN_REGRESSION ? "regression" : "hull", estimate_name(a),
	        a->nmsg, unmatched_total(a));
	if (a->opts.repair_order) {
		int64_t mx;
		size_t t = moved_total(a, &mx);
		fprintf(f, ",\"moved\":%zu,\"moved_max_ns\":%" PRId64, t, mx);
	}
	fputs(",\"nodes\":[", f);
	for (size_t v = 0; v < a->set.nnodes; v++) {
		const struct anode *n = &a->node[v];
		fputs(v ? ",{\"node\":" : "{\"node\":", f);
		json_str(f, a->set.nodes[v].name);
		fputs(",\"via\":", f);
		if (v == a->ref)
			fputs("null", f);
		else
			json_str(f, a->set.nodes[n->parent].name);
		fprintf(f, ",\"hops\":%zu,\"x0_ns\":%" PRId64 ",\"offset_ns\":", n->hops, n->x0);
		json_num(f, n->offset, 3);
		fputs(",\"slope\":", f);
		if (isfinite(n->slope))
			fprintf(f, "%.17Lg", n->slope);
		else
			fputs("null", f);
		fputs(",\"a0_ns\":", f);
		json_num(f, n->a0, 1);
		fputs(",\"a1\":", f);
		json_num(f, n->a1, 15);
		fprintf(f, ",\"quality\":\"%s\",\"bound_best_ns\":", quality(n));
		json_num(f, n->bound_min, 3);
		fputs(",\"bound_mean_ns\":", f);
		json_num(f, n->bound_mean, 3);
		fputs(",\"bound_max_ns\":", f);
		json_num(f, n->bound_max, 3);
		fprintf(f, ",\"recv\":%zu,\"inversions\":%zu,\"too_fast\":%zu", n->nrecv,
		        n->inversions, n->too_fast);
		if (a->opts.repair_order)
			fprintf(f, ",\"moved\":%zu,\"moved_max_ns\":%" PRId64, n->moved, n->moved_max);
		fputc('}', f);
	}
	fputs("],\"pairs\":[", f);
	for (size_t i = 0; i < np; i++) {
		fputs(i ? ",{\"from\":" : "{\"from\":", f);
		json_str(f, a->set.nodes[pc[i].from].name);
		fputs(",\"to\":", f);
		json_str(f, a->set.nodes[pc[i].to].name);
		fprintf(f, ",\"messages\":%zu,\"unmatched_sends\":%zu,\"unmatched_recvs\":%zu}",
		        pc[i].msgs, pc[i].lone_sends, pc[i].lone_recvs);
	}
	fprintf(f, "],\"bcast_diff_delay_ns\":{\"count\":%zu,\"min\":", a->nbc);
	json_num(f, a->bc_min, 1);
	fputs(",\"max\":", f);
	json_num(f, a->bc_max, 1);
	fputs(",\"mean\":", f);
	json_num(f, a->bc_mean, 3);
	fputs(",\"std\":", f);
	json_num(f, a->bc_std, 3);
	fputs("}}\n", f);
	free(pc);
	return 0;
}

/* the same as the table and the JSON object, as CSV: a node table, a blank line, a pair
 * table, a blank line, the broadcast line; empty fields where JSON has null */
static void csv_num(FILE *f, long double v, int prec)
{
	if (isfinite(v))
		fprintf(f, ",%.*Lf", prec, v);
	else
		fputc(',', f);
}

static int report_csv(const hclock_align *a, FILE *f)
{
	size_t np;
	int bad;
	struct pair_count *pc = pair_counts(a, &np, &bad);

	if (bad)
		return HCLOCK_ENOMEM;
	fputs("node,via,reference,quality,hops,x0_ns,offset_ns,slope,a0_ns,a1,bound_best_ns,"
	      "bound_mean_ns,bound_max_ns,recv,inversions,too_fast,mode,estimate", f);
	fputs(a->opts.repair_order ? ",moved,moved_max_ns\n" : "\n", f);
	for (size_t v = 0; v < a->set.nnodes; v++) {
		const struct anode *n = &a->node[v];
		fprintf(f, "%s,%s,%s,%s,%zu,%" PRId64, a->set.nodes[v].name,
		        v == a->ref ? "" : a->set.nodes[n->parent].name, a->set.nodes[a->ref].name,
		        quality(n), n->hops, n->x0);
		csv_num(f, n->offset, 3);
		if (isfinite(n->slope))
			fprintf(f, ",%.17Lg", n->slope);
		else
			fputc(',', f);
		csv_num(f, n->a0, 1);
		csv_num(f, n->a1, 15);
		csv_num(f, n->bound_min, 3);
		csv_num(f, n->bound_mean, 3);
		csv_num(f, n->bound_max, 3);
		fprintf(f, ",%zu,%zu,%zu,%s,%s", n->nrecv, n->inversions, n->too_fast,
		        a->opts.mode == HCLOCK_ALIGN_REGRESSION ? "regression" : "hull",
		        estimate_name(a));
		if (a->opts.repair_order)
			fprintf(f, ",%zu,%" PRId64, n->moved, n->moved_max);
		fputc('\n', f);
	}
	fputs("\nfrom,to,messages,unmatched_sends,unmatched_recvs\n", f);
	for (size_t i = 0; i < np; i++)
		fprintf(f, "%s,%s,%zu,%zu,%zu\n", a->set.nodes[pc[i].from].name,
		        a->set.nodes[pc[i].to].name, pc[i].msgs, pc[i].lone_sends, pc[i].lone_recvs);
	fprintf(f, "\nbcast_count,bcast_min_ns,bcast_max_ns,bcast_mean_ns,bcast_std_ns\n%zu", a->nbc);
	csv_num(f, a->bc_min, 1);
	csv_num(f, a->bc_max, 1);
	csv_num(f, a->bc_mean, 3);
	csv_num(f, a->bc_std, 3);
	fputc('\n', f);
	if (a->opts.repair_order) {
		int64_t mx;
		size_t t = moved_total(a, &mx);
		fprintf(f, "\nmoved,moved_max_ns\n%zu,%" PRId64 "\n", t, mx);
	}
	free(pc);
	return 0;
}

static int report_table(const hclock_align *a, FILE *f)
{
	size_t w = 4, np;
	int bad;
	struct pair_count *pc = pair_counts(a, &np, &bad);

	if (bad)
		return HCLOCK_ENOMEM;
	for (size_t v = 0; v < a->set.nnodes; v++)
		if (strlen(a->set.nodes[v].name) > w)
			w = strlen(a->set.nodes[v].name);
	fprintf(f, "reference: %s   mode: %s   estimate: %s   messages: %zu   unmatched: %zu\n",
	        a->set.nodes[a->ref].name,
	        a->opts.mode == HCLOCK_ALIGN_REGRESSION ? "regression" : "hull", estimate_name(a),
	        a->nmsg, unmatched_total(a));
	fprintf(f, "%-*s %-*s %-10s %4s %20s %16s %20s %12s %12s %12s %8s %10s %8s", (int)w,
	        "node", (int)w, "via", "quality", "hops", "x0_ns", "offset_ns", "slope",
	        "bound_best", "bound_mean", "bound_worst", "recv", "inversions", "too_fast");
	fputs(a->opts.repair_order ? "    moved moved_max\n" : "\n", f);
	for (size_t v = 0; v < a->set.nnodes; v++) {
		const struct anode *n = &a->node[v];
		fprintf(f, "%-*s %-*s %-10s %4zu %20" PRId64 " %16.3Lf %20.17Lg %12.1f %12.1f %12.1f "
		        "%8zu %10zu %8zu", (int)w, a->set.nodes[v].name, (int)w,
		        v == a->ref ? "-" : a->set.nodes[n->parent].name, quality(n), n->hops, n->x0,
		        n->offset, n->slope, n->bound_min, n->bound_mean, n->bound_max, n->nrecv,
		        n->inversions, n->too_fast);
		if (a->opts.repair_order)
			fprintf(f, " %8zu %9" PRId64, n->moved, n->moved_max);
		fputc('\n', f);
	}
	fprintf(f, "relation: corrected = local + offset_ns + (slope - 1) (local - x0_ns)%s\n",
	        a->opts.segments_ns ? " (segments: slope over the whole trace)" : "");
	fprintf(f, "pairs: %-*s %-*s %10s %16s %16s\n", (int)w, "from", (int)w, "to", "messages",
	        "unmatched_sends", "unmatched_recvs");
	for (size_t i = 0; i < np; i++)
		fprintf(f, "       %-*s %-*s %10zu %16zu %16zu\n", (int)w,
		        a->set.nodes[pc[i].from].name, (int)w, a->set.nodes[pc[i].to].name,
		        pc[i].msgs, pc[i].lone_sends, pc[i].lone_recvs);
	if (a->nbc)
		fprintf(f, "broadcast differential delay (ns, vs reference, %zu): min %.1f max %.1f "
		        "mean %.1f std %.1f\n", a->nbc, a->bc_min, a->bc_max, a->bc_mean, a->bc_std);
	else
		fprintf(f, "broadcast differential delay: no broadcasts seen by the reference\n");
	fprintf(f, "bounds: the true reference time of an event lies within +-bound of its "
	        "corrected time%s\n", a->opts.min_latency_ns >= 0 ? "" :
	        "; too_fast uses half the smallest corrected round trip per pair");
	if (a->opts.repair_order) {
		int64_t mx;
		size_t t = moved_total(a, &mx);
		fprintf(f, "repaired order: %zu events moved (either way), at most %" PRId64 " ns, each "
		        "within its bounds; times, bounds and inversions after the repair\n", t, mx);
	}
	free(pc);
	return 0;
}

int hclock_align_report(const hclock_align *a, FILE *f, int json)
{
	int r;

	if (!a->ran)
		return err_set(HCLOCK_EINVAL, "hclock_align_report: the alignment has not run");
	r = json == HCLOCK_ALIGN_REPORT_CSV ? report_csv(a, f) : json ? report_json(a, f) :
	    report_table(a, f);
	if (r == HCLOCK_ENOMEM)
		return err_set(r, "hclock_align_report: out of memory");
	if (r || ferror(f))
		return err_set(HCLOCK_EIO, "hclock_align_report: write error");
	return 0;
}

int hclock_align_bounds_csv(const hclock_align *a, FILE *f)
{
	static const char head[] = "node,time_ns,corrected_ns,delta_minus_ns,delta_plus_ns\n";
	struct outbuf *o;
	int r;

	if (!a->ran)
		return err_set(HCLOCK_EINVAL, "hclock_align_bounds_csv: the alignment has not run");
	o = malloc(sizeof(*o));
	if (!o)
		return err_set(HCLOCK_ENOMEM, "hclock_align_bounds_csv: out of memory");
	outbuf_init(o, f);
	outbuf_put(o, head, sizeof(head) - 1);
	for (size_t v = 0; v < a->set.nnodes; v++) {
		const struct trace_node *tn = &a->set.nodes[v];
		const struct anode *n = &a->node[v];
		size_t nl = strlen(tn->name);
		/* node,time_ns,corrected_ns,delta_minus_ns,delta_plus_ns; deltas whole ns, rounded
		 * outwards so the interval stays strict */
		for (size_t k = 0; k < tn->nev; k++) {
			outbuf_put(o, tn->name, nl);
			outbuf_put(o, ",", 1);
			outbuf_i64(o, tn->ev[k].time_ns);
			outbuf_put(o, ",", 1);
			outbuf_i64(o, n->corr[k]);
			outbuf_put(o, ",", 1);
			outbuf_ceil(o, n->dminus[k]);
			outbuf_put(o, ",", 1);
			outbuf_ceil(o, n->dplus[k]);
			outbuf_put(o, "\n", 1);
		}
	}
	r = outbuf_flush(o);
	free(o);
	return r ? err_set(r, "hclock_align_bounds_csv: write error") : 0;
}

struct moved_out {
	const hclock_align *a;
	struct outbuf *o;
};

/* one row of the moved CSV (align_moved_fn) */
static int moved_row(void *ctx, size_t v, size_t k, int64_t corrected_ns)
{
	const hclock_align *a = ((struct moved_out *)ctx)->a;
	struct outbuf *o = ((struct moved_out *)ctx)->o;
	const struct trace_node *tn = &a->set.nodes[v];
	int64_t t = a->node[v].corr[k];

	outbuf_put(o, tn->name, strlen(tn->name));
	outbuf_put(o, ",", 1);
	outbuf_i64(o, tn->ev[k].time_ns);
	outbuf_put(o, ",", 1);
	outbuf_i64(o, corrected_ns);
	outbuf_put(o, ",", 1);
	outbuf_i64(o, t);
	outbuf_put(o, ",", 1);
	outbuf_i64(o, t - corrected_ns);
	outbuf_put(o, "\n", 1);
	return 0;
}

int hclock_align_moved_csv(const hclock_align *a, FILE *f)
{
	static const char head[] = "node,time_ns,corrected_ns,repaired_ns,shift_ns\n";
	struct outbuf *o;
	int r;

	if (!a->ran || !a->opts.repair_order)
		return err_set(HCLOCK_EINVAL, "hclock_align_moved_csv: %s", !a->ran ?
		               "the alignment has not run" : "the run did not repair the order "
		               "(repair_order)");
	o = malloc(sizeof(*o));
	if (!o)
		return err_set(HCLOCK_ENOMEM, "hclock_align_moved_csv: out of memory");
	outbuf_init(o, f);
	outbuf_put(o, head, sizeof(head) - 1);
	r = align_each_moved(a, moved_row, &(struct moved_out){a, o});
	if (r) {
		free(o);
		return err_set(r, "hclock_align_moved_csv: out of memory");
	}
	r = outbuf_flush(o);
	free(o);
	return r ? err_set(r, "hclock_align_moved_csv: write error") : 0;
}

/* ---- SVG ------------------------------------------------------------------------------ */

#define W 960
#define H 540
#define ML 90 /* margins */
#define MR 170
#define MT 40
#define MB 60
#define MAXPTS 1500 /* band vertices per node */

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                     "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

struct axes {
	double t0, t1; /* s */
	double y0, y1; /* us */
};

static double px(const struct axes *ax, double t)
{
	return ML + (t - ax->t0) / (ax->t1 - ax->t0) * (W - ML - MR);
}

static double py(const struct axes *ax, double us)
{
	return MT + (ax->y1 - us) / (ax->y1 - ax->y0) * (H - MT - MB);
}

static double nice_step(double range)
{
	double s = pow(10, floor(log10(range / 5)));
	if (range / s > 25)
		s *= 5;
	else if (range / s > 10)
		s *= 2;
	return s;
}

/* time from 0 to the last corrected event; offsets symmetric around 0, 10% beyond the widest
 * bound or broadcast delay (at least 1 ns) */
static struct axes plot_axes(const hclock_align *a)
{
	struct axes ax = {0, 1e-9, -1e-3, 1e-3};
	double ymax = 1e-3;

	for (size_t v = 0; v < a->set.nnodes; v++) {
		const struct trace_node *tn = &a->set.nodes[v];
		const struct anode *n = &a->node[v];
		for (size_t k = 0; k < tn->nev; k++) {
			double t = (double)(n->corr[k] - a->t0) * 1e-9;
			if (t > ax.t1)
				ax.t1 = t;
			if (isfinite(n->dplus[k]) && n->dplus[k] * 1e-3 > ymax)
				ymax = n->dplus[k] * 1e-3;
			if (isfinite(n->dminus[k]) && n->dminus[k] * 1e-3 > ymax)
				ymax = n->dminus[k] * 1e-3;
		}
	}
	for (size_t i = 0; i < a->nbc; i++)
		if (fabs(a->bc[i].d_ns) * 1e-3 > ymax)
			ymax = fabs(a->bc[i].d_ns) * 1e-3;
	ax.y0 = -1.1 * ymax;
	ax.y1 = 1.1 * ymax;
	return ax;
}

/* title, grid, ticks, frame and axis labels */
static void plot_frame(const hclock_align *a, const struct axes *ax, FILE *f)
{
	double st;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\">hclock align: accuracy bounds and "
	        "broadcast differential delays (reference ", ML);
	svg_escaped(f, a->set.nodes[a->ref].name);
	fputs(")</text>\n", f);
	st = nice_step(ax->y1 - ax->y0);
	for (double y = ceil(ax->y0 / st) * st; y <= ax->y1; y += st)
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
		        "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ML, W - MR,
		        py(ax, y), py(ax, y), ML - 6, py(ax, y) + 4, fabs(y) < st / 2 ? 0 : y);
	st = nice_step(ax->t1 - ax->t0);
	for (double t = 0; t <= ax->t1; t += st)
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
		        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", px(ax, t),
		        px(ax, t), MT, H - MB, px(ax, t), H - MB + 16, t);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
	        "stroke=\"black\"/>\n", ML, MT, W - ML - MR, H - MT - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time on the reference timeline "
	        "(s)</text>\n", (W - MR + ML) / 2, H - 18);
	fprintf(f, "<text x=\"18\" y=\"%d\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\">"
	        "offset from reference (us)</text>\n", H / 2, H / 2);
}

/* node v, the ci-th plotted: its band (+dplus forward, -dminus backward, at most MAXPTS
 * vertices each way), its broadcasts as dots, its legend entry */
static void plot_node(const hclock_align *a, const struct axes *ax, size_t v, size_t ci, FILE *f)
{
	const struct trace_node *tn = &a->set.nodes[v];
	const struct anode *n = &a->node[v];
	const char *col = colors[ci % (sizeof(colors) / sizeof(*colors))];
	size_t step = tn->nev / MAXPTS + 1;

	fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.25\" stroke=\"%s\" "
	        "stroke-width=\"0.8\" points=\"", col, col);
	for (size_t k = 0; k < tn->nev; k += step)
		if (isfinite(n->dplus[k]))
			fprintf(f, "%.1f,%.1f ", px(ax, (double)(n->corr[k] - a->t0) * 1e-9),
			        py(ax, n->dplus[k] * 1e-3));
	for (size_t k = (tn->nev - 1) / step * step + 1; k-- > 0;)
		if (k % step == 0 && isfinite(n->dminus[k]))
			fprintf(f, "%.1f,%.1f ", px(ax, (double)(n->corr[k] - a->t0) * 1e-9),
			        py(ax, -n->dminus[k] * 1e-3));
	fputs("\"/>\n", f);
	for (size_t i = 0; i < a->nbc; i++)
		if (a->bc[i].node == v)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>\n",
			        px(ax, a->bc[i].t_s), py(ax, a->bc[i].d_ns * 1e-3), col);
	fprintf(f, "<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\" "
	        "fill-opacity=\"0.4\"/><text x=\"%d\" y=\"%zu\">", W - MR + 12, MT + 18 * ci, col,
	        W - MR + 30, MT + 18 * ci + 10);
	svg_escaped(f, tn->name);
	fputs("</text>\n", f);
}

int hclock_align_plot_svg(const hclock_align *a, FILE *f)
{
	struct axes ax;
	size_t ci = 0;

	if (!a->ran)
		return err_set(HCLOCK_EINVAL, "hclock_align_plot_svg: the alignment has not run");
	ax = plot_axes(a);
	plot_frame(a, &ax, f);
	for (size_t v = 0; v < a->set.nnodes; v++)
		if (v != a->ref && a->set.nodes[v].nev)
			plot_node(a, &ax, v, ci++, f);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">band: bounds;</text>"
	        "<text x=\"%d\" y=\"%d\" font-size=\"11\">dots: broadcasts</text>\n",
	        W - MR + 12, H - MB - 20, W - MR + 12, H - MB - 6);
	fputs("</svg>\n", f);
	return ferror(f) ? err_set(HCLOCK_EIO, "hclock_align_plot_svg: write error") : 0;
}
