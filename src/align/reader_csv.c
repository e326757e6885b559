/*
 * reader_csv.c - the native trace format: one CSV file per node, named NODE.csv, with the
 * header line "event,id,peer,time_ns" and one event per line:
 *   send,ID,PEER,T   a message to node PEER; recv,ID,PEER,T  the message ID from PEER
 *   bcast,ID,,T      one broadcast, same ID on every node (evaluation only)
 *   NAME,ANY,ANY,T   any other event, carried through and converted
 * ID is an unsigned decimal integer, T int64 ns in time order. The writer keeps every line
 * byte for byte up to the last comma and replaces the time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "align/outbuf.h"
#include "align/outset.h"
#include "align/format.h"
#include "align/slurp.h"
#include "align/trace.h"

extern const struct trace_format trace_format_csv; /* defined at the end */

#define CSV_HEADER "event,id,peer,time_ns"
#define TIME_LIMIT (INT64_C(1) << 62) /* keeps every difference of two times in an int64 */

struct csv_node {
	char *buf;         /* the whole file as read (slurp.h): parsed in place, copied out by
	                      the writer, whatever happens to the file meanwhile */
	size_t len;        /* its length */
	size_t *off;       /* per record: start of its line in buf */
	size_t *prefix;    /* per record: length up to and including the last comma */
	size_t bad_peer;   /* first send/recv whose peer is unknown or this node, else NO_EVENT */
	const char *bad_name; /* its peer field, bad_len bytes (reported once all files parsed) */
	size_t bad_len;
};

#define NO_EVENT ((size_t)-1)

static int probe(const char *path)
{
	size_t n = strlen(path);
	struct stat st;

	return n > 4 && !strcmp(path + n - 4, ".csv") && !stat(path, &st) && S_ISREG(st.st_mode);
}

static char *node_name(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;
	char *s;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 4 && !strcmp(b + n - 4, ".csv"))
		n -= 4;
	s = malloc(n + 1);
	if (s) {
		memcpy(s, b, n);
		s[n] = 0;
	}
	return s;
}

/*
 * Numbers, parsed in place: what strtoull/strtoll accepted in base 10 on the field copied to
 * a 40-byte buffer, i.e. at most 39 characters, all of them digits after an optional '-' (for
 * int64 only), the value in range. Hand-written because the per-field copy and strto* calls
 * were most of the parsing time.
 */
#define NUM_FIELD_MAX 40

/* the digits [p, p+n) as a value <= max; 0 if empty, not all digits, or above max */
static int parse_digits(const char *p, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)p[i] - '0';
		if (d > 9)
			return 0;
		/* 18 digits stay below 10^18 < max: only longer numbers can go past it */
		if (i >= 18 && x > (max - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	*v = x;
	return 1;
}

static int parse_u64(const char *p, size_t n, uint64_t *v)
{
	return n < NUM_FIELD_MAX && parse_digits(p, n, UINT64_MAX, v);
}

static int parse_i64(const char *p, size_t n, int64_t *v)
{
	uint64_t m;

	if (n >= NUM_FIELD_MAX)
		return 0;
	if (n && *p == '-') {
		/* down to INT64_MIN, whose magnitude is INT64_MAX + 1 */
		if (!parse_digits(p + 1, n - 1, (uint64_t)INT64_MAX + 1, &m))
			return 0;
		*v = m > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)m;
		return 1;
	}
	if (!parse_digits(p, n, INT64_MAX, &m))
		return 0;
	*v = (int64_t)m;
	return 1;
}

/*
 * Duplicate ids: a hash table of the node's send, recv and bcast events keyed by (kind, peer,
 * id), open addressing with linear probing, at most 2/3 full. The error names the duplicate
 * that comes first in (kind, peer, id) order, and its first occurrence.
 */
struct dupslot {
	uint64_t msg;
	int kind, peer;
	size_t ev;      /* event index; NO_EVENT for an empty slot */
};

static int dupkey_less(const struct trace_event *x, const struct trace_event *y)
{
	if (x->kind != y->kind)
		return x->kind < y->kind;
	if (x->peer != y->peer)
		return x->peer < y->peer;
	return x->msg < y->msg;
}

