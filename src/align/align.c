/*
 * align.c - the alignment engine behind hclock_align.h: read (input.c, the formats), match
 * (match.c), fit every ordered pair of nodes (numerics/pair.c), choose the reference, compose
 * conversions hop by hop along the tree of paths that minimise the accumulated bound, then
 * bounds at every event and the metrics of Section 4.1 (metrics.c).
 *
 * Composition (multi-hop): for a path v -> p1 -> ... -> ref, a local time t is converted hop
 * by hop, each hop evaluated at the previous hop's converted time (not at t). The bounds add:
 * if the true time on p lies in [c - m, c + p] and every valid conversion p -> q has slope at
 * most s, the true time on q lies in [C(c) - (D2(c) + s m), C(c) + (D1(c) + s p)].
 *
 * With repair_order, the corrected times then go through repair.c (events moved, forward or
 * back, within their bounds until no message is received before its send); the moved events keep
 * their interval, so their deltas are taken again from the new time.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "align/align_priv.h"
#include "align/format.h"
#include "util/err.h"

#define FALLBACK_PENALTY 1e12 /* ns added to a path weight per non-strict hop */
#define TIME_LIMIT (INT64_C(1) << 62) /* |t| below it: every difference fits an int64 */

/* append line and a newline to the string *buf of *len bytes (dropped if out of memory) */
static void append_line(char **buf, size_t *len, const char *line)
{
	size_t n = strlen(line);
	char *w = realloc(*buf, *len + n + 2);

	if (!w)
		return;
	memcpy(w + *len, line, n);
	*len += n;
	w[(*len)++] = '\n';
	w[*len] = 0;
	*buf = w;
}

/* append one line to the warnings (hclock_align_warnings); the formats' trace_warn too */
static void warn_line(void *ctx, const char *line)
{
	struct hclock_align *a = ctx;

	append_line(&a->warn, &a->warnlen, line);
}

/* the formats' information lines (trace_note), for hclock_align_notes */
static void note_line(void *ctx, const char *line)
{
	struct hclock_align *a = ctx;

	append_line(&a->note, &a->notelen, line);
}

