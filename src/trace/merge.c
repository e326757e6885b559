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

struct ev {
	int src, dst;
	uint64_t comm;
	int32_t tag;
	int proc;     /* whose record */
	size_t idx;   /* its index there: the order of sends (receives) within a process */
	int recv;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
#define C(f)                 \
	if (x->f != y->f)        \
		return x->f < y->f ? -1 : 1;
	C(src) C(dst) C(comm) C(tag) C(recv) C(idx)
#undef C
	return 0;
}

int rec_match(const struct rec_set *ts, struct rec_msg **msgs, size_t *nmsgs,
              uint64_t *unmatched)
{
	size_t n = 0;
	for (int r = 0; r < ts->size; r++)
		for (size_t i = 0; i < ts->p[r].nrec; i++)
			n += ts->p[r].rec[i].kind == REC_SEND || ts->p[r].rec[i].kind == REC_RECV;
	struct ev *v = malloc((n ? n : 1) * sizeof(*v));
	*msgs = malloc((n ? n : 1) * sizeof(**msgs));
	if (!v || !*msgs) {
		free(v);
		free(*msgs);
		*msgs = NULL;
		return err_set(HCLOCK_ENOMEM, "out of memory pairing the messages");
	}
	size_t k = 0;
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
			v[k++] = (struct ev){s ? r : x->peer, s ? x->peer : r, x->comm, x->tag, r, i, !s};
		}
	qsort(v, k, sizeof(*v), cmp_ev);
	size_t m = 0;
	for (size_t a = 0; a < k;) {
		size_t b = a;
		while (b < k && v[b].src == v[a].src && v[b].dst == v[a].dst && v[b].comm == v[a].comm &&
		       v[b].tag == v[a].tag)
			b++;
		size_t ns = a;
		while (ns < b && !v[ns].recv)
			ns++;
		size_t sends = ns - a, recvs = b - ns, pairs = sends < recvs ? sends : recvs;
		for (size_t j = 0; j < pairs; j++)
			(*msgs)[m++] = (struct rec_msg){v[a + j].src, v[a + j].dst, v[a + j].idx,
			                                v[ns + j].idx};
		*unmatched += sends + recvs - 2 * pairs;
		a = b;
	}
	free(v);
	*nmsgs = m;
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

/* ---- Perfetto ---------------------------------------------------------------------------------- */

static void us(FILE *f, int64_t ns)
{
	/* microseconds with three decimals: the ns exactly */
	if (ns < 0) {
		fputc('-', f);
		ns = -ns;
	}
	fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

int rec_write_perfetto(const struct rec_set *ts, const struct rec_msg *m, size_t n,
                       const char *path)
{
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.part", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return err_set(HCLOCK_EIO, "cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	int first = 1;
	uint64_t nb_id = 0;
	for (int r = 0; r < ts->size; r++) {
		const struct rec_proc *p = &ts->p[r];
		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
		        "\"args\":{\"name\":\"rank %d\"}}", first ? "" : ",\n", r, r);
		fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
		        "\"args\":{\"sort_index\":%d}}", r, r);
		first = 0;
		for (size_t i = 0; i < p->nrec; i++) {
			const struct rec *x = &p->rec[i];
			if (x->kind == REC_COLL && x->flags & REC_F_NB) {
				/* a nonblocking collective: an async slice (its own track: they overlap
				 * each other and the calls), args on its begin */
				fprintf(f, ",\n{\"ph\":\"b\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
				        ",\"pid\":%d,\"tid\":0,\"ts\":", rec_func_name(p, x), nb_id, r);
				us(f, x->t_g - ts->t0_g);
				fprintf(f, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
				        "\"}}", x->peer, x->bytes, x->comm);
				fprintf(f, ",\n{\"ph\":\"e\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
				        ",\"pid\":%d,\"tid\":0,\"ts\":", rec_func_name(p, x), nb_id++, r);
				us(f, x->t2_g - ts->t0_g);
				fputc('}', f);
				continue;
			}
			if (x->kind != REC_CALL && x->kind != REC_COLL)
				continue;
			fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,"
			        "\"ts\":", rec_func_name(p, x), r);
			us(f, x->t_g - ts->t0_g);
			fprintf(f, ",\"dur\":");
			us(f, x->t2_g - x->t_g);
			if (x->kind == REC_COLL)
				fprintf(f, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
				        "\"}", x->peer, x->bytes, x->comm);
			else if (x->flags & REC_F_CUT)
				fprintf(f, ",\"args\":{\"returned\":false}");
			fputc('}', f);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct rec *s = &ts->p[m[i].src].rec[m[i].si];
		const struct rec *d = &ts->p[m[i].dst].rec[m[i].ri];
		fprintf(f, ",\n{\"ph\":\"s\",\"cat\":\"p2p\",\"name\":\"message\",\"id\":%zu,\"pid\":%d,"
		        "\"tid\":0,\"ts\":", i, m[i].src);
		us(f, s->t_g - ts->t0_g);
		fprintf(f, ",\"args\":{\"to\":%d,\"tag\":%d,\"bytes\":%" PRIu64 "}}", m[i].dst, s->tag,
		        s->bytes);
		fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"p2p\",\"name\":\"message\",\"id\":%zu,"
		        "\"pid\":%d,\"tid\":0,\"ts\":", i, m[i].dst);
		us(f, d->t_g - ts->t0_g);
		fputc('}', f);
	}
	fprintf(f, "\n]}\n");
	int bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, path)) {
		int r = err_set(HCLOCK_EIO, "writing %s failed: %s", path, strerror(errno));
		remove(tmp);
		return r;
	}
	return 0;
}
