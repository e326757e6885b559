/* report.c - table, CSV, JSON and SVG output of hclock bench. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/report.h"
#include "hclock_api.h"
#include "util/err.h"

void json_num(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.9g", x);
	else
		fputs("null", f);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* ns -> s for output; NAN when the row has no statistics */
static double sec(const struct bench_row *w, double ns)
{
	return w->have_stats ? ns * 1e-9 : NAN;
}

static double usec(const struct bench_row *w, double ns)
{
	return w->have_stats ? ns * 1e-3 : NAN;
}

void report_table(FILE *f, const struct bench_report *r)
{
	fprintf(f, "hclock bench: %d processes, sync %s, MPI_Bcast latency %.2f us, slack factor "
	        "%g, time slice %g s\n", r->nprocs, r->sync, r->bcast_latency_s * 1e6,
	        r->slack_factor, r->time_slice_s);
	fprintf(f, "order %s (%d pass%s, seed %llu)%s, buffers %s", r->order, r->passes,
	        r->passes > 1 ? "es" : "", (unsigned long long)r->seed,
	        r->root_shift ? ", root shifted after every call" : "", r->buffers);
	if (r->buffer_bytes)
		fprintf(f, "=%zu", r->buffer_bytes);
	if (r->align)
		fprintf(f, ", aligned to %zu", r->align);
	if (r->datatype)
		fprintf(f, ", reductions %s on %s", r->reduce_op, r->datatype);
	if (r->sweep)
		fprintf(f, ", process counts placed %s", r->placement);
	if (r->counts)
		fprintf(f, ", counts %s, topology %s", r->counts, r->topology);
	fputc('\n', f);
	fprintf(f, "latency = last exit - common start (%s) or - first entry (%s), global "
	        "clock; osu = mean of local times; us\n", r->common_schemes, r->local_schemes);
	if (r->overlap)
		fprintf(f, "overlap = max(0, 100 (1 - (t_total - t_cpu) / t_pure)) %%: t_pure, "
		        "t_total = median latency without and with a compute phase of t_cpu (mean) "
		        "between start and wait; us\n");
	fprintf(f, "%-9s %-22s ", "scheme", "op");
	if (r->sweep)
		fprintf(f, "%6s %5s ", "procs", "nodes");
	fprintf(f, "%9s %8s %7s %9s %9s %9s %9s %9s %9s %9s %9s %9s", "size", "valid", "invalid",
	        "median", "ci95_lo", "ci95_hi", "mean", "min", "p90", "p99", "std", "osu_mean");
	if (r->overlap)
		fprintf(f, " %9s %9s %9s %8s", "t_pure", "t_total", "t_cpu", "overlap%");
	fputc('\n', f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct bench_row *w = &r->rows[i];
		const struct stats_summary *s = &w->st;
		double ci_lo = s->ci_ok ? s->ci_lo : NAN, ci_hi = s->ci_ok ? s->ci_hi : NAN;
		fprintf(f, "%-9s %-22s ", w->scheme, w->op);
		if (r->sweep)
			fprintf(f, "%6d %5d ", w->nprocs, w->nodes);
		fprintf(f, "%9zu %8zu %7zu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f "
		        "%9.3f", w->size, w->valid, w->invalid,
		        usec(w, s->median), usec(w, ci_lo), usec(w, ci_hi), usec(w, s->mean),
		        usec(w, s->min), usec(w, s->p90), usec(w, s->p99), usec(w, s->std),
		        usec(w, w->osu_mean_ns));
		if (r->overlap && w->have_overlap)
			fprintf(f, " %9.3f %9.3f %9.3f %8.1f", w->pure_ns * 1e-3, w->total_ns * 1e-3,
			        w->cpu_ns * 1e-3, w->overlap_pct);
		else if (r->overlap)
			fprintf(f, " %9s %9s %9s %8s", "-", "-", "-", "-");
		fputc('\n', f);
	}
}

