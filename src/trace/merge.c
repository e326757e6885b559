/* merge.c - the tracer's raw files read back, messages paired, Perfetto JSON (merge.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hclock_api.h"
#include "trace/merge.h"
#include "util/err.h"
#include "util/msgmatch.h"

/* A file cut short (SIGKILL: the buffer being filled is lost) can end in a message record
 * whose call's record was in the lost part (a call's record follows the message records it
 * makes). Each trailing run of such records of one function gets a call record from the
 * first to the last of them, marked cut, so that every message lies inside its call. */
static void close_cut_calls(struct rec_proc *p)
{
	size_t i = p->nrec;
	while (i > 0 && (p->rec[i - 1].kind == REC_SEND || p->rec[i - 1].kind == REC_RECV))
		i--;
	if (i == p->nrec)
		return;
	size_t extra = p->nrec - i;
	struct rec *r = realloc(p->rec, (p->nrec + extra) * sizeof(*r));
	if (!r)
		return;
	p->rec = r;
	size_t n = p->nrec;
	for (size_t a = i; a < n;) {
		size_t b = a;
		while (b + 1 < n && r[b + 1].func == r[a].func)
			b++;
		r[p->nrec++] = (struct rec){.kind = REC_CALL, .flags = REC_F_CUT, .func = r[a].func,
		                            .peer = -1, .t_g = r[a].t_g, .t_l = r[a].t_l,
		                            .t2_g = r[b].t_g, .t2_l = r[b].t_l};
		a = b + 1;
	}
}

/* the whole file at path into *buf (malloc'd), *len bytes; 0 or HCLOCK_EIO/ENOMEM */
static int read_whole(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	int r = HCLOCK_EIO;

	*buf = NULL;
	if (!f)
		return r;
	if (fstat(fileno(f), &sb) || sb.st_size < 0)
		goto out;
	r = HCLOCK_ENOMEM;
	if (!(*buf = malloc((size_t)sb.st_size + 1)))
		goto out;
	*len = fread(*buf, 1, (size_t)sb.st_size, f);
	r = 0;
out:
	fclose(f);
	return r;
}

/* rank file f into p: its names copied, its records but REC_DROP (counted) and REC_BOUND
 * (apart) */
static int load_records(const struct rec_file *f, struct rec_proc *p)
{
	char *nb = malloc(f->h.names_bytes + 1);

	p->h = f->h;
	p->file_bytes = f->len;
	p->names = calloc(f->h.nfuncs ? f->h.nfuncs : 1, sizeof(char *));
	p->rec = malloc((f->nrec ? f->nrec : 1) * sizeof(struct rec));
	size_t nb_bound = 0;
	for (size_t i = 0; i < f->nrec; i++)
		nb_bound += (unsigned char)f->buf[f->first + i * sizeof(struct rec)] == REC_BOUND;
	p->bound = malloc((nb_bound ? nb_bound : 1) * sizeof(struct rec));
	if (!nb || !p->names || !p->rec || !p->bound) {
		free(nb);
		return HCLOCK_ENOMEM;
	}
	memcpy(nb, f->buf + sizeof(f->h), f->h.names_bytes);
	nb[f->h.names_bytes] = 0;
	for (uint32_t i = 0; i < f->h.nfuncs; i++)
		p->names[i] = nb + (f->names[i] - (f->buf + sizeof(f->h)));
	if (!p->names[0])
		p->names[0] = nb;
	for (size_t i = 0; i < f->nrec; i++) {
		struct rec r = rec_get(f, i);
		if (r.kind == REC_DROP)
			p->dropped += r.bytes;
		else if (r.kind == REC_BOUND && (r.t2_g || r.t2_l))
			p->bound[p->nbound++] = r;
		else if (r.kind != REC_BOUND)
			p->rec[p->nrec++] = r;
	}
	p->have_trailer = f->end == REC_END_TRAILER;
	if (p->have_trailer) {
		p->tr = f->tr;
		p->dropped = p->tr.dropped;
	}
	return 0;
}

static void proc_free(struct rec_proc *p)
{
	if (p->names)
		free(p->names[0]);
	free(p->names);
	free(p->rec);
	free(p->bound);
	memset(p, 0, sizeof(*p));
}

/* rank r's file; a file that cannot be read or is not rank r's leaves p empty */
static int load_one(const char *path, int rank, struct rec_proc *p)
{
	struct rec_file f;
	char *buf;
	size_t len;
	int r;

	memset(p, 0, sizeof(*p));
	if ((r = read_whole(path, &buf, &len)))
		return r;
	if (!(r = rec_parse(path, buf, len, &f)) && f.h.rank != rank)
		r = HCLOCK_EINVAL;
	if (!r)
		r = load_records(&f, p);
	rec_file_free(&f);
	free(buf);
	if (r)
		proc_free(p);
	else if (!p->have_trailer)
		close_cut_calls(p); /* out of memory: the trace stays usable without them */
	return r;
}