static void warn(struct hclock_align *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(struct hclock_align *a, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	warn_line(a, line);
}

void hclock_align_opts_init(struct hclock_align_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = HCLOCK_ALIGN_HULL;
	o->min_latency_ns = -1;
}

/* ---- reading ------------------------------------------------------------------------- */

/* the engine's per-node state, and its own preconditions on the events of any reader */
static int node_state(struct hclock_align *a)
{
	if (a->set.nnodes < 1)
		return err_set(HCLOCK_EINVAL, "no nodes in the input traces");
	if (a->set.nnodes > UINT32_MAX)
		return err_set(HCLOCK_EINVAL, "too many nodes");
	a->node = calloc(a->set.nnodes, sizeof(*a->node));
	if (!a->node)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	for (size_t v = 0; v < a->set.nnodes; v++) {
		const struct trace_node *tn = &a->set.nodes[v];
		size_t ne = tn->nev ? tn->nev : 1;
		a->node[v].mate = malloc(ne * sizeof(int64_t));
		a->node[v].matched = calloc(ne, 1);
		if (!a->node[v].mate || !a->node[v].matched)
			return err_set(HCLOCK_ENOMEM, "out of memory");
		for (size_t k = 0; k < tn->nev; k++) {
			int64_t t = tn->ev[k].time_ns;
			if (t >= TIME_LIMIT || t <= -TIME_LIMIT)
				return err_set(HCLOCK_EINVAL, "%s:%u: timestamp %" PRId64
				               " out of range", tn->path, tn->ev[k].line, t);
			if (k && t < tn->ev[k - 1].time_ns)
				return err_set(HCLOCK_EINVAL, "%s:%u: events out of time "
				               "order", tn->path, tn->ev[k].line);
		}
	}
	return 0;
}

static int align_open(const char *const *inputs, size_t n, hclock_align **out)
{
	struct strv paths = {0};
	const struct trace_format *fmt = NULL;
	struct hclock_align *a;
	int r;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	a->set.warn = warn_line;
	a->set.note = note_line;
	a->set.warn_ctx = a;
	r = align_inputs(inputs, n, &paths, &fmt);
	if (!r)
		r = fmt->read((const char *const *)paths.v, paths.n, &a->set);
	if (!r) {
		a->set.fmt = fmt;
		r = node_state(a);
	}
	if (!r)
		r = align_match(a);
	a->read_warnlen = a->warnlen;
	strv_free(&paths);
	if (r) {
		hclock_align_free(a);
		return r;
	}
	*out = a;
	return 0;
}

/* ---- fitting and composition ----------------------------------------------------------- */

static void results_free(struct hclock_align *a)
{
	size_t nn = a->set.nnodes;

	if (a->fit) {
		for (size_t i = 0; i < nn * nn; i++)
			if (a->fit[i]) {
				pair_free(a->fit[i]);
				free(a->fit[i]);
			}
		free(a->fit);
		a->fit = NULL;
	}
	for (size_t v = 0; a->node && v < nn; v++) {
		free(a->node[v].corr);
		free(a->node[v].dminus);
		free(a->node[v].dplus);
		a->node[v].corr = NULL;
		a->node[v].dminus = a->node[v].dplus = NULL;
		a->node[v].moved = 0;
		a->node[v].moved_max = 0;
	}
	free(a->bc);
	a->bc = NULL;
	a->nbc = 0;
	a->warnlen = a->read_warnlen; /* the reader's warnings stay */
	if (a->warn)
		a->warn[a->warnlen] = 0;
	a->ran = 0;
}

/* fit x -> y for every y that x exchanged messages with; points come out sorted by x time */
static int fit_node(struct hclock_align *a, size_t x, const struct pair_opts *po)
{
	size_t nn = a->set.nnodes;
	const struct trace_node *tn = &a->set.nodes[x];
	const struct anode *an = &a->node[x];
	size_t *nu = calloc(2 * nn, sizeof(size_t)), *nd = nu ? nu + nn : NULL;
	struct hull_pt **up = calloc(2 * nn, sizeof(*up)), **dn = up ? up + nn : NULL;
	int r = HCLOCK_ENOMEM;

	if (!nu || !up)
		goto out;
	for (size_t k = 0; k < tn->nev; k++)
		if (an->matched[k]) {
			if (tn->ev[k].kind == TRACE_SEND)
				nu[tn->ev[k].peer]++;
			else
				nd[tn->ev[k].peer]++;
		}
	for (size_t y = 0; y < nn; y++) {
		if (!nu[y] && !nd[y])
			continue;
		up[y] = malloc((nu[y] ? nu[y] : 1) * sizeof(**up));
		dn[y] = malloc((nd[y] ? nd[y] : 1) * sizeof(**dn));
		if (!up[y] || !dn[y])
			goto out;
		nu[y] = nd[y] = 0;
	}
	for (size_t k = 0; k < tn->nev; k++)
		if (an->matched[k]) {
			size_t y = (size_t)tn->ev[k].peer;
			struct hull_pt p = {tn->ev[k].time_ns, an->mate[k]};
			if (tn->ev[k].kind == TRACE_SEND)
				up[y][nu[y]++] = p;
			else
				dn[y][nd[y]++] = p;
		}
	for (size_t y = 0; y < nn; y++) {
		struct pair_fit *f;
		if (!up[y])
			continue;
		f = calloc(1, sizeof(*f));
		if (!f || pair_fit(f, up[y], nu[y], dn[y], nd[y], po)) {
			free(f);
			goto out;
		}
		a->fit[x * nn + y] = f;
	}
	r = 0;
out:
	for (size_t y = 0; up && y < nn; y++) {
		free(up[y]);
		free(dn[y]);
	}
	free(up);
	free(nu);
	return r;
}

static double edge_weight(const struct pair_fit *f)
{
	if (!f || f->quality == PAIR_UNBOUNDED)
		return INFINITY;
	return f->weight + (f->quality == PAIR_FALLBACK ? FALLBACK_PENALTY : 0);
}

/* shortest-path tree towards r (Dijkstra on the dense pair matrix); returns the sum of the
 * distances, INFINITY if some node is unreachable (then *lost is one such node) */
static double tree(struct hclock_align *a, size_t r, size_t *parent, double *dist, size_t *lost)
{
	size_t nn = a->set.nnodes;
	unsigned char *done = calloc(nn, 1);
	double total = 0;

	if (!done)
		return NAN;
	for (size_t v = 0; v < nn; v++) {
		dist[v] = INFINITY;
		parent[v] = v;
	}
	dist[r] = 0;
	for (;;) {
		size_t u = nn;
		for (size_t v = 0; v < nn; v++)
			if (!done[v] && isfinite(dist[v]) && (u == nn || dist[v] < dist[u]))
				u = v;
		if (u == nn)
			break;
		done[u] = 1;
		total += dist[u];
		for (size_t v = 0; v < nn; v++) {
			double w = edge_weight(a->fit[v * nn + u]); /* hop v -> u */
			if (!done[v] && dist[u] + w < dist[v]) {
				dist[v] = dist[u] + w;
				parent[v] = u;
			}
		}
	}
	for (size_t v = 0; v < nn; v++)
		if (!done[v]) {
			*lost = v;
			free(done);
			return INFINITY;
		}
	free(done);
	return total;
}

/* how far a pair quality is from a strict single line */
static int quality_rank(int q)
{
	switch (q) {
	case PAIR_HULL: return 0;
	case PAIR_SEGMENTS: return 1;
	case PAIR_REGRESSION: return 2;
	case PAIR_FALLBACK: return 3;
	default: return 4;
	}
}

static int64_t clamp_i64(long double v)
{
	if (v >= 9.2e18L)
		return INT64_MAX;
	if (v <= -9.2e18L)
		return INT64_MIN;
	return (int64_t)llroundl(v);
}

/*
 * Local time t of node v on the reference timeline, unrounded: *x + *xf (ns, xf a fraction
 * in [0, 1) but where clamped), with bounds around it. cur: one cursor per hop (nnodes + 1),
 * kept from the previous call on the same node so that a node's events in time order cost
 * amortized O(1) per hop (every hop's conversion is increasing for a valid fit, so each hop
 * sees its times in order too); NULL for a single evaluation (O(log h) per hop).
 */
static void compose_exact(const struct hclock_align *a, size_t v, int64_t t, int64_t *xo,
                          long double *xfo, long double *dm, long double *dp,
                          struct pair_cursor *cur)
{
	int64_t x = t;
	long double xf = 0, m = 0, p = 0;

	for (size_t guard = 0; v != a->ref && guard <= a->set.nnodes; guard++) {
		const struct pair_fit *f = a->node[v].hop;
		struct pair_cursor one = PAIR_CURSOR_INIT;
		int64_t y;
		long double yf, hm, hp, whole;

		pair_eval_next(f, cur ? &cur[guard] : &one, x, xf, &y, &yf, &hm, &hp);
		m = hm + f->slope_max * m;
		p = hp + f->slope_max * p;
		/* keep the integer part in int64 and only a fraction in the long double */
		if (!(fabsl(yf) < 4e18L))
			yf = yf > 0 ? 4e18L : -4e18L;
		whole = floorl(yf);
		x = y + (int64_t)whole;
		if (x >= TIME_LIMIT || x <= -TIME_LIMIT) {
			xf = yf - whole + (long double)(x - (x > 0 ? TIME_LIMIT - 1 : -TIME_LIMIT + 1));
			x = x > 0 ? TIME_LIMIT - 1 : -TIME_LIMIT + 1;
		} else {
			xf = yf - whole;
		}
		v = a->node[v].parent;
	}
	*xo = x;
	*xfo = xf;
	*dm = m;
	*dp = p;
}

/*
 * The same rounded to whole ns, with the bounds moved by the rounding so that they stay
 * strict around the rounded time: the true time lies in [x + xf - m, x + xf + p]; with
 * c = x + round(xf) and r = xf - round(xf) (|r| <= 1/2, exact: xf is small), that is
 * [c - (m - r), c + (p + r)]. Rounding x + xf as one long double would lose the fraction at
 * realtime epochs (64-bit mantissa: 0.125 ns at 1e18) and leave the deltas up to 0.5 ns short.
 */
static int64_t compose(const struct hclock_align *a, size_t v, int64_t t, long double *dm,
                       long double *dp, struct pair_cursor *cur)
{
	int64_t x, c;
	long double xf, m, p, r;

	compose_exact(a, v, t, &x, &xf, &m, &p, cur);
	if (fabsl(xf) < 1e15L) {
		long double w = roundl(xf);
		c = x + (int64_t)w;
		r = xf - w;
	} else { /* clamped far outside: no ns matters */
		c = clamp_i64((long double)x + xf);
		r = 0;
	}
	if (dm)
		*dm = m - r;
	if (dp)
		*dp = p + r;
	return c;
}

/* the writers' conversion: they convert a node's events in order, so the corrected time is
 * usually the one hclock_align_run stored for the event next to the previous call's */
struct conv_ctx {
	const struct hclock_align *a;
	size_t node;  /* node of the previous call */
	size_t k;     /* its event: the first with time_ns >= the previous time */
};

static int64_t conv_cb(void *ctx, size_t node, int64_t local_ns)
{
	struct conv_ctx *c = ctx;
	const struct trace_node *tn = &c->a->set.nodes[node];
	size_t k = c->node == node ? c->k : 0, l, r;
	int64_t u;

	/* a few steps forward from the previous event, else a binary search */
	for (int step = 0; step < 8 && k < tn->nev && tn->ev[k].time_ns < local_ns; step++)
		k++;
	if (!((k == tn->nev || tn->ev[k].time_ns >= local_ns) &&
	      (k == 0 || tn->ev[k - 1].time_ns < local_ns))) {
		l = 0;
		r = tn->nev;
		while (l < r) {
			size_t m = l + (r - l) / 2;
			if (tn->ev[m].time_ns < local_ns)
				l = m + 1;
			else
				r = m;
		}
		k = l;
	}
	c->node = node;
	c->k = k;
	if (k < tn->nev && tn->ev[k].time_ns == local_ns)
		return c->a->node[node].corr[k];
	u = compose(c->a, node, local_ns, NULL, NULL, NULL);
	/* after a repair, a time between events never precedes the event before it */
	if (c->a->node[node].moved && k > 0 && c->a->node[node].corr[k - 1] > u)
		u = c->a->node[node].corr[k - 1];
	return u;
}


int hclock_align_convert(const hclock_align *a, size_t node, int64_t local_ns, int64_t *ref_ns,
                         double *dminus_ns, double *dplus_ns)
{
	long double m, p;
	int64_t c;

	if (!a || !a->ran || node >= a->set.nnodes)
		return err_set(HCLOCK_EINVAL, "hclock_align_convert: %s", !a || !a->ran ?
		               "the alignment has not run" : "no such node");
	if (local_ns >= TIME_LIMIT || local_ns <= -TIME_LIMIT)
		return err_set(HCLOCK_EINVAL, "hclock_align_convert: local time %" PRId64 " ns out of "
		               "range (|t| < 2^62)", local_ns);
	c = compose(a, node, local_ns, &m, &p, NULL);
	if (ref_ns)
		*ref_ns = c;
	if (dminus_ns)
		*dminus_ns = (double)m;
	if (dplus_ns)
		*dplus_ns = (double)p;
	return 0;
}

/* ---- the run, step by step ------------------------------------------------------------ */

/* fit every ordered pair of nodes that exchanged messages */
static int fit_all(struct hclock_align *a, const struct hclock_align_opts *o)
{
	size_t nn = a->set.nnodes;
	struct pair_opts po = {o->mode == HCLOCK_ALIGN_REGRESSION ? PAIR_MODE_REGRESSION :
	                       o->estimate == HCLOCK_ALIGN_MEAN ? PAIR_MODE_MEAN : PAIR_MODE_HULL,
	                       o->segments_ns};

	a->fit = calloc(nn * nn, sizeof(*a->fit));
	if (!a->fit)
		return HCLOCK_ENOMEM;
	for (size_t x = 0; x < nn; x++)
		if (fit_node(a, x, &po))
			return HCLOCK_ENOMEM;
	return 0;
}

/* the given node, or the one whose tree reaches the most nodes, then with the smallest total
 * bound; NAN if out of memory */
static double best_reference(struct hclock_align *a, size_t *parent, double *dist)
{
	size_t nn = a->set.nnodes, most = 0, lost;
	double best = INFINITY;

	for (size_t c = 0; c < nn; c++) {
		double t = tree(a, c, parent, dist, &lost);
		size_t reach = 0;
		if (isnan(t))
			return t;
		for (size_t v = 0; v < nn; v++)
			reach += isfinite(dist[v]);
		if (a->ref == nn || reach > most || (reach == most && t < best)) {
			most = reach;
			best = t;
			a->ref = c;
		}
	}
	return best;
}

/* whether input path p is the one the user named: the same string, or the same last
 * component (trailing slashes ignored) */
static int same_path(const char *p, const char *name)
{
	size_t lp = strlen(p), ln = strlen(name), bp, bn;

	while (lp > 1 && p[lp - 1] == '/')
		lp--;
	while (ln > 1 && name[ln - 1] == '/')
		ln--;
	if (lp == ln && !strncmp(p, name, lp))
		return 1;
	for (bp = lp; bp && p[bp - 1] != '/'; bp--)
		;
	for (bn = ln; bn && name[bn - 1] != '/'; bn--)
		;
	return bn == 0 && lp - bp == ln && !strncmp(p + bp, name, ln);
}

/* the reference (named, or the best) and its tree of paths: parent[], dist[] */
static int choose_reference(struct hclock_align *a, const char *name, size_t *parent,
                            double *dist)
{
	size_t nn = a->set.nnodes, lost = 0;
	double t;

	a->ref = nn;
	if (name) {
		/* by name first; then by the input's path, as given or as its last component */
		for (size_t v = 0; v < nn && a->ref == nn; v++)
			if (!strcmp(a->set.nodes[v].name, name))
				a->ref = v;
		for (size_t v = 0; v < nn && a->ref == nn; v++)
			if (same_path(a->set.nodes[v].path, name))
				a->ref = v;
		if (a->ref == nn) {
			char list[256] = "";
			for (size_t v = 0, l = 0; v < nn && l < sizeof(list) - 8; v++)
				l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", v ? ", " : "",
				                      a->set.nodes[v].name);
			return err_set(HCLOCK_EINVAL, "--reference %s: no such node; give a node's "
			               "name or input: %s", name, list);
		}
	} else if (isnan(best_reference(a, parent, dist))) {
		return HCLOCK_ENOMEM;
	}
	t = tree(a, a->ref, parent, dist, &lost);
	if (isnan(t))
		return HCLOCK_ENOMEM;
	if (!isfinite(t))
		return err_set(HCLOCK_EINVAL, "%s (%s): no message path to the "
		               "reference node %s; a path needs messages in both directions "
		               "between each pair of nodes on it", a->set.nodes[lost].name,
		               a->set.nodes[lost].path, a->set.nodes[a->ref].name);
	return 0;
}

