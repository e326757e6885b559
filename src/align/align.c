/*
 * align.c - the alignment engine: match messages, fit every ordered pair of nodes (pair.c),
 * choose the reference, compose conversions hop by hop along the tree of paths that minimise
 * the accumulated bound, then bounds and the metrics of Section 4.1 at every event.
 *
 * Composition (multi-hop): for a path v -> p1 -> ... -> ref, a local time t is converted hop
 * by hop, each hop evaluated at the previous hop's converted time (not at t). The bounds add:
 * if the true time on p lies in [c - m, c + p] and every valid conversion p -> q has slope at
 * most s, the true time on q lies in [C(c) - (D2(c) + s m), C(c) + (D1(c) + s p)].
 */
#include <dirent.h>
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

#define FALLBACK_PENALTY 1e12 /* ns added to a path weight per non-strict hop */

static void warn(struct hclock_align *a, const char *fmt, ...)
{
	va_list ap;
	char line[512];
	char *w;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	w = realloc(a->warn, a->warnlen + (size_t)n + 2);
	if (!w)
		return;
	memcpy(w + a->warnlen, line, (size_t)n);
	a->warnlen += (size_t)n;
	w[a->warnlen++] = '\n';
	w[a->warnlen] = 0;
	a->warn = w;
}

void hclock_align_opts_init(struct hclock_align_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = HCLOCK_ALIGN_HULL;
	o->min_latency_ns = -1;
}

/* ---- reading ------------------------------------------------------------------------- */

struct strv {
	char **v;
	size_t n, cap;
};

static int strv_add(struct strv *s, const char *p)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 16;
		char **nv = realloc(s->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	if (!(s->v[s->n] = strdup(p)))
		return -ENOMEM;
	s->n++;
	return 0;
}

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the input files: each argument a file, or a directory whose recognised files are used */
static int expand(const char *const *inputs, size_t n, struct strv *paths,
                  const struct trace_format **fmt, char *err, size_t errlen)
{
	*fmt = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct trace_format *f;
		struct stat st;

		if (stat(inputs[i], &st))
			return trace_fail(err, errlen, -EINVAL, "%s: %s", inputs[i], strerror(errno));
		f = trace_format_probe(inputs[i]);
		if (!f && S_ISDIR(st.st_mode)) {
			struct strv dir = {0};
			DIR *d = opendir(inputs[i]);
			struct dirent *de;
			int r = 0;

			if (!d)
				return trace_fail(err, errlen, -EINVAL, "%s: %s", inputs[i], strerror(errno));
			while ((de = readdir(d))) {
				char *p;
				if (de->d_name[0] == '.')
					continue;
				p = malloc(strlen(inputs[i]) + strlen(de->d_name) + 2);
				if (!p) {
					r = -ENOMEM;
					break;
				}
				sprintf(p, "%s/%s", inputs[i], de->d_name);
				if (trace_format_probe(p))
					r = strv_add(&dir, p);
				free(p);
				if (r)
					break;
			}
			closedir(d);
			if (!r && !dir.n)
				r = trace_fail(err, errlen, -EINVAL, "%s: no trace files in this directory "
				         "(formats: %s)", inputs[i], trace_format_names());
			if (dir.n)
				qsort(dir.v, dir.n, sizeof(*dir.v), cmp_str);
			for (size_t k = 0; !r && k < dir.n; k++) {
				f = trace_format_probe(dir.v[k]);
				if (*fmt && f != *fmt)
					r = trace_fail(err, errlen, -EINVAL, "%s: a %s trace among %s traces; "
					         "give inputs of one format", dir.v[k], f->name,
					         (*fmt)->name);
				*fmt = f;
				if (!r)
					r = strv_add(paths, dir.v[k]);
			}
			strv_free(&dir);
			if (r == -ENOMEM)
				return trace_fail(err, errlen, r, "out of memory");
			if (r)
				return r;
			continue;
		}
		if (!f)
			return trace_fail(err, errlen, -EINVAL, "%s: not a trace this tool reads (formats: %s; "
			            "native traces are named NODE.csv)", inputs[i], trace_format_names());
		if (*fmt && f != *fmt)
			return trace_fail(err, errlen, -EINVAL, "%s: a %s trace among %s traces; give inputs "
			            "of one format", inputs[i], f->name, (*fmt)->name);
		*fmt = f;
		if (strv_add(paths, inputs[i]))
			return trace_fail(err, errlen, -ENOMEM, "out of memory");
	}
	if (!paths->n)
		return trace_fail(err, errlen, -EINVAL, "no input traces given");
	return 0;
}