void report_csv(FILE *f, const struct bench_report *r)
{
	fprintf(f, "scheme,op,size,valid,invalid,mean_s,median_s,min_s,max_s,p90_s,p99_s,std_s,"
	        "ci95_median_lo_s,ci95_median_hi_s,osu_mean_s,duration_s,slack_s,window_s,"
	        "datatype,reduce_op,counts,topology,overlap_pct,t_pure_s,t_total_s,t_cpu_s,nprocs,"
	        "nodes\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct bench_row *w = &r->rows[i];
		const struct stats_summary *s = &w->st;
		double v[] = {sec(w, s->mean), sec(w, s->median), sec(w, s->min), sec(w, s->max),
		              sec(w, s->p90), sec(w, s->p99), sec(w, s->std),
		              s->ci_ok ? sec(w, s->ci_lo) : NAN, s->ci_ok ? sec(w, s->ci_hi) : NAN,
		              sec(w, w->osu_mean_ns), w->duration_s, (double)w->slack_ns * 1e-9,
		              (double)w->window_ns * 1e-9};
		fprintf(f, "%s,%s,%zu,%zu,%zu", w->scheme, w->op, w->size, w->valid, w->invalid);
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			if (isfinite(v[k]))
				fprintf(f, ",%.9g", v[k]);
			else
				fputs(",", f);
		}
		/* the run's settings on every row, so that rows of several runs can be joined */
		fprintf(f, ",%s,%s,%s,%s", r->datatype ? r->datatype : "",
		        r->reduce_op ? r->reduce_op : "", r->counts ? r->counts : "",
		        r->topology ? r->topology : "");
		double o[] = {w->overlap_pct, w->pure_ns * 1e-9, w->total_ns * 1e-9, w->cpu_ns * 1e-9};
		for (size_t k = 0; k < sizeof(o) / sizeof(o[0]); k++) {
			if (w->have_overlap && isfinite(o[k]))
				fprintf(f, ",%.9g", o[k]);
			else
				fputc(',', f);
		}
		fprintf(f, ",%d,%d\n", w->nprocs, w->nodes);
	}
}

void report_json(FILE *f, const struct bench_report *r)
{
	fputs("{\"tool\":\"hclock bench\",\"scheme\":", f);
	json_str(f, r->schemes);
	fputs(",\"sync\":", f);
	json_str(f, r->sync);
	fprintf(f, ",\"nprocs\":%d,\"root\":%d,\"in_place\":%s,\"bcast_latency_s\":", r->nprocs,
	        r->root, r->in_place ? "true" : "false");
	json_num(f, r->bcast_latency_s);
	fputs(",\"slack_factor\":", f);
	json_num(f, r->slack_factor);
	fputs(",\"time_slice_s\":", f);
	json_num(f, r->time_slice_s);
	fputs(",\"order\":", f);
	json_str(f, r->order);
	fprintf(f, ",\"passes\":%d,\"seed\":%llu,\"root_shift\":%s", r->passes,
	        (unsigned long long)r->seed, r->root_shift ? "true" : "false");
	fputs(",\"buffers\":", f);
	json_str(f, r->buffers);
	fprintf(f, ",\"buffer_bytes\":%zu,\"align\":%zu", r->buffer_bytes, r->align);
	if (r->datatype) {
		fputs(",\"datatype\":", f);
		json_str(f, r->datatype);
		fputs(",\"reduce_op\":", f);
		json_str(f, r->reduce_op);
	}
	if (r->counts) {
		fputs(",\"counts\":", f);
		json_str(f, r->counts);
		fputs(",\"topology\":", f);
		json_str(f, r->topology);
	}
	fprintf(f, ",\"overlap\":%s", r->overlap ? "true" : "false");
	fprintf(f, ",\"sweep\":%s,\"placement\":", r->sweep ? "true" : "false");
	json_str(f, r->placement);
	fputs(",\"results\":[", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct bench_row *w = &r->rows[i];
		const struct stats_summary *s = &w->st;
		fprintf(f, "%s{\"scheme\":", i ? "," : "");
		json_str(f, w->scheme);
		fputs(",\"op\":", f);
		json_str(f, w->op);
		fprintf(f, ",\"size\":%zu,\"valid\":%zu,\"invalid\":%zu", w->size, w->valid, w->invalid);
		const char *k[] = {"mean_s", "median_s", "min_s", "max_s", "p90_s", "p99_s", "std_s"};
		double v[] = {s->mean, s->median, s->min, s->max, s->p90, s->p99, s->std};
		for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
			fprintf(f, ",\"%s\":", k[j]);
			json_num(f, sec(w, v[j]));
		}
		fputs(",\"ci95_median_s\":[", f);
		json_num(f, s->ci_ok ? sec(w, s->ci_lo) : NAN);
		fputc(',', f);
		json_num(f, s->ci_ok ? sec(w, s->ci_hi) : NAN);
		fputs("],\"ci95_median_coverage\":", f);
		json_num(f, w->have_stats && s->ci_ok ? s->ci_level : NAN);
		fputs(",\"osu_mean_s\":", f);
		json_num(f, sec(w, w->osu_mean_ns));
		fputs(",\"duration_s\":", f);
		json_num(f, w->duration_s);
		fputs(",\"slack_s\":", f);
		json_num(f, (double)w->slack_ns * 1e-9);
		fputs(",\"window_s\":", f);
		json_num(f, (double)w->window_ns * 1e-9);
		const char *ok[] = {"overlap_pct", "t_pure_s", "t_total_s", "t_cpu_s"};
		double ov[] = {w->overlap_pct, w->pure_ns * 1e-9, w->total_ns * 1e-9,
		               w->cpu_ns * 1e-9};
		for (size_t j = 0; j < sizeof(ov) / sizeof(ov[0]); j++) {
			fprintf(f, ",\"%s\":", ok[j]);
			json_num(f, w->have_overlap ? ov[j] : NAN);
		}
		fprintf(f, ",\"nprocs\":%d,\"nodes\":%d}", w->nprocs, w->nodes);
	}
	fputs("]}\n", f);
}