/* every node's hop towards the reference, its path length and worst quality; a warning for
 * every hop that is not one strict line */
static void set_paths(struct hclock_align *a, const size_t *parent, const double *dist)
{
	size_t nn = a->set.nnodes;

	for (size_t v = 0; v < nn; v++) {
		struct anode *n = &a->node[v];
		n->parent = parent[v];
		n->dist = dist[v];
		n->hop = v == a->ref ? NULL : a->fit[v * nn + n->parent];
		n->hops = 0;
		n->quality = NODE_REFERENCE;
	}
	for (size_t v = 0; v < nn; v++) {
		struct anode *n = &a->node[v];
		const char *name = a->set.nodes[v].name;
		for (size_t u = v; u != a->ref && n->hops <= nn; u = a->node[u].parent) {
			int q = a->node[u].hop->quality;
			n->hops++;
			if (n->quality == NODE_REFERENCE || quality_rank(q) > quality_rank(n->quality))
				n->quality = q;
		}
		if (v == a->ref)
			continue;
		if (n->hop->quality == PAIR_FALLBACK)
			warn(a, "%s -> %s: the hulls intersect: no line fits (clocks not linear over the "
			     "trace); fallback line used, bounds are not strict, inversions possible; "
			     "try --segments auto", name, a->set.nodes[n->parent].name);
		else if (n->hop->quality == PAIR_SEGMENTS)
			warn(a, "%s -> %s: %zu segments", name, a->set.nodes[n->parent].name,
			     n->hop->nseg);
	}
}

