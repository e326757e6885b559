/*
 * reader_raw.c - the tracer's raw files (DIR/raw/rank.N of `hclock trace`, util/record.h) as a
 * trace format: each file is a node named after it (rank.N), aligned from its records' local
 * times (t_l), so that align recomputes from scratch what the tracer's global clock did online.
 *
 * Messages: a send or receive record names its peer by world rank, its communicator and tag.
 * MPI's non-overtaking rule makes the n-th send of a channel (source, destination,
 * communicator, tag) the n-th receive of it (sends in the order they started, receives in the
 * order they completed, as the tracer records them and trace/merge.c pairs them), so the
 * message key is the channel's number times its order: keys are dense, counted over the
 * channels in (source, destination, communicator, tag) order. The records of a channel past
 * the shorter side (a program that died, a filtered call), to a rank whose file is not among
 * the inputs, or with no peer (-1, -2: intercommunicators) are carried as TRACE_OTHER and
 * counted in one warning; so are a process's messages to itself. Every other record (calls,
 * collectives) is TRACE_OTHER at its start; REC_DROP markers and REC_BOUND samples are no
 * events.
 *
 * Output: OUTDIR/rank.N, the input byte for byte but for the global times: t_g and t2_g of
 * every event record become the converted t_l and t2_l (the aligned clock replaces the
 * tracer's), so `hclock trace --convert` and `hclock gantt` draw the aligned trace from
 * OUTDIR (given as DIR/raw); the tracer's clock bounds (messages' t2_g, REC_BOUND samples)
 * are zeroed: not known for the aligned clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "align/format.h"
#include "align/outset.h"
#include "align/slurp.h"
#include "align/trace.h"
#include "util/msgmatch.h"
#include "util/record.h"

extern const struct trace_format trace_format_raw; /* defined at the end */

struct raw_node {
	char *buf;          /* the whole file as read (slurp.h) */
	struct rec_file f;  /* its records located in buf */
};

static int raw_probe(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY), ok;

	if (fd < 0)
		return 0;
	ok = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, REC_MAGIC, sizeof(magic));
	close(fd);
	return ok;
}

static void raw_release(struct trace_set *set)
{
	for (size_t i = 0; i < set->nnodes; i++) {
		struct raw_node *rn = set->nodes[i].priv;
		if (rn) {
			rec_file_free(&rn->f);
			free(rn->buf);
			free(rn);
		}
		free(set->nodes[i].name);
		free(set->nodes[i].path);
		free(set->nodes[i].ev);
	}
	free(set->nodes);
	set->nodes = NULL;
	set->nnodes = 0;
}

/* file i, read and located; its name is the file's */
static int read_file(struct trace_set *set, size_t i, const char *path)
{
	struct trace_node *n = &set->nodes[i];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct raw_node *rn = calloc(1, sizeof(*rn));
	size_t len;
	int r;

	n->priv = rn;
	n->path = strdup(path);
	n->name = strdup(base);
	if (!rn || !n->path || !n->name)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	if ((r = slurp_file(path, &rn->buf, &len)) || (r = rec_parse(path, rn->buf, len, &rn->f)))
		return r;
	if (rn->f.end == REC_END_BAD) {
		size_t at = rn->f.first + rn->f.nrec * sizeof(struct rec);
		return err_set(HCLOCK_EINVAL, "%s:%zu: record at byte %zu has kind %u, none of the "
		               "tracer's (%d-%d); a corrupt file", path, rn->f.nrec + 1, at,
		               (unsigned)(unsigned char)rn->buf[at], REC_CALL, REC_KIND_MAX);
	}
	if (rn->f.end == REC_END_CUT)
		trace_warn(set, "%s: ends in a partial record (the program was killed?); read up "
		           "to record %zu", path, rn->f.nrec);
	return 0;
}