void report_json_stats(FILE *f, const struct stats_summary *st)
{
	const char *k[] = {"mean_s", "median_s", "min_s", "max_s", "p90_s", "p99_s", "std_s"};
	double v[7] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN}, lo = NAN, hi = NAN;
	if (st) {
		double x[] = {st->mean, st->median, st->min, st->max, st->p90, st->p99, st->std};
		for (int j = 0; j < 7; j++)
			v[j] = x[j] * 1e-9;
		if (st->ci_ok) {
			lo = st->ci_lo * 1e-9;
			hi = st->ci_hi * 1e-9;
		}
	}
	for (int j = 0; j < 7; j++) {
		fprintf(f, "%s\"%s\":", j ? "," : "{", k[j]);
		json_num(f, v[j]);
	}
	fputs(",\"ci95_median_s\":[", f);
	json_num(f, lo);
	fputc(',', f);
	json_num(f, hi);
	fputs("]}", f);
}

void report_csv_stats_header(FILE *f)
{
	fputs(",mean_s,median_s,min_s,max_s,p90_s,p99_s,std_s,ci95_median_lo_s,ci95_median_hi_s", f);
}

void report_csv_stats(FILE *f, const struct stats_summary *st)
{
	if (!st) {
		fputs(",,,,,,,,,", f);
		return;
	}
	double v[] = {st->mean, st->median, st->min, st->max, st->p90, st->p99, st->std,
	              st->ci_ok ? st->ci_lo : NAN, st->ci_ok ? st->ci_hi : NAN};
	for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
		if (isfinite(v[j]))
			fprintf(f, ",%.9g", v[j] * 1e-9);
		else
			fputc(',', f);
	}
}

/* ---- SVG ---------------------------------------------------------------------------- */

#define W 860
#define H 520
#define ML 90
#define MR 230
#define MT 50
#define MB 60

static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

struct axes {
	double x0, x1; /* log2 size */
	double y0, y1; /* log10 latency in us */
};

static double xval(const struct bench_report *r, const struct bench_row *w);

static double xpos(const struct axes *a, const struct bench_report *r, const struct bench_row *w)
{
	double lx = r->sweep || w->size ? xval(r, w) : a->x0;
	return ML + (lx - a->x0) / (a->x1 - a->x0) * (W - ML - MR);
}

static double ypos(const struct axes *a, double ns)
{
	double ly = log10(ns * 1e-3);
	return H - MB - (ly - a->y0) / (a->y1 - a->y0) * (H - MT - MB);
}

static void size_label(char *buf, size_t len, double lx)
{
	double b = exp2(lx);
	if (b >= 1 << 30)
		snprintf(buf, len, "%gG", b / (1 << 30));
	else if (b >= 1 << 20)
		snprintf(buf, len, "%gM", b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, len, "%gK", b / (1 << 10));
	else
		snprintf(buf, len, "%g", b);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
}

/* rows of series k: the k-th distinct (scheme, op) pair in order of appearance; in a sweep
 * (scheme, op, size) */
static int same_series(const struct bench_report *r, const struct bench_row *a,
                       const struct bench_row *b)
{
	return !strcmp(a->scheme, b->scheme) && !strcmp(a->op, b->op) &&
	       (!r->sweep || a->size == b->size);
}

static int first_of_series(const struct bench_report *r, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (same_series(r, &r->rows[j], &r->rows[i]))
			return 0;
	return 1;
}

/* the x of a row: log2 of its size (0 for none), or in a sweep of its process count */
static double xval(const struct bench_report *r, const struct bench_row *w)
{
	if (r->sweep)
		return log2((double)(w->nprocs > 0 ? w->nprocs : 1));
	return w->size ? log2((double)w->size) : 0;
}