/* the node's conversion summed up as a line over its trace: a1 from the first to the last
 * event, a0 = corrected - local at the first (rounded times, as reported since the first
 * version); and the relation at x0, the middle of the trace: offset and slope from the
 * unrounded conversion, so that 17 digits of the slope mean something */
static void node_line(const struct hclock_align *a, size_t v)
{
	struct anode *n = &a->node[v];
	const struct trace_node *tn = &a->set.nodes[v];

	n->a1 = 1;
	n->a0 = 0;
	n->x0 = 0;
	n->offset = 0;
	n->slope = 1;
	if (tn->nev) {
		int64_t t0 = tn->ev[0].time_ns, t1 = tn->ev[tn->nev - 1].time_ns, y0, y1, ym;
		long double f0, f1, fm, m, p;
		n->a0 = (long double)n->corr[0] - (long double)t0;
		n->x0 = t0 + (t1 - t0) / 2;
		compose_exact(a, v, n->x0, &ym, &fm, &m, &p, NULL);
		n->offset = (long double)(ym - n->x0) + fm;
		if (t1 > t0) {
			n->a1 = ((long double)n->corr[tn->nev - 1] - (long double)n->corr[0]) /
			        (long double)(t1 - t0);
			compose_exact(a, v, t0, &y0, &f0, &m, &p, NULL);
			compose_exact(a, v, t1, &y1, &f1, &m, &p, NULL);
			n->slope = ((long double)(y1 - y0) + (f1 - f0)) / (long double)(t1 - t0);
		} else if (n->hop) {
			n->a1 = n->slope = n->hop->seg[0].est.a1;
		}
	}
}