static int dup_check(const struct trace_node *node)
{
	struct dupslot *tab;
	size_t cap = 16, mask, first = NO_EVENT, second = NO_EVENT;

	while (cap < node->nev + node->nev / 2)
		cap *= 2;
	mask = cap - 1;
	tab = malloc(cap * sizeof(*tab));
	if (!tab)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", node->path);
	for (size_t i = 0; i < cap; i++)
		tab[i].ev = NO_EVENT;
	for (size_t k = 0; k < node->nev; k++) {
		const struct trace_event *e = &node->ev[k];
		/* multiplicative (Fibonacci) hashing: ids counting up spread over the table */
		uint64_t h = (e->msg + ((uint64_t)e->kind << 32 | (uint32_t)e->peer) *
		              UINT64_C(0xc2b2ae3d27d4eb4f)) * UINT64_C(0x9e3779b97f4a7c15);
		size_t i = (size_t)(h >> 32) & mask;

		if (e->kind == TRACE_OTHER)
			continue;
		for (;; i = (i + 1) & mask) {
			struct dupslot *t = &tab[i];
			if (t->ev == NO_EVENT) {
				*t = (struct dupslot){e->msg, (int)e->kind, e->peer, k};
				break;
			}
			if (t->msg == e->msg && t->kind == (int)e->kind && t->peer == e->peer) {
				if (second == NO_EVENT || dupkey_less(e, &node->ev[second])) {
					first = t->ev;
					second = k;
				}
				break;
			}
		}
	}
	free(tab);
	if (second != NO_EVENT)
		return err_set(HCLOCK_EINVAL, "%s:%u: duplicate id %" PRIu64 " (first at line %u); "
		         "each message id appears once per direction and peer", node->path,
		         node->ev[second].line, node->ev[second].msg, node->ev[first].line);
	return 0;
}

static void release(struct trace_set *set)
{
	for (size_t i = 0; i < set->nnodes; i++) {
		struct trace_node *n = &set->nodes[i];
		struct csv_node *c = n->priv;
		if (c) {
			free(c->buf);
			free(c->off);
			free(c->prefix);
			free(c);
		}
		free(n->name);
		free(n->path);
		free(n->ev);
	}
	free(set->nodes);
	set->nodes = NULL;
	set->nnodes = 0;
}

/* the node named [p, p+n), or -1; hint: the node to try first (the previous event's peer) */
static int find_node(const struct trace_set *set, const size_t *name_len, int hint,
                     const char *p, size_t n)
{
	if (hint >= 0 && name_len[hint] == n && !memcmp(set->nodes[hint].name, p, n))
		return hint;
	for (size_t j = 0; j < set->nnodes; j++)
		if (name_len[j] == n && !memcmp(set->nodes[j].name, p, n))
			return (int)j;
	return -1;
}

/* the parser's state while it reads the file of one node */
struct parser {
	struct trace_set *set;
	size_t ni;              /* the node being parsed */
	const size_t *name_len; /* every node's name length, for the peers */
	size_t cap;             /* events allocated */
	size_t lineno;
	int64_t prev;           /* time of the previous event */
	int hint;               /* peer of the previous event */
};

/* split at the first three commas; the time field is the rest, where a fourth comma (or a NUL
 * byte) shows up as a time that does not parse */
static int split_fields(const struct parser *p, const char *line, size_t ll, const char **f,
                        size_t *flen)
{
	const char *path = p->set->nodes[p->ni].path;
	size_t nf = 0;

	f[0] = line;
	for (size_t i = 0; i < ll && nf < 3; i++) {
		if (line[i] == ',') {
			flen[nf] = (size_t)(line + i - f[nf]);
			nf++;
			f[nf] = line + i + 1;
		} else if (!line[i]) {
			return err_set(HCLOCK_EINVAL, "%s: contains a NUL byte; not "
			               "a CSV text file", path);
		}
	}
	if (nf < 3)
		return err_set(HCLOCK_EINVAL, "%s:%zu: expected 4 fields "
		               "event,id,peer,time_ns, found fewer", path, p->lineno);
	flen[3] = (size_t)(line + ll - f[3]);
	return 0;
}