/*
 * Messages are matched through a hash table of the sends keyed by (src, dst, id): open
 * addressing with linear probing, at most 2/3 full, so matching is linear in the number of
 * events. Errors name the same message a sort by (src, dst, id) would find first.
 */
struct mslot {
	uint64_t id;
	uint32_t src, dst; /* node indexes */
	size_t se;         /* send event on src; NO_EVENT for an empty slot */
};

#define NO_EVENT ((size_t)-1)

struct mkey {
	uint32_t src, dst;
	uint64_t id;
	size_t ev;
};

static int cmp_mkey(const void *a, const void *b)
{
	const struct mkey *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int mkey_eq(const struct mkey *x, const struct mkey *y)
{
	return x->src == y->src && x->dst == y->dst && x->id == y->id;
}

/* where the search for key (src, dst, id) starts: multiplicative (Fibonacci) hashing, the
 * high bits of the product, so that ids counting up spread over the whole table */
static size_t mslot_home(size_t mask, uint32_t src, uint32_t dst, uint64_t id)
{
	uint64_t h = (id + (((uint64_t)src << 32) | dst) * UINT64_C(0xc2b2ae3d27d4eb4f)) *
	             UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & mask;
}

/* the slot of key (src, dst, id): where it is, or the empty slot where it would go */
static struct mslot *mslot_find(struct mslot *tab, size_t mask, uint32_t src, uint32_t dst,
                                uint64_t id)
{
	size_t i = mslot_home(mask, src, dst, id);

	for (;; i = (i + 1) & mask) {
		struct mslot *t = &tab[i];
		if (t->se == NO_EVENT || (t->id == id && t->src == src && t->dst == dst))
			return t;
	}
}

/* the smaller of two keys in (src, dst, id, ev) order, for error reports; a->src == UINT32_MAX
 * means none yet */
static void mkey_min(struct mkey *a, const struct mkey *b)
{
	if (a->src == UINT32_MAX || cmp_mkey(b, a) < 0)
		*a = *b;
}

/* pair every send with its recv; a one-sided message is an error unless set->partial_ok */
static int match(struct hclock_align *a, char *err, size_t errlen)
{
	struct trace_set *s = &a->set;
	struct mslot *tab = NULL;
	struct mkey *lone = NULL; /* recvs without a send */
	struct mkey dup = {UINT32_MAX, 0, 0, 0}, miss = {UINT32_MAX, 0, 0, 0};
	size_t ns = 0, nr = 0, nlone = 0, cap = 16, i;
	int miss_send = 0, r = -ENOMEM;

	for (size_t v = 0; v < s->nnodes; v++)
		for (size_t k = 0; k < s->nodes[v].nev; k++) {
			const struct trace_event *e = &s->nodes[v].ev[k];
			if (e->kind != TRACE_SEND && e->kind != TRACE_RECV)
				continue;
			if (e->peer < 0 || (size_t)e->peer >= s->nnodes || (size_t)e->peer == v)
				return trace_fail(err, errlen, -EINVAL, "%s:%u: message without a valid peer "
				            "node", s->nodes[v].path, e->line);
			ns += e->kind == TRACE_SEND;
			nr += e->kind == TRACE_RECV;
		}
	while (cap < ns + ns / 2)
		cap *= 2;
	tab = malloc(cap * sizeof(*tab));
	a->msg = malloc((ns < nr ? ns + 1 : nr + 1) * sizeof(*a->msg));
	if (!tab || !a->msg)
		goto out;
	for (i = 0; i < cap; i++)
		tab[i].se = NO_EVENT;

	/* every send into the table; a second one with the same key is a duplicate */
	for (size_t v = 0; v < s->nnodes; v++) {
		const struct trace_node *n = &s->nodes[v];
		for (size_t k = 0; k < n->nev; k++) {
			const struct trace_event *e = &n->ev[k];
			struct mslot *t;
			if (e->kind != TRACE_SEND)
				continue;
			t = mslot_find(tab, cap - 1, (uint32_t)v, (uint32_t)e->peer, e->msg);
			if (t->se == NO_EVENT)
				*t = (struct mslot){e->msg, (uint32_t)v, (uint32_t)e->peer, k};
			else
				mkey_min(&dup, &(struct mkey){(uint32_t)v, (uint32_t)e->peer, e->msg, k});
		}
	}
	if (dup.src != UINT32_MAX) {
		const struct trace_node *n = &s->nodes[dup.src];
		r = trace_fail(err, errlen, -EINVAL, "%s:%u: duplicate send id %" PRIu64 " to %s", n->path,
		         n->ev[dup.ev].line, dup.id, s->nodes[dup.dst].name);
		goto out;
	}

	/* every recv to its send; a send claimed twice, or two lone recvs alike, are duplicates */
	a->nmsg = 0;
	for (size_t v = 0; v < s->nnodes; v++) {
		const struct trace_node *n = &s->nodes[v];
		for (size_t k = 0; k < n->nev; k++) {
			const struct trace_event *e = &n->ev[k];
			struct mkey key = {(uint32_t)e->peer, (uint32_t)v, e->msg, k};
			const struct mslot *t;
			struct anode *src;
			if (e->kind != TRACE_RECV)
				continue;
			t = mslot_find(tab, cap - 1, key.src, key.dst, key.id);
			if (t->se == NO_EVENT) {
				if (!lone && !(lone = malloc(nr * sizeof(*lone))))
					goto out;
				lone[nlone++] = key;
				continue;
			}
			src = &a->node[t->src];
			if (src->matched[t->se]) {
				mkey_min(&dup, &key);
				continue;
			}
			a->msg[a->nmsg++] = (struct amsg){t->src, t->dst, t->se, k};
			src->mate[t->se] = e->time_ns;
			src->matched[t->se] = 1;
			a->node[v].mate[k] = s->nodes[t->src].ev[t->se].time_ns;
			a->node[v].matched[k] = 1;
		}
	}
	/* lone recvs are few (none in a complete trace): sorted, duplicates are neighbours */
	if (nlone)
		qsort(lone, nlone, sizeof(*lone), cmp_mkey);
	for (i = 1; i < nlone; i++)
		if (mkey_eq(&lone[i], &lone[i - 1]))
			mkey_min(&dup, &lone[i]);
	if (dup.src != UINT32_MAX) {
		const struct trace_node *n = &s->nodes[dup.dst];
		r = trace_fail(err, errlen, -EINVAL, "%s:%u: duplicate recv id %" PRIu64 " from %s",
		         n->path, n->ev[dup.ev].line, dup.id, s->nodes[dup.src].name);
		goto out;
	}
	if (!s->partial_ok) {
		/* the first one-sided message in (src, dst, id) order; the table holds one only if
		 * some send went unclaimed */
		if (nlone)
			miss = lone[0];
		for (i = 0; a->nmsg < ns && i < cap; i++) {
			const struct mslot *t = &tab[i];
			if (t->se != NO_EVENT && !a->node[t->src].matched[t->se]) {
				struct mkey key = {t->src, t->dst, t->id, t->se};
				if (miss.src == UINT32_MAX || cmp_mkey(&key, &miss) < 0) {
					miss = key;
					miss_send = 1;
				}
			}
		}
	}
	if (miss.src != UINT32_MAX) {
		if (miss_send) {
			const struct trace_node *n = &s->nodes[miss.src];
			const struct trace_node *d = &s->nodes[miss.dst];
			r = trace_fail(err, errlen, -EINVAL, "%s:%u: send id %" PRIu64 " to %s has no "
			         "matching recv in %s", n->path, n->ev[miss.ev].line, miss.id,
			         d->name, d->path);
		} else {
			const struct trace_node *n = &s->nodes[miss.dst];
			const struct trace_node *d = &s->nodes[miss.src];
			r = trace_fail(err, errlen, -EINVAL, "%s:%u: recv id %" PRIu64 " from %s has no "
			         "matching send in %s", n->path, n->ev[miss.ev].line, miss.id,
			         d->name, d->path);
		}
		goto out;
	}
	r = 0;
out:
	if (r == -ENOMEM)
		trace_fail(err, errlen, r, "out of memory");
	free(tab);
	free(lone);
	return r;
}

int hclock_align_open(const char *const *inputs, size_t n, hclock_align **out, char *err,
                      size_t errlen)
{
	struct strv paths = {0};
	const struct trace_format *fmt;
	struct hclock_align *a;
	int r;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return trace_fail(err, errlen, -ENOMEM, "out of memory");
	if ((r = expand(inputs, n, &paths, &fmt, err, errlen)))
		goto err;
	if ((r = fmt->read((const char *const *)paths.v, paths.n, &a->set, err, errlen)))
		goto err;
	a->set.fmt = fmt;
	if (a->set.nnodes < 1) {
		r = trace_fail(err, errlen, -EINVAL, "no nodes in the input traces");
		goto err;
	}
	if (a->set.nnodes > UINT32_MAX) {
		r = trace_fail(err, errlen, -EINVAL, "too many nodes");
		goto err;
	}
	a->node = calloc(a->set.nnodes, sizeof(*a->node));
	if (!a->node) {
		r = trace_fail(err, errlen, -ENOMEM, "out of memory");
		goto err;
	}
	for (size_t v = 0; v < a->set.nnodes; v++) {
		const struct trace_node *tn = &a->set.nodes[v];
		size_t ne = tn->nev ? tn->nev : 1;
		a->node[v].mate = malloc(ne * sizeof(int64_t));
		a->node[v].matched = calloc(ne, 1);
		if (!a->node[v].mate || !a->node[v].matched) {
			r = trace_fail(err, errlen, -ENOMEM, "out of memory");
			goto err;
		}
		/* the engine's own preconditions, whatever the reader */
		for (size_t k = 0; k < tn->nev; k++) {
			int64_t t = tn->ev[k].time_ns;
			if (t >= (INT64_C(1) << 62) || t <= -(INT64_C(1) << 62)) {
				r = trace_fail(err, errlen, -EINVAL, "%s:%u: timestamp %" PRId64 " out of range",
				         tn->path, tn->ev[k].line, t);
				goto err;
			}
			if (k && t < tn->ev[k - 1].time_ns) {
				r = trace_fail(err, errlen, -EINVAL, "%s:%u: events out of time order", tn->path,
				         tn->ev[k].line);
				goto err;
			}
		}
	}
	if ((r = match(a, err, errlen)))
		goto err;
	strv_free(&paths);
	*out = a;
	return 0;
err:
	strv_free(&paths);
	hclock_align_free(a);
	return r;
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
	}
	free(a->bc);
	a->bc = NULL;
	a->nbc = 0;
	free(a->warn);
	a->warn = NULL;
	a->warnlen = 0;
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
	int r = -ENOMEM;

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
 * Local time t of node v on the reference timeline, with bounds. cur: one cursor per hop
 * (nnodes + 1), kept from the previous call on the same node so that a node's events in time
 * order cost amortized O(1) per hop (every hop's conversion is increasing for a valid fit, so
 * each hop sees its times in order too); NULL for a single evaluation (O(log h) per hop).
 */
static int64_t compose(const struct hclock_align *a, size_t v, int64_t t, long double *dm,
                       long double *dp, struct pair_cursor *cur)
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
		if (x >= (INT64_C(1) << 62) || x <= -(INT64_C(1) << 62)) {
			xf = yf - whole + (long double)(x - (x > 0 ? (INT64_C(1) << 62) - 1 :
			                                            -(INT64_C(1) << 62) + 1));
			x = x > 0 ? (INT64_C(1) << 62) - 1 : -(INT64_C(1) << 62) + 1;
		} else {
			xf = yf - whole;
		}
		v = a->node[v].parent;
	}
	if (dm)
		*dm = m;
	if (dp)
		*dp = p;
	return clamp_i64((long double)x + xf);
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
	return compose(c->a, node, local_ns, NULL, NULL, NULL);
}

