/*
 * reader_csv.c - the native trace format: one CSV file per node, named NODE.csv, with the
 * header line "event,id,peer,time_ns" and one event per line:
 *   send,ID,PEER,T   a message to node PEER; recv,ID,PEER,T  the message ID from PEER
 *   bcast,ID,,T      one broadcast, same ID on every node (evaluation only)
 *   NAME,ANY,ANY,T   any other event, carried through and converted
 * ID is an unsigned decimal integer, T int64 ns in time order. The writer keeps every line
 * byte for byte up to the last comma and replaces the time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "align/trace.h"

#define CSV_HEADER "event,id,peer,time_ns"
#define TIME_LIMIT (INT64_C(1) << 62) /* keeps every difference of two times in an int64 */

struct csv_node {
	char *buf;         /* the whole file */
	size_t *off;       /* per record: start of its line in buf */
	size_t *prefix;    /* per record: length up to and including the last comma */
	char **peer_name;  /* per record during read: peer field (points into a copy), then NULL */
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int probe(const char *path)
{
	size_t n = strlen(path);
	struct stat st;

	return n > 4 && !strcmp(path + n - 4, ".csv") && !stat(path, &st) && S_ISREG(st.st_mode);
}

static int read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, r;
	char *b = NULL, *nb;

	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	for (;;) {
		nb = realloc(b, cap + 1);
		if (!nb) {
			free(b);
			fclose(f);
			return (fail(err, errlen, "%s: out of memory", path), -ENOMEM);
		}
		b = nb;
		r = fread(b + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		cap *= 2;
	}
	if (ferror(f)) {
		free(b);
		fclose(f);
		return fail(err, errlen, "%s: read error", path);
	}
	fclose(f);
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
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

/* copy field [p, p+n) to a NUL-terminated buffer of size cap; 0 if it did not fit */
static int field(char *dst, size_t cap, const char *p, size_t n)
{
	if (n >= cap)
		return 0;
	memcpy(dst, p, n);
	dst[n] = 0;
	return 1;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;

	if (!*s || !((*s >= '0' && *s <= '9') || *s == '-'))
		return 0;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && !*end;
}

struct dupkey {
	int kind;
	int peer;
	uint64_t msg;
	size_t ev;
};

static int cmp_dup(const void *a, const void *b)
{
	const struct dupkey *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	if (x->msg != y->msg)
		return x->msg < y->msg ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
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
			free(c->peer_name);
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

/* parse one file into node (peers kept as names until every node is known) */
static int parse(struct trace_node *node, char *err, size_t errlen)
{
	struct csv_node *c = node->priv;
	char *b = c->buf, *end;
	size_t len = strlen(b), cap = 0, lineno = 0, p = 0;
	int64_t prev = INT64_MIN;

	end = b + len;
	while (p < len) {
		char *line = b + p, *nl = memchr(line, '\n', len - p), *f[4], fb[4][40];
		size_t ll = nl ? (size_t)(nl - line) : (size_t)(end - line), nf = 0, flen[4];
		struct trace_event *e;

		lineno++;
		p += ll + (nl != NULL);
		if (ll && line[ll - 1] == '\r')
			ll--;
		if (lineno == 1) {
			if (ll != strlen(CSV_HEADER) || memcmp(line, CSV_HEADER, ll))
				return fail(err, errlen, "%s:1: expected the header line '%s'",
				            node->path, CSV_HEADER);
			continue;
		}
		if (!ll)
			continue;
		/* split into exactly 4 fields */
		f[0] = line;
		for (size_t i = 0; i < ll; i++) {
			if (line[i] == ',') {
				if (nf == 3) {
					nf = 4;
					break;
				}
				flen[nf] = (size_t)(line + i - f[nf]);
				nf++;
				f[nf] = line + i + 1;
			}
		}
		if (nf != 3)
			return fail(err, errlen, "%s:%zu: expected 4 fields event,id,peer,time_ns, "
			            "found %s", node->path, lineno, nf < 3 ? "fewer" : "more");
		flen[3] = (size_t)(line + ll - f[3]);
		if (node->nev == cap) {
			size_t nc = cap ? 2 * cap : 1024;
			void *ne = realloc(node->ev, nc * sizeof(*node->ev));
			void *no = ne ? realloc(c->off, nc * sizeof(*c->off)) : NULL;
			void *np = no ? realloc(c->prefix, nc * sizeof(*c->prefix)) : NULL;
			void *nn = np ? realloc(c->peer_name, nc * sizeof(*c->peer_name)) : NULL;
			if (ne)
				node->ev = ne;
			if (no)
				c->off = no;
			if (np)
				c->prefix = np;
			if (!nn)
				return (fail(err, errlen, "%s: out of memory", node->path), -ENOMEM);
			c->peer_name = nn;
			cap = nc;
		}
		e = &node->ev[node->nev];
		memset(e, 0, sizeof(*e));
		e->peer = -1;
		e->record = node->nev;
		e->line = lineno > UINT32_MAX ? UINT32_MAX : (uint32_t)lineno;
		c->off[node->nev] = (size_t)(line - b);
		c->prefix[node->nev] = (size_t)(f[3] - line);
		c->peer_name[node->nev] = NULL;

		if (!field(fb[3], sizeof(fb[3]), f[3], flen[3]) || !parse_i64(fb[3], &e->time_ns))
			return fail(err, errlen, "%s:%zu: time_ns '%.*s' is not an int64 count of ns",
			            node->path, lineno, (int)(flen[3] > 40 ? 40 : flen[3]), f[3]);
		if (e->time_ns >= TIME_LIMIT || e->time_ns <= -TIME_LIMIT)
			return fail(err, errlen, "%s:%zu: time_ns %" PRId64 " out of range (|t| < 2^62)",
			            node->path, lineno, e->time_ns);
		if (e->time_ns < prev)
			return fail(err, errlen, "%s:%zu: time_ns %" PRId64 " is earlier than the "
			            "previous event's %" PRId64 "; events must be in time order",
			            node->path, lineno, e->time_ns, prev);
		prev = e->time_ns;

		if (flen[0] == 4 && !memcmp(f[0], "send", 4))
			e->kind = TRACE_SEND;
		else if (flen[0] == 4 && !memcmp(f[0], "recv", 4))
			e->kind = TRACE_RECV;
		else if (flen[0] == 5 && !memcmp(f[0], "bcast", 5))
			e->kind = TRACE_BCAST;
		else if (flen[0])
			e->kind = TRACE_OTHER;
		else
			return fail(err, errlen, "%s:%zu: empty event name", node->path, lineno);
		if (e->kind != TRACE_OTHER &&
		    (!field(fb[1], sizeof(fb[1]), f[1], flen[1]) || !parse_u64(fb[1], &e->msg)))
			return fail(err, errlen, "%s:%zu: id '%.*s' is not an unsigned integer",
			            node->path, lineno, (int)(flen[1] > 40 ? 40 : flen[1]), f[1]);
		if (e->kind == TRACE_SEND || e->kind == TRACE_RECV) {
			if (!flen[2])
				return fail(err, errlen, "%s:%zu: %s without a peer node", node->path,
				            lineno, e->kind == TRACE_SEND ? "send" : "recv");
			f[2][flen[2]] = 0; /* the comma after it; prefix[] keeps the length */
			c->peer_name[node->nev] = f[2];
		}
		node->nev++;
	}
	if (lineno == 0)
		return fail(err, errlen, "%s:1: empty file; expected the header line '%s'",
		            node->path, CSV_HEADER);
	return 0;
}

static int resolve(struct trace_set *set, size_t ni, char *err, size_t errlen)
{
	struct trace_node *node = &set->nodes[ni];
	struct csv_node *c = node->priv;
	struct dupkey *d;
	size_t nd = 0;

	for (size_t i = 0; i < node->nev; i++) {
		struct trace_event *e = &node->ev[i];
		const char *pn = c->peer_name[i];
		if (!pn)
			continue;
		for (size_t j = 0; j < set->nnodes; j++)
			if (!strcmp(set->nodes[j].name, pn)) {
				e->peer = (int)j;
				break;
			}
		if (e->peer < 0)
			return fail(err, errlen, "%s:%u: peer '%.40s' is not one of the input nodes "
			            "(a peer is another input's file name without .csv)",
			            node->path, e->line, pn);
		if ((size_t)e->peer == ni)
			return fail(err, errlen, "%s:%u: peer '%.40s' is this node itself", node->path,
			            e->line, pn);
	}
	d = malloc((node->nev ? node->nev : 1) * sizeof(*d));
	if (!d)
		return (fail(err, errlen, "%s: out of memory", node->path), -ENOMEM);
	for (size_t i = 0; i < node->nev; i++)
		if (node->ev[i].kind != TRACE_OTHER)
			d[nd++] = (struct dupkey){node->ev[i].kind, node->ev[i].peer, node->ev[i].msg, i};
	qsort(d, nd, sizeof(*d), cmp_dup);
	for (size_t i = 1; i < nd; i++)
		if (d[i].kind == d[i - 1].kind && d[i].peer == d[i - 1].peer &&
		    d[i].msg == d[i - 1].msg) {
			const struct trace_event *e = &node->ev[d[i].ev];
			int r = fail(err, errlen, "%s:%u: duplicate id %" PRIu64 " (first at line %u); "
			             "each message id appears once per direction and peer",
			             node->path, e->line, e->msg, node->ev[d[i - 1].ev].line);
			free(d);
			return r;
		}
	free(d);
	return 0;
}

static int read_csv(const char *const *paths, size_t npaths, struct trace_set *set, char *err,
                    size_t errlen)
{
	int r;

	set->fmt = &trace_format_csv;
	set->nodes = calloc(npaths ? npaths : 1, sizeof(*set->nodes));
	if (!set->nodes)
		return (fail(err, errlen, "out of memory"), -ENOMEM);
	for (size_t i = 0; i < npaths; i++) {
		struct trace_node *n = &set->nodes[i];
		struct csv_node *c;
		size_t len = 0;

		set->nnodes++;
		n->path = strdup(paths[i]);
		n->name = node_name(paths[i]);
		n->priv = c = calloc(1, sizeof(*c));
		if (!n->path || !n->name || !c) {
			r = (fail(err, errlen, "out of memory"), -ENOMEM);
			goto err;
		}
		if (!*n->name) {
			r = fail(err, errlen, "%s: empty node name; name the file NODE.csv", paths[i]);
			goto err;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(set->nodes[j].name, n->name)) {
				r = fail(err, errlen, "%s: node '%s' already read from %s", paths[i],
				         n->name, set->nodes[j].path);
				goto err;
			}
		if ((r = read_file(paths[i], &c->buf, &len, err, errlen)))
			goto err;
		if (memchr(c->buf, 0, len)) {
			r = fail(err, errlen, "%s: contains a NUL byte; not a CSV text file", paths[i]);
			goto err;
		}
		if ((r = parse(n, err, errlen)))
			goto err;
	}
	for (size_t i = 0; i < set->nnodes; i++)
		if ((r = resolve(set, i, err, errlen)))
			goto err;
	for (size_t i = 0; i < set->nnodes; i++) {
		struct csv_node *c = set->nodes[i].priv;
		for (size_t k = 0; k < set->nodes[i].nev; k++)
			if (c->peer_name[k])
				c->peer_name[k][strlen(c->peer_name[k])] = ',';
		free(c->peer_name);
		c->peer_name = NULL;
	}
	return 0;
err:
	release(set);
	return r;
}

struct tmpout {
	char *tmp, *dst;
};

static int write_csv(const struct trace_set *set, trace_convert_fn conv, void *ctx,
                     const char *outdir, char *err, size_t errlen)
{
	struct tmpout *t = calloc(set->nnodes ? set->nnodes : 1, sizeof(*t));
	size_t i;
	int r = 0;

	if (!t)
		return (fail(err, errlen, "out of memory"), -ENOMEM);
	if (mkdir(outdir, 0777) && errno != EEXIST) {
		free(t);
		return fail(err, errlen, "%s: cannot create output directory: %s", outdir,
		            strerror(errno));
	}
	/* every file complete under a temporary name first, then all renamed */
	for (i = 0; i < set->nnodes; i++) {
		const struct trace_node *n = &set->nodes[i];
		const struct csv_node *c = n->priv;
		size_t dl = strlen(outdir) + strlen(n->name) + 32;
		char *tmp;
		FILE *f;
		int fd;

		t[i].dst = malloc(dl);
		tmp = malloc(dl);
		if (!t[i].dst || !tmp) {
			free(tmp);
			r = (fail(err, errlen, "out of memory"), -ENOMEM);
			goto out;
		}
		snprintf(t[i].dst, dl, "%s/%s.csv", outdir, n->name);
		snprintf(tmp, dl, "%s/.%s.csv.XXXXXX", outdir, n->name);
		fd = mkstemp(tmp);
		if (fd < 0) {
			r = fail(err, errlen, "%s: cannot create a file there: %s", outdir,
			         strerror(errno));
			free(tmp);
			goto out;
		}
		t[i].tmp = tmp;
		f = fdopen(fd, "w");
		if (!f) {
			close(fd);
			r = fail(err, errlen, "%s: %s", tmp, strerror(errno));
			goto out;
		}
		fputs(CSV_HEADER "\n", f);
		for (size_t k = 0; k < n->nev; k++) {
			const struct trace_event *e = &n->ev[k];
			fwrite(c->buf + c->off[e->record], 1, c->prefix[e->record], f);
			fprintf(f, "%" PRId64 "\n", conv(ctx, i, e->time_ns));
		}
		if (ferror(f) | fclose(f)) {
			r = fail(err, errlen, "%s: write error", tmp);
			goto out;
		}
	}
	for (i = 0; i < set->nnodes; i++) {
		if (rename(t[i].tmp, t[i].dst)) {
			r = fail(err, errlen, "%s: cannot rename to %s: %s", t[i].tmp, t[i].dst,
			         strerror(errno));
			goto out;
		}
		free(t[i].tmp);
		t[i].tmp = NULL;
	}
out:
	for (i = 0; i < set->nnodes; i++) {
		if (t[i].tmp)
			unlink(t[i].tmp);
		free(t[i].tmp);
		free(t[i].dst);
	}
	free(t);
	return r;
}

const struct trace_format trace_format_csv = {
	.name = "csv",
	.probe = probe,
	.read = read_csv,
	.write = write_csv,
	.release = release,
};