/* room for one more event, and its place in the file */
static int grow(struct parser *p)
{
	struct trace_node *node = &p->set->nodes[p->ni];
	struct csv_node *c = node->priv;
	size_t nc = p->cap ? 2 * p->cap : 1024;
	void *ne, *no, *np;

	if (node->nev < p->cap)
		return 0;
	ne = realloc(node->ev, nc * sizeof(*node->ev));
	no = ne ? realloc(c->off, nc * sizeof(*c->off)) : NULL;
	np = no ? realloc(c->prefix, nc * sizeof(*c->prefix)) : NULL;
	if (ne)
		node->ev = ne;
	if (no)
		c->off = no;
	if (!np)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", node->path);
	c->prefix = np;
	p->cap = nc;
	return 0;
}

/* the time field: an int64 ns, |t| < 2^62, not before the previous event's */
static int event_time(struct parser *p, struct trace_event *e, const char *f, size_t n)
{
	const char *path = p->set->nodes[p->ni].path;

	if (!parse_i64(f, n, &e->time_ns)) {
		if (memchr(f, ',', n))
			return err_set(HCLOCK_EINVAL, "%s:%zu: expected 4 fields "
			               "event,id,peer,time_ns, found more", path, p->lineno);
		return err_set(HCLOCK_EINVAL, "%s:%zu: time_ns '%.*s' is not an "
		               "int64 count of ns", path, p->lineno, (int)(n > 40 ? 40 : n), f);
	}
	if (e->time_ns >= TIME_LIMIT || e->time_ns <= -TIME_LIMIT)
		return err_set(HCLOCK_EINVAL, "%s:%zu: time_ns %" PRId64 " out of "
		               "range (|t| < 2^62)", path, p->lineno, e->time_ns);
	if (e->time_ns < p->prev)
		return err_set(HCLOCK_EINVAL, "%s:%zu: time_ns %" PRId64 " is "
		               "earlier than the previous event's %" PRId64 "; events must be in "
		               "time order", path, p->lineno, e->time_ns, p->prev);
	p->prev = e->time_ns;
	return 0;
}

/* the event name, id and peer fields; an unknown or self peer is kept for resolve() */
static int event_kind(struct parser *p, struct trace_event *e, const char *const *f,
                      const size_t *flen)
{
	struct trace_node *node = &p->set->nodes[p->ni];
	struct csv_node *c = node->priv;

	if (flen[0] == 4 && !memcmp(f[0], "send", 4))
		e->kind = TRACE_SEND;
	else if (flen[0] == 4 && !memcmp(f[0], "recv", 4))
		e->kind = TRACE_RECV;
	else if (flen[0] == 5 && !memcmp(f[0], "bcast", 5))
		e->kind = TRACE_BCAST;
	else if (flen[0])
		e->kind = TRACE_OTHER;
	else
		return err_set(HCLOCK_EINVAL, "%s:%zu: empty event name",
		               node->path, p->lineno);
	if (e->kind != TRACE_OTHER && !parse_u64(f[1], flen[1], &e->msg))
		return err_set(HCLOCK_EINVAL, "%s:%zu: id '%.*s' is not an "
		               "unsigned integer", node->path, p->lineno,
		               (int)(flen[1] > 40 ? 40 : flen[1]), f[1]);
	if (e->kind != TRACE_SEND && e->kind != TRACE_RECV)
		return 0;
	if (!flen[2])
		return err_set(HCLOCK_EINVAL, "%s:%zu: %s without a peer node",
		               node->path, p->lineno, e->kind == TRACE_SEND ? "send" : "recv");
	e->peer = p->hint = find_node(p->set, p->name_len, p->hint, f[2], flen[2]);
	if ((e->peer < 0 || (size_t)e->peer == p->ni) && c->bad_peer == NO_EVENT) {
		c->bad_peer = node->nev;
		c->bad_name = f[2];
		c->bad_len = flen[2];
	}
	return 0;
}

/* one event line of ll bytes (without its line end) */
static int parse_line(struct parser *p, const char *line, size_t ll)
{
	struct trace_node *node = &p->set->nodes[p->ni];
	struct csv_node *c = node->priv;
	const char *f[4];
	size_t flen[4];
	struct trace_event *e;
	int r;

	if ((r = split_fields(p, line, ll, f, flen)) || (r = grow(p)))
		return r;
	e = &node->ev[node->nev];
	memset(e, 0, sizeof(*e));
	e->peer = -1;
	e->record = node->nev;
	e->line = p->lineno > UINT32_MAX ? UINT32_MAX : (uint32_t)p->lineno;
	c->off[node->nev] = (size_t)(line - c->buf);
	c->prefix[node->nev] = (size_t)(f[3] - line);
	if ((r = event_time(p, e, f[3], flen[3])) || (r = event_kind(p, e, f, flen)))
		return r;
	node->nev++;
	return 0;
}