int hclock_align_convert(const hclock_align *a, size_t node, int64_t local_ns, int64_t *ref_ns,
                         double *dminus_ns, double *dplus_ns)
{
	long double m, p;
	int64_t c;

	if (!a || !a->ran || node >= a->set.nnodes)
		return -EINVAL;
	if (local_ns >= (INT64_C(1) << 62) || local_ns <= -(INT64_C(1) << 62))
		return -EINVAL;
	c = compose(a, node, local_ns, &m, &p, NULL);
	if (ref_ns)
		*ref_ns = c;
	if (dminus_ns)
		*dminus_ns = (double)m;
	if (dplus_ns)
		*dplus_ns = (double)p;
	return 0;
}

static int cmp_bc(const void *x, const void *y)
{
	const size_t *a = x, *b = y; /* {id lo, id hi, node, event} packed as 4 size_t */
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int metrics(struct hclock_align *a)
{
	size_t nn = a->set.nnodes, nb = 0, *bk;
	double *minlat = malloc(nn * nn * sizeof(double)), sum = 0, sq = 0;

	if (!minlat)
		return -ENOMEM;
	for (size_t i = 0; i < nn * nn; i++)
		minlat[i] = INFINITY;
	for (size_t i = 0; i < a->nmsg; i++) {
		const struct amsg *m = &a->msg[i];
		double l = (double)(a->node[m->dst].corr[m->re] - a->node[m->src].corr[m->se]);
		if (l < minlat[m->src * nn + m->dst])
			minlat[m->src * nn + m->dst] = l;
	}
	for (size_t i = 0; i < a->nmsg; i++) {
		const struct amsg *m = &a->msg[i];
		struct anode *d = &a->node[m->dst];
		double l = (double)(d->corr[m->re] - a->node[m->src].corr[m->se]), tau;
		d->nrecv++;
		d->inversions += l < 0;
		if (a->opts.min_latency_ns >= 0)
			tau = (double)a->opts.min_latency_ns;
		else /* half the smallest corrected round trip of this pair */
			tau = (minlat[m->src * nn + m->dst] + minlat[m->dst * nn + m->src]) / 2;
		d->too_fast += isfinite(tau) && l < tau;
	}
	free(minlat);

	/* broadcast differential delay: arrival on each node minus arrival on the reference */
	for (size_t v = 0; v < nn; v++)
		for (size_t k = 0; k < a->set.nodes[v].nev; k++)
			nb += a->set.nodes[v].ev[k].kind == TRACE_BCAST;
	a->bc_min = a->bc_max = a->bc_mean = a->bc_std = NAN;
	if (!nb)
		return 0;
	bk = malloc(nb * 4 * sizeof(size_t));
	a->bc = malloc(nb * sizeof(*a->bc));
	if (!bk || !a->bc) {
		free(bk);
		return -ENOMEM;
	}
	nb = 0;
	for (size_t v = 0; v < nn; v++)
		for (size_t k = 0; k < a->set.nodes[v].nev; k++) {
			const struct trace_event *e = &a->set.nodes[v].ev[k];
			if (e->kind != TRACE_BCAST)
				continue;
			bk[4 * nb] = (size_t)(e->msg >> 32);
			bk[4 * nb + 1] = (size_t)(e->msg & 0xffffffffu);
			/* the reference sorts first within one broadcast */
			bk[4 * nb + 2] = v == a->ref ? 0 : v + 1;
			bk[4 * nb + 3] = k;
			nb++;
		}
	qsort(bk, nb, 4 * sizeof(size_t), cmp_bc);
	for (size_t i = 0; i < nb;) {
		size_t j = i + 1;
		while (j < nb && bk[4 * j] == bk[4 * i] && bk[4 * j + 1] == bk[4 * i + 1])
			j++;
		if (bk[4 * i + 2] == 0) {
			int64_t cr = a->node[a->ref].corr[bk[4 * i + 3]];
			for (size_t k = i + 1; k < j; k++) {
				size_t v = bk[4 * k + 2] - 1;
				struct bcast_pt *p = &a->bc[a->nbc++];
				p->node = v;
				p->d_ns = (double)(a->node[v].corr[bk[4 * k + 3]] - cr);
				p->t_s = (double)(cr - a->t0) * 1e-9;
			}
		}
		i = j;
	}
	free(bk);
	for (size_t i = 0; i < a->nbc; i++) {
		double d = a->bc[i].d_ns;
		if (!i || d < a->bc_min)
			a->bc_min = d;
		if (!i || d > a->bc_max)
			a->bc_max = d;
		sum += d;
	}
	if (a->nbc) {
		a->bc_mean = sum / (double)a->nbc;
		for (size_t i = 0; i < a->nbc; i++)
			sq += (a->bc[i].d_ns - a->bc_mean) * (a->bc[i].d_ns - a->bc_mean);
		a->bc_std = sqrt(sq / (double)a->nbc);
	}
	return 0;
}

int hclock_align_run(hclock_align *a, const struct hclock_align_opts *o, char *err,
                     size_t errlen)
{
	size_t nn = a->set.nnodes, *parent = NULL, lost = 0, *best_parent = NULL;
	double *dist = NULL, best = INFINITY;
	struct pair_cursor *cur = NULL;
	struct pair_opts po;
	int r = -ENOMEM;

	results_free(a);
	a->opts = *o;
	a->opts.reference = NULL;
	po.mode = o->mode == HCLOCK_ALIGN_REGRESSION ? PAIR_MODE_REGRESSION : PAIR_MODE_HULL;
	po.segments = o->segments_ns;
	if (o->segments_ns < 0 && o->segments_ns != HCLOCK_ALIGN_SEGMENTS_AUTO)
		return trace_fail(err, errlen, -EINVAL, "segments: expected auto or a positive duration");

	a->fit = calloc(nn * nn, sizeof(*a->fit));
	parent = malloc(nn * sizeof(*parent));
	best_parent = malloc(nn * sizeof(*best_parent));
	dist = malloc(nn * sizeof(*dist));
	cur = malloc((nn + 1) * sizeof(*cur));
	if (!a->fit || !parent || !best_parent || !dist || !cur)
		goto out;
	for (size_t x = 0; x < nn; x++)
		if (fit_node(a, x, &po))
			goto out;

	/* reference: the given node, or the one whose tree has the smallest total bound */
	a->ref = nn;
	if (o->reference) {
		for (size_t v = 0; v < nn; v++)
			if (!strcmp(a->set.nodes[v].name, o->reference))
				a->ref = v;
		if (a->ref == nn) {
			r = trace_fail(err, errlen, -EINVAL, "--reference %s: no such node; nodes are %s%s",
			         o->reference, a->set.nodes[0].name, nn > 1 ? ", ..." : "");
			goto out;
		}
		best = tree(a, a->ref, best_parent, dist, &lost);
	} else {
		size_t most = 0;
		/* most nodes reached first, then the smallest total bound */
		for (size_t c = 0; c < nn; c++) {
			double t = tree(a, c, parent, dist, &lost);
			size_t reach = 0;
			if (isnan(t))
				goto out;
			for (size_t v = 0; v < nn; v++)
				reach += isfinite(dist[v]);
			if (a->ref == nn || reach > most || (reach == most && t < best)) {
				most = reach;
				best = t;
				a->ref = c;
			}
		}
		best = tree(a, a->ref, best_parent, dist, &lost);
	}
	if (isnan(best))
		goto out;
	if (!isfinite(best)) {
		r = trace_fail(err, errlen, -EINVAL, "%s (%s): no message path to the reference node %s; "
		         "a path needs messages in both directions between each pair of nodes on it",
		         a->set.nodes[lost].name, a->set.nodes[lost].path, a->set.nodes[a->ref].name);
		goto out;
	}
	for (size_t v = 0; v < nn; v++) {
		struct anode *n = &a->node[v];
		n->parent = best_parent[v];
		n->dist = dist[v];
		n->hop = v == a->ref ? NULL : a->fit[v * nn + n->parent];
		n->hops = 0;
		n->quality = NODE_REFERENCE;
	}
	for (size_t v = 0; v < nn; v++) {
		struct anode *n = &a->node[v];
		for (size_t u = v; u != a->ref && n->hops <= nn; u = a->node[u].parent) {
			int q = a->node[u].hop->quality;
			n->hops++;
			if (n->quality == NODE_REFERENCE || quality_rank(q) > quality_rank(n->quality))
				n->quality = q;
		}
		if (v != a->ref) {
			const struct pair_fit *f = n->hop;
			if (f->quality == PAIR_FALLBACK)
				warn(a, "%s -> %s: the hulls intersect: no line fits (clocks not linear "
				     "over the trace); fallback line used, bounds are not strict, "
				     "inversions possible; try --segments auto", a->set.nodes[v].name,
				     a->set.nodes[n->parent].name);
			else if (f->quality == PAIR_SEGMENTS)
				warn(a, "%s -> %s: %zu segments", a->set.nodes[v].name,
				     a->set.nodes[n->parent].name, f->nseg);
		}
	}

	/* every event on the reference timeline, with bounds */
	a->ran = 1;
	a->t0 = INT64_MAX;
	for (size_t v = 0; v < nn; v++) {
		struct anode *n = &a->node[v];
		const struct trace_node *tn = &a->set.nodes[v];
		size_t ne = tn->nev ? tn->nev : 1;
		long double bsum = 0;

		n->corr = malloc(ne * sizeof(*n->corr));
		n->dminus = malloc(ne * sizeof(*n->dminus));
		n->dplus = malloc(ne * sizeof(*n->dplus));
		if (!n->corr || !n->dminus || !n->dplus) {
			a->ran = 0;
			goto out;
		}
		n->bound_min = n->bound_max = 0;
		for (size_t h = 0; h <= nn; h++)
			cur[h] = PAIR_CURSOR_INIT;
		for (size_t k = 0; k < tn->nev; k++) {
			long double m, p, b;
			n->corr[k] = compose(a, v, tn->ev[k].time_ns, &m, &p, cur);
			n->dminus[k] = (double)m;
			n->dplus[k] = (double)p;
			b = m > p ? m : p;
			if (!k || b < n->bound_min)
				n->bound_min = (double)b;
			if (!k || b > n->bound_max)
				n->bound_max = (double)b;
			bsum += b;
			if (n->corr[k] < a->t0)
				a->t0 = n->corr[k];
		}
		n->bound_mean = tn->nev ? (double)(bsum / tn->nev) : 0;
		n->a1 = 1;
		n->a0 = 0;
		if (tn->nev) {
			int64_t t0 = tn->ev[0].time_ns, t1 = tn->ev[tn->nev - 1].time_ns;
			n->a0 = (long double)n->corr[0] - (long double)t0;
			if (t1 > t0)
				n->a1 = ((long double)n->corr[tn->nev - 1] - (long double)n->corr[0]) /
				        (long double)(t1 - t0);
			else if (n->hop)
				n->a1 = n->hop->seg[0].est.a1;
		}
		n->nrecv = n->inversions = n->too_fast = 0;
	}
	if (metrics(a)) {
		a->ran = 0;
		goto out;
	}
	r = 0;
out:
	if (r == -ENOMEM)
		trace_fail(err, errlen, r, "out of memory");
	free(parent);
	free(best_parent);
	free(dist);
	free(cur);
	return r;
}

/* ---- accessors ------------------------------------------------------------------------ */

const char *hclock_align_warnings(const hclock_align *a)
{
	return a->warn ? a->warn : "";
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

int hclock_align_write(const hclock_align *a, const char *outdir, char *err, size_t errlen)
{
	if (!a->ran)
		return trace_fail(err, errlen, -EINVAL, "nothing to write: alignment has not run");
	if (!a->set.fmt->write)
		return trace_fail(err, errlen, -EINVAL, "writing %s traces is not supported",
		            a->set.fmt->name);
	/* every format writes into an existing directory; create it here, once for all */
	if (mkdir(outdir, 0777) && errno != EEXIST) {
		return trace_fail(err, errlen, -errno, "%s: cannot create output directory: %s", outdir,
		            strerror(errno));
	}
	return a->set.fmt->write(&a->set, conv_cb, &(struct conv_ctx){a, 0, 0}, outdir, err,
	                         errlen);
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
	if (a->set.fmt && a->set.fmt->release)
		a->set.fmt->release(&a->set);
	free(a);
}