int report_svg(const char *path, const struct bench_report *r)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return err_set(HCLOCK_EIO, "cannot write '%s': %s", path, strerror(errno));
	struct axes a = {INFINITY, -INFINITY, INFINITY, -INFINITY};
	for (size_t i = 0; i < r->nrows; i++) {
		const struct bench_row *w = &r->rows[i];
		if (!w->have_stats)
			continue;
		double lx = xval(r, w);
		double lo = w->st.ci_ok ? w->st.ci_lo : w->st.median;
		double hi = w->st.ci_ok ? w->st.ci_hi : w->st.median;
		if (lo <= 0)
			lo = 1; /* 1 ns floor for the log axis */
		a.x0 = fmin(a.x0, lx);
		a.x1 = fmax(a.x1, lx);
		a.y0 = fmin(a.y0, floor(log10(lo * 1e-3)));
		a.y1 = fmax(a.y1, ceil(log10(fmax(hi, 1) * 1e-3)));
	}
	if (!isfinite(a.x0)) { /* nothing valid to plot */
		a = (struct axes){0, 1, 0, 1};
	}
	if (a.x1 - a.x0 < 1) {
		a.x0 -= 1;
		a.x1 += 1;
	}
	if (a.y1 - a.y0 < 1)
		a.y1 = a.y0 + 1;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\">hclock bench: median latency with "
	        "the 95%% confidence band of the median</text>\n", ML);
	fprintf(f, "<text x=\"%d\" y=\"40\" fill=\"#555\">%d processes, sync ", ML, r->nprocs);
	xml_text(f, r->sync);
	fputs("</text>\n", f);
	/* grid and ticks */
	for (int e = (int)a.y0; e <= (int)a.y1; e++) {
		double y = H - MB - (e - a.y0) / (a.y1 - a.y0) * (H - MT - MB);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
		        "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g us</text>\n", ML, y, W - MR,
		        y, ML - 6, y + 4, pow(10, e));
	}
	int step = (int)ceil((a.x1 - a.x0) / 16);
	for (int e = (int)ceil(a.x0); e <= (int)floor(a.x1); e += step > 0 ? step : 1) {
		char lab[32];
		double x = ML + (e - a.x0) / (a.x1 - a.x0) * (W - ML - MR);
		if (r->sweep)
			snprintf(lab, sizeof(lab), "%g", exp2(e));
		else
			size_label(lab, sizeof(lab), e);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n"
		        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, MT, x, H - MB,
		        x, H - MB + 16, lab);
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
	        "stroke=\"black\"/>\n", ML, MT, W - ML - MR, H - MT - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
	        (ML + W - MR) / 2, H - 18, r->sweep ? "processes" : "message size (bytes)");
	fprintf(f, "<text transform=\"translate(22,%d) rotate(-90)\" text-anchor=\"middle\">"
	        "latency (last exit - start)</text>\n", (MT + H - MB) / 2);

	int k = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		if (!first_of_series(r, i))
			continue;
		const char *c = colors[k % (int)(sizeof(colors) / sizeof(colors[0]))];
		/* band: upper bounds forward, lower bounds back */
		fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.2\" stroke=\"none\" points=\"", c);
		for (size_t j = i; j < r->nrows; j++) {
			const struct bench_row *w = &r->rows[j];
			if (same_series(r, w, &r->rows[i]) && w->have_stats)
				fprintf(f, "%.1f,%.1f ", xpos(&a, r, w),
				        ypos(&a, fmax(w->st.ci_ok ? w->st.ci_hi : w->st.median, 1)));
		}
		for (size_t j = r->nrows; j-- > i;) {
			const struct bench_row *w = &r->rows[j];
			if (same_series(r, w, &r->rows[i]) && w->have_stats)
				fprintf(f, "%.1f,%.1f ", xpos(&a, r, w),
				        ypos(&a, fmax(w->st.ci_ok ? w->st.ci_lo : w->st.median, 1)));
		}
		fprintf(f, "\"/>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
		for (size_t j = i; j < r->nrows; j++) {
			const struct bench_row *w = &r->rows[j];
			if (same_series(r, w, &r->rows[i]) && w->have_stats)
				fprintf(f, "%.1f,%.1f ", xpos(&a, r, w), ypos(&a, fmax(w->st.median, 1)));
		}
		fputs("\"/>\n", f);
		for (size_t j = i; j < r->nrows; j++) {
			const struct bench_row *w = &r->rows[j];
			if (same_series(r, w, &r->rows[i]) && w->have_stats)
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
				        xpos(&a, r, w), ypos(&a, fmax(w->st.median, 1)), c);
		}
		int ly = MT + 10 + 20 * k;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
		        "stroke-width=\"2\"/>\n<text x=\"%d\" y=\"%d\">", W - MR + 12, ly, W - MR + 36,
		        ly, c, W - MR + 42, ly + 4);
		xml_text(f, r->rows[i].scheme);
		fputc(' ', f);
		xml_text(f, r->rows[i].op);
		if (r->sweep) {
			char lab[32];
			size_label(lab, sizeof(lab), r->rows[i].size ? log2((double)r->rows[i].size) : 0);
			fprintf(f, " %s", r->rows[i].size ? lab : "");
		}
		fputs("</text>\n", f);
		k++;
	}
	fputs("</svg>\n", f);
	int bad = ferror(f);
	if (fclose(f) || bad)
		return err_set(HCLOCK_EIO, "error writing '%s'", path);
	return 0;
}