/*
 * Parse the file of node ni. Every node's name is known (name_len[] their lengths), so peers
 * are looked up here; the first unknown or self peer is kept in bad_peer and reported by
 * resolve() once every file has parsed, as an error of the whole set.
 */
static int parse(struct trace_set *set, size_t ni, const size_t *name_len)
{
	struct trace_node *node = &set->nodes[ni];
	struct csv_node *c = node->priv;
	struct parser p = {set, ni, name_len, 0, 0, INT64_MIN, -1};
	const char *end = c->buf + c->len, *nl;
	int r;

	c->bad_peer = NO_EVENT;
	for (const char *line = c->buf; line < end; line = nl ? nl + 1 : end) {
		size_t ll;

		nl = memchr(line, '\n', (size_t)(end - line));
		ll = (size_t)((nl ? nl : end) - line);
		p.lineno++;
		if (ll && line[ll - 1] == '\r')
			ll--;
		if (p.lineno == 1) {
			if (ll != strlen(CSV_HEADER) || memcmp(line, CSV_HEADER, ll))
				return err_set(HCLOCK_EINVAL, "%s:1: expected the header "
				               "line '%s'", node->path, CSV_HEADER);
			continue;
		}
		if (ll && (r = parse_line(&p, line, ll)))
			return r;
	}
	if (p.lineno == 0)
		return err_set(HCLOCK_EINVAL, "%s:1: empty file; expected the header "
		               "line '%s'", node->path, CSV_HEADER);
	return 0;
}

/* ids that count up within each (kind, peer), as most tracers number messages, cannot
 * repeat; one pass finds out, sparing the hash table of dup_check */
static int ids_increase(const struct trace_set *set, const struct trace_node *node)
{
	size_t nclass = 3 * (set->nnodes + 1);
	uint64_t *last = malloc(nclass * sizeof(*last));
	unsigned char *seen = calloc(nclass, 1);
	int up = last && seen;

	for (size_t k = 0; up && k < node->nev; k++) {
		const struct trace_event *e = &node->ev[k];
		size_t cl; /* class (kind, peer); bcasts have peer -1 */
		if (e->kind == TRACE_OTHER)
			continue;
		cl = (size_t)e->kind * (set->nnodes + 1) + (size_t)(e->peer + 1);
		if (seen[cl] && e->msg <= last[cl])
			up = 0;
		seen[cl] = 1;
		last[cl] = e->msg;
	}
	free(last);
	free(seen);
	return up;
}

/* the peer errors found while parsing, then duplicate ids */
static int resolve(struct trace_set *set, size_t ni)
{
	struct trace_node *node = &set->nodes[ni];
	struct csv_node *c = node->priv;

	if (c->bad_peer != NO_EVENT) {
		const struct trace_event *e = &node->ev[c->bad_peer];
		int n = (int)(c->bad_len > 40 ? 40 : c->bad_len);
		if (e->peer < 0)
			return err_set(HCLOCK_EINVAL, "%s:%u: peer '%.*s' is not one of the input nodes "
			         "(a peer is another input's file name without .csv)",
			         node->path, e->line, n, c->bad_name);
		return err_set(HCLOCK_EINVAL, "%s:%u: peer '%.*s' is this node itself", node->path,
		         e->line, n, c->bad_name);
	}
	if (ids_increase(set, node))
		return 0;
	return dup_check(node);
}

/* every node's name and path, before any file is read: the peers refer to them */
static int make_nodes(const char *const *paths, size_t npaths, struct trace_set *set,
                      size_t *name_len)
{
	for (size_t i = 0; i < npaths; i++) {
		struct trace_node *n = &set->nodes[i];
		set->nnodes++;
		n->path = strdup(paths[i]);
		n->name = node_name(paths[i]);
		n->priv = calloc(1, sizeof(struct csv_node));
		if (!n->path || !n->name || !n->priv)
			return err_set(HCLOCK_ENOMEM, "out of memory");
		name_len[i] = strlen(n->name);
	}
	return 0;
}