/* bound_min, _max, _mean of node v: max(dminus, dplus) over its events; and a->t0 */
static void node_bounds(struct hclock_align *a, size_t v)
{
	struct anode *n = &a->node[v];
	size_t ne = a->set.nodes[v].nev;
	long double bsum = 0;

	n->bound_min = n->bound_max = 0;
	for (size_t k = 0; k < ne; k++) {
		double b = n->dminus[k] > n->dplus[k] ? n->dminus[k] : n->dplus[k];
		if (!k || b < n->bound_min)
			n->bound_min = b;
		if (!k || b > n->bound_max)
			n->bound_max = b;
		bsum += b;
		if (n->corr[k] < a->t0)
			a->t0 = n->corr[k];
	}
	n->bound_mean = ne ? (double)(bsum / ne) : 0;
}

/* every event of node v on the reference timeline, with bounds; cur: nnodes + 1 cursors */
static int convert_node(struct hclock_align *a, size_t v, struct pair_cursor *cur)
{
	struct anode *n = &a->node[v];
	const struct trace_node *tn = &a->set.nodes[v];
	size_t ne = tn->nev ? tn->nev : 1;

	n->corr = malloc(ne * sizeof(*n->corr));
	n->dminus = malloc(ne * sizeof(*n->dminus));
	n->dplus = malloc(ne * sizeof(*n->dplus));
	if (!n->corr || !n->dminus || !n->dplus)
		return HCLOCK_ENOMEM;
	for (size_t h = 0; h <= a->set.nnodes; h++)
		cur[h] = PAIR_CURSOR_INIT;
	for (size_t k = 0; k < tn->nev; k++) {
		long double m, p;
		n->corr[k] = compose(a, v, tn->ev[k].time_ns, &m, &p, cur);
		n->dminus[k] = (double)m;
		n->dplus[k] = (double)p;
	}
	node_bounds(a, v);
	node_line(a, v);
	n->nrecv = n->inversions = n->too_fast = 0;
	return 0;
}