int rec_load(const char *dir, struct rec_set *ts)
{
	memset(ts, 0, sizeof(*ts));
	char path[4200];
	/* the size: from any rank's header */
	snprintf(path, sizeof(path), "%s/raw", dir);
	DIR *d = opendir(path);
	if (!d)
		return err_set(HCLOCK_EIO, "%s: %s (no trace there: the directory hclock trace -o "
		               "wrote)", path, strerror(errno));
	struct dirent *e;
	int size = 0;
	while ((e = readdir(d))) {
		int r;
		char tail;
		if (sscanf(e->d_name, "rank.%d%c", &r, &tail) != 1 || r < 0)
			continue;
		struct rec_header h;
		snprintf(path, sizeof(path), "%s/raw/%s", dir, e->d_name);
		if (!rec_read_header(path, &h) && h.size > size)
			size = h.size;
	}
	closedir(d);
	if (!size)
		return err_set(HCLOCK_EIO, "%s/raw: no readable rank.N file (the program never called "
		               "an MPI_Init the tracer wraps: it is linked statically or built with "
		               "another MPI library than the tracer; or it died before MPI_Init "
		               "finished)", dir);
	ts->size = size;
	ts->p = calloc((size_t)size, sizeof(*ts->p));
	if (!ts->p)
		return err_set(HCLOCK_ENOMEM, "out of memory for %d processes", size);
	ts->t0_g = INT64_MAX;
	for (int r = 0; r < size; r++) {
		snprintf(path, sizeof(path), "%s/raw/rank.%d", dir, r);
		if (load_one(path, r, &ts->p[r])) {
			ts->missing++;
			continue;
		}
		for (size_t i = 0; i < ts->p[r].nrec; i++)
			if (ts->p[r].rec[i].t_g < ts->t0_g)
				ts->t0_g = ts->p[r].rec[i].t_g;
	}
	if (ts->t0_g == INT64_MAX)
		ts->t0_g = 0;
	return 0;
}

void rec_set_free(struct rec_set *ts)
{
	for (int r = 0; ts->p && r < ts->size; r++)
		proc_free(&ts->p[r]);
	free(ts->p);
	memset(ts, 0, sizeof(*ts));
}

const char *rec_func_name(const struct rec_proc *p, const struct rec *r)
{
	return p->names && r->func < p->h.nfuncs && p->names[r->func] ? p->names[r->func] : "?";
}

/* ---- matching ---------------------------------------------------------------------------------- */

struct pairing {
	struct rec_msg *m;
	size_t n;
};

static int add_pair(void *ctx, const struct msgmatch_end *s, const struct msgmatch_end *r)
{
	struct pairing *p = ctx;
	p->m[p->n++] = (struct rec_msg){(int)s->src, (int)s->dst, (size_t)s->order,
	                                (size_t)r->order};
	return 0;
}

int rec_match(const struct rec_set *ts, struct rec_msg **msgs, size_t *nmsgs,
              uint64_t *unmatched)
{
	size_t n = 0;
	for (int r = 0; r < ts->size; r++)
		for (size_t i = 0; i < ts->p[r].nrec; i++)
			n += ts->p[r].rec[i].kind == REC_SEND || ts->p[r].rec[i].kind == REC_RECV;
	struct msgmatch_end *v = malloc((n ? n : 1) * sizeof(*v));
	*msgs = malloc((n ? n : 1) * sizeof(**msgs));
	if (!v || !*msgs) {
		free(v);
		free(*msgs);
		*msgs = NULL;
		return err_set(HCLOCK_ENOMEM, "out of memory pairing the messages");
	}
	size_t k = 0, left = 0;
	*unmatched = 0;
	for (int r = 0; r < ts->size; r++)
		for (size_t i = 0; i < ts->p[r].nrec; i++) {
			const struct rec *x = &ts->p[r].rec[i];
			if (x->kind != REC_SEND && x->kind != REC_RECV)
				continue;
			if (x->peer < 0) {
				(*unmatched)++;
				continue;
			}
			int s = x->kind == REC_SEND;
			/* the order within a process: its records' (a channel's sends are one
			 * process's, so are its receives) */
			v[k++] = (struct msgmatch_end){.src = s ? r : x->peer, .dst = s ? x->peer : r,
			                               .comm = x->comm, .tag = x->tag, .order = i,
			                               .recv = !s};
		}
	struct pairing p = {*msgs, 0};
	msgmatch(v, k, add_pair, NULL, &p, &left);
	free(v);
	*unmatched += left;
	*nmsgs = p.n;
	return 0;
}

uint64_t rec_inversions(const struct rec_set *ts, const struct rec_msg *m, size_t n)
{
	uint64_t inv = 0;
	for (size_t i = 0; i < n; i++)
		inv += ts->p[m[i].dst].rec[m[i].ri].t_g < ts->p[m[i].src].rec[m[i].si].t_g;
	return inv;
}

void rec_order(const struct rec_set *ts, const struct rec_msg *m, size_t n, uint64_t *proven,
               uint64_t *estimated, uint64_t *unknown, signed char *ord)
{
	*proven = *estimated = *unknown = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t latest = ts->p[m[i].src].rec[m[i].si].t2_g;
		int64_t earliest = ts->p[m[i].dst].rec[m[i].ri].t2_g;
		int o = !latest || !earliest ? -1 : latest < earliest;
		*(o < 0 ? unknown : o ? proven : estimated) += 1;
		if (ord)
			ord[i] = (signed char)o;
	}
}