/* node i: a good name, read whole (slurp.h), parsed */
static int read_node(struct trace_set *set, size_t i, const size_t *name_len)
{
	struct trace_node *n = &set->nodes[i];
	struct csv_node *c = n->priv;
	int r;

	if (!*n->name)
		return err_set(HCLOCK_EINVAL, "%s: empty node name; name the file "
		               "NODE.csv", n->path);
	for (size_t j = 0; j < i; j++)
		if (!strcmp(set->nodes[j].name, n->name))
			return err_set(HCLOCK_EINVAL, "%s: node '%s' already read from %s",
			               n->path, n->name, set->nodes[j].path);
	if ((r = slurp_file(n->path, &c->buf, &c->len)))
		return r;
	/* a NUL byte anywhere is what to report about a file, before anything else: parse finds
	 * those in fields it keeps, the search here any other */
	if ((r = parse(set, i, name_len)) && memchr(c->buf, 0, c->len))
		r = err_set(HCLOCK_EINVAL, "%s: contains a NUL byte; not a CSV text "
		            "file", n->path);
	return r;
}

static int read_csv(const char *const *paths, size_t npaths, struct trace_set *set)
{
	size_t *name_len = calloc(npaths ? npaths : 1, sizeof(*name_len));
	int r = 0;

	set->fmt = &trace_format_csv;
	set->nodes = calloc(npaths ? npaths : 1, sizeof(*set->nodes));
	if (!set->nodes || !name_len)
		r = err_set(HCLOCK_ENOMEM, "out of memory");
	if (!r)
		r = make_nodes(paths, npaths, set, name_len);
	for (size_t i = 0; !r && i < npaths; i++)
		r = read_node(set, i, name_len);
	for (size_t i = 0; !r && i < set->nnodes; i++)
		r = resolve(set, i);
	free(name_len);
	if (r)
		release(set);
	return r;
}

/* node i's corrected trace, complete, as file i of o (OUTDIR/NAME.csv under a temporary name) */
static int write_node(const struct trace_set *set, size_t i, trace_convert_fn conv, void *ctx,
                      const char *outdir, struct outbuf *ob, struct outset *o)
{
	const struct trace_node *n = &set->nodes[i];
	const struct csv_node *c = n->priv;
	size_t nl = strlen(n->name) + sizeof(".csv");
	char *name = malloc(nl);
	FILE *f;
	int r;

	if (!name)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	snprintf(name, nl, "%s.csv", n->name);
	r = outset_create(o, i, outdir, name, &f);
	free(name);
	if (r)
		return r;
	outbuf_init(ob, f);
	outbuf_put(ob, CSV_HEADER "\n", strlen(CSV_HEADER "\n"));
	for (size_t k = 0; k < n->nev; k++) {
		const struct trace_event *e = &n->ev[k];
		outbuf_put(ob, c->buf + c->off[e->record], c->prefix[e->record]);
		outbuf_i64(ob, conv(ctx, i, e->time_ns));
		outbuf_put(ob, "\n", 1);
	}
	if (outbuf_flush(ob) | fclose(f))
		return err_set(HCLOCK_EIO, "%s: write error", o->f[i].tmp);
	return 0;
}

static int write_csv(const struct trace_set *set, trace_convert_fn conv, void *ctx,
                     const char *outdir)
{
	struct outbuf *ob = malloc(sizeof(*ob));
	struct outset o;
	int r = ob ? outset_init(&o, set->nnodes) : err_set(HCLOCK_ENOMEM, "out of memory");

	if (!ob)
		return r;
	/* every file complete under a temporary name first, then all renamed */
	for (size_t i = 0; !r && i < set->nnodes; i++)
		r = write_node(set, i, conv, ctx, outdir, ob, &o);
	if (!r)
		r = outset_commit(&o);
	outset_free(&o);
	free(ob);
	return r;
}

const struct trace_format trace_format_csv = {
	.name = "csv",
	.usage = "NODE.csv per node, lines event,id,peer,time_ns",
	.probe = probe,
	.read = read_csv,
	.write = write_csv,
	.release = release,
};