/* ---- the repair of message order (--repair-order, repair.c) ----------------------------- */

/* repair_moved_fn: a moved event keeps its interval, its deltas are taken from the new time
 * (called once per event, after the repair has read its deltas; to_ns < from_ns: moved
 * back) */
static int take_deltas(void *ctx, size_t node, size_t ev, int64_t from_ns, int64_t to_ns)
{
	struct anode *n = &((struct hclock_align *)ctx)->node[node];

	n->dminus[ev] += (double)(to_ns - from_ns);
	n->dplus[ev] -= (double)(to_ns - from_ns);
	return 0;
}

int align_each_moved(const struct hclock_align *a, align_moved_fn fn, void *ctx)
{
	struct pair_cursor *cur = malloc((a->set.nnodes + 1) * sizeof(*cur));
	int r = 0;

	if (!cur)
		return HCLOCK_ENOMEM;
	for (size_t v = 0; !r && v < a->set.nnodes; v++) {
		const struct trace_node *tn = &a->set.nodes[v];
		if (!a->node[v].moved)
			continue;
		for (size_t h = 0; h <= a->set.nnodes; h++)
			cur[h] = PAIR_CURSOR_INIT;
		/* the alignment's time again, as convert_node computed it (bit for bit) */
		for (size_t k = 0; !r && k < tn->nev; k++) {
			int64_t c = compose(a, v, tn->ev[k].time_ns, NULL, NULL, cur);
			if (c != a->node[v].corr[k])
				r = fn(ctx, v, k, c);
		}
	}
	free(cur);
	return r;
}

/* "FILE:LINE" of event k of node v, into buf */
static const char *where(const struct hclock_align *a, size_t v, size_t k, char *buf,
                         size_t len)
{
	snprintf(buf, len, "%s:%u", a->set.nodes[v].path, a->set.nodes[v].ev[k].line);
	return buf;
}

/* the error line of a repair that needs a move past a bound */
static int bound_error(const struct hclock_align *a, const struct repair_fail *f, int64_t lat)
{
	const struct trace_node *tn = &a->set.nodes[f->node], *sn, *rn;
	const struct anode *n = &a->node[f->node];
	const struct repair_msg *m = f->msg < a->nmsg ? &a->msg[f->msg] : NULL;
	double room = isfinite(n->dplus[f->ev]) ? n->dplus[f->ev] : 0;
	int64_t latest = n->corr[f->ev] + (int64_t)floor(room), sc, rc, earliest;
	double past = ceil((double)(f->need_ns - n->corr[f->ev]) - room);
	char w1[600], w2[600], what[800], why[300], moved[64] = "";
	long double dm, dp;

	if (!m)
		return err_set(HCLOCK_EINVAL, "%s: --repair-order: %s's event at local %" PRId64
		               " ns (corrected %" PRId64 " ns) would have to move to %" PRId64 " ns "
		               "to keep its node's order, %.0f ns past its latest time (%" PRId64
		               " ns): its conversion goes backwards there",
		               where(a, f->node, f->ev, w1, sizeof(w1)), tn->name,
		               tn->ev[f->ev].time_ns, n->corr[f->ev], f->need_ns, past, latest);
	/* both ends as the alignment put them, before any move; the send's earliest time */
	sn = &a->set.nodes[m->src];
	rn = &a->set.nodes[m->dst];
	sc = compose(a, m->src, sn->ev[m->se].time_ns, &dm, &dp, NULL);
	rc = compose(a, m->dst, rn->ev[m->re].time_ns, NULL, NULL, NULL);
	earliest = sc - (int64_t)ceill(dm);
	if (a->node[m->src].corr[m->se] != sc)
		snprintf(moved, sizeof(moved), ", repaired %" PRId64 " ns",
		         a->node[m->src].corr[m->se]);
	if (f->ev == m->re)
		snprintf(what, sizeof(what), "the receive would have to move to %" PRId64 " ns",
		         f->need_ns);
	else
		snprintf(what, sizeof(what), "%s's event at local %" PRId64 " ns (%s, corrected %"
		         PRId64 " ns), which may not precede the receive, would have to move to %"
		         PRId64 " ns",
		         tn->name, tn->ev[f->ev].time_ns, where(a, f->node, f->ev, w2, sizeof(w2)),
		         n->corr[f->ev], f->need_ns);
	repair_why(why, sizeof(why), earliest, latest, lat, "node");
	return err_set(HCLOCK_EINVAL, "%s: --repair-order: message from %s (%s, send at local %"
	               PRId64 " ns, corrected %" PRId64 " ns%s) to %s (receive at local %" PRId64
	               " ns, corrected %" PRId64 " ns): %s, %.0f ns past its latest time (%" PRId64
	               " ns); %s", where(a, m->dst, m->re, w1, sizeof(w1)), sn->name,
	               where(a, m->src, m->se, w2, sizeof(w2)), sn->ev[m->se].time_ns, sc, moved,
	               rn->name, rn->ev[m->re].time_ns, rc, what, past, latest, why);
}