/* every file of one run, each rank once: node[rank] (-1: no file) */
static int rank_nodes(const struct trace_set *set, int64_t **node)
{
	const struct raw_node *r0 = set->nodes[0].priv;
	int32_t size = r0->f.h.size;

	*node = malloc((size_t)size * sizeof(**node));
	if (!*node)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	for (int32_t k = 0; k < size; k++)
		(*node)[k] = -1;
	for (size_t i = 0; i < set->nnodes; i++) {
		const struct rec_header *h = &((const struct raw_node *)set->nodes[i].priv)->f.h;
		if (h->size != size)
			return err_set(HCLOCK_EINVAL, "%s: from a run of %d processes, %s from one of %d; "
			               "give the files of one run", set->nodes[i].path, (int)h->size,
			               set->nodes[0].path, (int)size);
		if ((*node)[h->rank] >= 0)
			return err_set(HCLOCK_EINVAL, "%s and %s are both rank %d; give the files of one "
			               "run", set->nodes[(*node)[h->rank]].path, set->nodes[i].path,
			               (int)h->rank);
		(*node)[h->rank] = (int64_t)i;
	}
	return 0;
}

#define DROP_MARK ((size_t)-1) /* trace_event.record of a REC_DROP marker, removed later */

/* every node's events in record order (ev[k] is record k; REC_DROP markers DROP_MARK), and the message records with a partner among the inputs into *ce */
static int make_events(struct trace_set *set, const int64_t *node, struct msgmatch_end **ce,
                       size_t *nce, size_t *lone)
{
	size_t total = 0;

	for (size_t i = 0; i < set->nnodes; i++)
		total += ((struct raw_node *)set->nodes[i].priv)->f.nrec;
	*ce = malloc((total ? total : 1) * sizeof(**ce));
	if (!*ce)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	*nce = *lone = 0;
	for (size_t i = 0; i < set->nnodes; i++) {
		struct trace_node *n = &set->nodes[i];
		const struct rec_file *f = &((struct raw_node *)n->priv)->f;
		if (!(n->ev = calloc(f->nrec ? f->nrec : 1, sizeof(*n->ev))))
			return err_set(HCLOCK_ENOMEM, "out of memory");
		n->nev = f->nrec;
		for (size_t k = 0; k < f->nrec; k++) {
			struct rec x = rec_get(f, k);
			struct trace_event *e = &n->ev[k];
			int msg = x.kind == REC_SEND || x.kind == REC_RECV;
			*e = (struct trace_event){x.t_l, TRACE_OTHER, 0, -1, k, (uint32_t)(k + 1)};
			if (x.kind == REC_DROP || x.kind == REC_BOUND)
				e->record = DROP_MARK;
			if (!msg || x.peer == f->h.rank)
				continue;
			if (x.peer < 0 || x.peer >= f->h.size || node[x.peer] < 0) {
				(*lone)++;
				continue;
			}
			int s = x.kind == REC_SEND;
			/* whose record (who), and which: the order within a channel */
			(*ce)[(*nce)++] = (struct msgmatch_end){.src = s ? f->h.rank : x.peer,
			                                        .dst = s ? x.peer : f->h.rank,
			                                        .comm = x.comm, .tag = x.tag,
			                                        .order = k, .recv = !s, .who = i};
		}
	}
	return 0;
}

/* the n-th send and the n-th receive of a channel (util/msgmatch.h): one message key */
struct numbering {
	struct trace_set *set;
	const int64_t *node;
	uint64_t key;
};

static int number_pair(void *ctx, const struct msgmatch_end *se, const struct msgmatch_end *re)
{
	struct numbering *nb = ctx;
	struct trace_event *s = &nb->set->nodes[se->who].ev[se->order];
	struct trace_event *r = &nb->set->nodes[re->who].ev[re->order];
	*s = (struct trace_event){s->time_ns, TRACE_SEND, nb->key, (int)nb->node[se->dst],
	                          s->record, s->line};
	*r = (struct trace_event){r->time_ns, TRACE_RECV, nb->key, (int)nb->node[se->src],
	                          r->record, r->line};
	nb->key++;
	return 0;
}

static void number_messages(struct trace_set *set, const int64_t *node,
                            struct msgmatch_end *ce, size_t nce, size_t *lone)
{
	struct numbering nb = {set, node, 0};
	size_t left = 0;
	msgmatch(ce, nce, number_pair, NULL, &nb, &left);
	*lone += left;
}

static int cmp_event(const void *a, const void *b)
{
	const struct trace_event *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->record < y->record ? -1 : x->record > y->record;
}

/* without the REC_DROP markers, in time order (a call's record follows the message records
 * it made, its time is its start) */