/* the error line of a repair that found no order of the events */
static int cycle_error(const struct hclock_align *a, const struct repair_fail *f)
{
	const struct repair_msg *m = &a->msg[f->msg];
	char w1[600], w2[600];

	where(a, m->dst, m->re, w1, sizeof(w1));
	where(a, m->src, m->se, w2, sizeof(w2));
	if (f->why == REPAIR_TIE)
		return err_set(HCLOCK_EINVAL, "%s: --repair-order: the receive of the message from "
		               "%s (%s) waits, through events that share one local time on a node, "
		               "for itself (a round trip within one tick of that clock): the repair "
		               "moves such events together and cannot order them; align without "
		               "--repair-order", w1, a->set.nodes[m->src].name, w2);
	return err_set(HCLOCK_EINVAL, "%s: --repair-order: the receive of the message from %s "
	               "(%s) comes, through the order of events on the nodes and other messages, "
	               "before its own send: no run can pair its messages so; check how the "
	               "trace's sends and receives are matched", w1, a->set.nodes[m->src].name, w2);
}

/* repair the order of the corrected times (repair.c); the moved events' deltas taken again
 * from their new times, the nodes' bounds and a->t0 recomputed */
static int repair(struct hclock_align *a)
{
	size_t nn = a->set.nnodes;
	int64_t lat = a->opts.min_latency_ns >= 0 ? a->opts.min_latency_ns : 0;
	struct repair_node *rn = calloc(nn ? nn : 1, sizeof(*rn));
	struct repair_fail f;
	int r;

	if (!rn)
		return HCLOCK_ENOMEM;
	for (size_t v = 0; v < nn; v++) {
		const struct trace_node *tn = &a->set.nodes[v];
		rn[v] = (struct repair_node){tn->nev, a->node[v].corr, a->node[v].dplus,
		                             a->node[v].dminus,
		                             tn->nev ? &tn->ev[0].time_ns : NULL,
		                             sizeof(struct trace_event), 0, 0};
	}
	r = repair_order(rn, nn, a->msg, a->nmsg, lat, take_deltas, a, &f);
	if (r == HCLOCK_EINVAL)
		r = f.why == REPAIR_BOUND ? bound_error(a, &f, lat) : f.why ? cycle_error(a, &f) :
		    err_set(r, "--repair-order: --min-latency %" PRId64 " ns: expected less than "
		            "2^62 ns", lat);
	for (size_t v = 0; !r && v < nn; v++) {
		a->node[v].moved = rn[v].moved;
		a->node[v].moved_max = rn[v].moved_max_ns;
	}
	if (!r) {
		a->t0 = INT64_MAX;
		for (size_t v = 0; v < nn; v++)
			node_bounds(a, v);
	}
	free(rn);
	return r;
}

static int align_run(hclock_align *a, const struct hclock_align_opts *o)
{
	size_t nn = a->set.nnodes;
	size_t *parent = malloc(nn * sizeof(*parent));
	double *dist = malloc(nn * sizeof(*dist));
	struct pair_cursor *cur = malloc((nn + 1) * sizeof(*cur));
	int r = 0;

	results_free(a);
	a->opts = *o;
	a->opts.reference = NULL;
	if (o->segments_ns < 0 && o->segments_ns != HCLOCK_ALIGN_SEGMENTS_AUTO)
		r = err_set(HCLOCK_EINVAL, "segments: expected auto or a positive "
		            "duration");
	else if (o->estimate != HCLOCK_ALIGN_BISECTOR && o->estimate != HCLOCK_ALIGN_MEAN)
		r = err_set(HCLOCK_EINVAL, "estimate: expected bisector or mean");
	else if (!parent || !dist || !cur)
		r = HCLOCK_ENOMEM;
	if (!r && o->unmatched_fail && a->missing[0])
		r = err_set(HCLOCK_EINVAL, "%s (one-sided messages are fatal with --unmatched fail)",
		            a->missing);
	if (!r)
		r = fit_all(a, o);
	if (!r)
		r = choose_reference(a, o->reference, parent, dist);
	if (!r)
		set_paths(a, parent, dist);
	a->t0 = INT64_MAX;
	for (size_t v = 0; !r && v < nn; v++)
		r = convert_node(a, v, cur);
	if (!r && o->repair_order)
		r = repair(a);
	if (!r)
		r = align_metrics(a);
	if (r == HCLOCK_ENOMEM)
		err_set(r, "out of memory");
	a->ran = !r;
	free(parent);
	free(dist);
	free(cur);
	return r;
}

/* ---- accessors and output --------------------------------------------------------------- */

const char *hclock_align_warnings(const hclock_align *a)
{
	return a->warn ? a->warn : "";
}

const char *hclock_align_notes(const hclock_align *a)
{
	return a->note ? a->note : "";
}

size_t hclock_align_nnodes(const hclock_align *a)
{
	return a->set.nnodes;
}

const char *hclock_align_node_name(const hclock_align *a, size_t i)
{
	return i < a->set.nnodes ? a->set.nodes[i].name : NULL;
}

size_t hclock_align_reference(const hclock_align *a)
{
	return a->ref;
}

/* the writers' conversion as one line (trace_line_fn): every hop of the node's path one
 * segment of a usable fit, measured by composing exactly at both ends of [x0, x1] */
static int line_cb(void *ctx, size_t node, int64_t x0, int64_t x1, struct trace_line *l)
{
	const struct hclock_align *a = ctx;
	int64_t y0, y1;
	long double f0, f1, m, p;
	size_t v = node;

	if (a->node[node].moved) /* its events no longer follow one conversion */
		return -1;
	for (size_t guard = 0; v != a->ref; guard++) {
		const struct pair_fit *f = a->node[v].hop;
		if (guard > a->set.nnodes || !f || f->nseg != 1 || f->quality == PAIR_UNBOUNDED ||
		    f->quality == PAIR_SEGMENTS)
			return -1;
		v = a->node[v].parent;
	}
	if (x1 <= x0)
		x1 = x0 + 1000000000;
	compose_exact(a, node, x0, &y0, &f0, &m, &p, NULL);
	compose_exact(a, node, x1, &y1, &f1, &m, &p, NULL);
	l->x0_ns = x0;
	l->y0_ns = y0;
	l->y0_frac = f0;
	l->slope = ((long double)(y1 - y0) + (f1 - f0)) / (long double)(x1 - x0);
	return 0;
}

static int align_write(hclock_align *a, const char *outdir)
{
	if (!a->ran)
		return err_set(HCLOCK_EINVAL, "nothing to write: alignment has not run");
	if (!a->set.fmt->write)
		return err_set(HCLOCK_EINVAL, "writing %s traces is not supported",
		               a->set.fmt->name);
	/* every format writes into an existing directory; create it here, once for all */
	if (mkdir(outdir, 0777) && errno != EEXIST)
		return err_set(HCLOCK_EIO, "%s: cannot create output directory: %s",
		               outdir, strerror(errno));
	a->set.line = line_cb;
	a->set.line_ctx = a;
	return a->set.fmt->write(&a->set, conv_cb, &(struct conv_ctx){a, 0, 0}, outdir);
}

/* ---- the public functions with an error buffer ------------------------------------------ */

/* The caller's copy of the line err_set left (align keeps the library's convention inside:
 * 0 or a negative HCLOCK_E*, the line in hclock_last_error()). */
static int give_err(int r, char *err, size_t errlen)
{
	if (r && err && errlen)
		snprintf(err, errlen, "%s", hclock_last_error());
	return r;
}

int hclock_align_open(const char *const *inputs, size_t n, hclock_align **out, char *err,
                      size_t errlen)
{
	return give_err(align_open(inputs, n, out), err, errlen);
}

int hclock_align_run(hclock_align *a, const struct hclock_align_opts *o, char *err,
                     size_t errlen)
{
	return give_err(align_run(a, o), err, errlen);
}

int hclock_align_write(hclock_align *a, const char *outdir, char *err, size_t errlen)
{
	return give_err(align_write(a, outdir), err, errlen);
}

void hclock_align_free(hclock_align *a)
{
	if (!a)
		return;
	results_free(a);
	for (size_t v = 0; a->node && v < a->set.nnodes; v++) {
		free(a->node[v].mate);
		free(a->node[v].matched);
	}
	free(a->node);
	free(a->msg);
	free(a->unmatched);
	free(a->warn);
	free(a->note);
	if (a->set.fmt && a->set.fmt->release)
		a->set.fmt->release(&a->set);
	free(a);
}