static void sort_events(struct trace_set *set)
{
	for (size_t i = 0; i < set->nnodes; i++) {
		struct trace_node *n = &set->nodes[i];
		size_t m = 0;
		for (size_t k = 0; k < n->nev; k++)
			if (n->ev[k].record != DROP_MARK)
				n->ev[m++] = n->ev[k];
		n->nev = m;
		qsort(n->ev, n->nev, sizeof(*n->ev), cmp_event);
	}
}

static int raw_read(const char *const *paths, size_t npaths, struct trace_set *set)
{
	struct msgmatch_end *ce = NULL;
	int64_t *node = NULL;
	size_t nce = 0, lone = 0;
	int r = 0;

	set->fmt = &trace_format_raw;
	if (!npaths)
		return err_set(HCLOCK_EINVAL, "no raw trace files given");
	set->nodes = calloc(npaths, sizeof(*set->nodes));
	if (!set->nodes)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	set->nnodes = npaths;
	for (size_t i = 0; !r && i < npaths; i++)
		r = read_file(set, i, paths[i]);
	if (r || (r = rank_nodes(set, &node)) || (r = make_events(set, node, &ce, &nce, &lone)))
		goto err;
	number_messages(set, node, ce, nce, &lone);
	sort_events(set);
	if (lone)
		trace_warn(set, "%zu message records have no partner among the inputs (a program that "
		           "died, a filtered call, a rank whose file is not given, an "
		           "intercommunicator): not used", lone);
	free(ce);
	free(node);
	return 0;
err:
	free(ce);
	free(node);
	raw_release(set);
	return r;
}

/* node i's file with its global times replaced by the converted local ones */
static int write_node(const struct trace_set *set, size_t i, trace_convert_fn conv, void *ctx,
                      FILE *out, const char *tmp)
{
	const struct trace_node *n = &set->nodes[i];
	const struct raw_node *rn = n->priv;
	const struct rec_file *f = &rn->f;
	char *copy = malloc(f->len ? f->len : 1);
	int bad;

	if (!copy)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	memcpy(copy, rn->buf, f->len);
	/* the tracer's clock bounds say nothing of the aligned clock: marked unknown */
	for (size_t k = 0; k < f->nrec; k++) {
		size_t at = f->first + k * sizeof(struct rec);
		struct rec x;
		memcpy(&x, copy + at, sizeof(x));
		if (x.kind == REC_SEND || x.kind == REC_RECV || x.kind == REC_BOUND) {
			x.t2_g = x.t2_l = 0;
			if (x.kind == REC_BOUND)
				x.t_g = 0;
			memcpy(copy + at, &x, sizeof(x));
		}
	}
	for (size_t k = 0; k < n->nev; k++) {
		size_t at = f->first + n->ev[k].record * sizeof(struct rec);
		struct rec x;
		memcpy(&x, copy + at, sizeof(x));
		x.t_g = conv(ctx, i, x.t_l);
		if (x.kind == REC_CALL || x.kind == REC_COLL)
			x.t2_g = conv(ctx, i, x.t2_l);
		memcpy(copy + at, &x, sizeof(x));
	}
	bad = fwrite(copy, 1, f->len, out) != f->len;
	free(copy);
	if (bad | ferror(out))
		return err_set(HCLOCK_EIO, "%s: write error", tmp);
	return 0;
}

static int raw_write(const struct trace_set *set, trace_convert_fn conv, void *ctx,
                     const char *outdir)
{
	struct outset o;
	int r = outset_init(&o, set->nnodes);

	for (size_t i = 0; !r && i < set->nnodes; i++) {
		FILE *f;
		if ((r = outset_create(&o, i, outdir, set->nodes[i].name, &f)))
			break;
		r = write_node(set, i, conv, ctx, f, o.f[i].tmp);
		if (fclose(f) && !r)
			r = err_set(HCLOCK_EIO, "%s: write error", o.f[i].tmp);
	}
	if (!r)
		r = outset_commit(&o);
	outset_free(&o);
	return r;
}

const struct trace_format trace_format_raw = {
	.name = "raw",
	.usage = "rank.N per process of hclock trace (DIR/raw), by local times",
	.probe = raw_probe,
	.read = raw_read,
	.write = raw_write,
	.release = raw_release,
};
