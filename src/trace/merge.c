/* merge.c - the tracer's raw files read back, messages paired, Perfetto JSON (merge.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/merge.h"

/* A file cut short (SIGKILL: the buffer being filled is lost) can end in a message record
 * whose call's record was in the lost part (a call's record follows the message records it
 * makes). Each trailing run of such records of one function gets a call record from the
 * first to the last of them, marked cut, so that every message lies inside its call. */
static void close_cut_calls(struct trace_proc *p)
{
	size_t i = p->nrec;
	while (i > 0 && (p->rec[i - 1].kind == TRACE_SEND || p->rec[i - 1].kind == TRACE_RECV))
		i--;
	if (i == p->nrec)
		return;
	size_t extra = p->nrec - i;
	struct trace_rec *r = realloc(p->rec, (p->nrec + extra) * sizeof(*r));
	if (!r)
		return;
	p->rec = r;
	size_t n = p->nrec;
	for (size_t a = i; a < n;) {
		size_t b = a;
		while (b + 1 < n && r[b + 1].func == r[a].func)
			b++;
		r[p->nrec++] = (struct trace_rec){.kind = TRACE_CALL, .flags = TRACE_F_CUT,
		                                  .func = r[a].func, .peer = -1, .t_g = r[a].t_g,
		                                  .t_l = r[a].t_l, .t2_g = r[b].t_g, .t2_l = r[b].t_l};
		a = b + 1;
	}
}

static int load_one(const char *path, struct trace_proc *p)
{
	memset(p, 0, sizeof(*p));
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	struct stat sb;
	if (fstat(fileno(f), &sb) || fread(&p->h, sizeof(p->h), 1, f) != 1 ||
	    memcmp(p->h.magic, TRACE_MAGIC, 8) || p->h.nfuncs > 100000 ||
	    p->h.names_bytes > (1u << 24)) {
		fclose(f);
		return -1;
	}
	p->file_bytes = (size_t)sb.st_size;
	char *nb = malloc(p->h.names_bytes + 1);
	p->names = calloc(p->h.nfuncs ? p->h.nfuncs : 1, sizeof(char *));
	if (!nb || !p->names || fread(nb, 1, p->h.names_bytes, f) != p->h.names_bytes) {
		free(nb);
		free(p->names);
		p->names = NULL;
		fclose(f);
		return -1;
	}
	nb[p->h.names_bytes] = 0;
	for (uint32_t i = 0, o = 0; i < p->h.nfuncs && o < p->h.names_bytes; i++) {
		p->names[i] = nb + o;
		o += (uint32_t)strlen(nb + o) + 1;
	}
	if (!p->names[0])
		p->names[0] = nb;
	size_t body = (size_t)sb.st_size - sizeof(p->h) - p->h.names_bytes;
	size_t cap = body / sizeof(struct trace_rec);
	p->rec = malloc((cap ? cap : 1) * sizeof(struct trace_rec));
	if (!p->rec) {
		fclose(f);
		return -1;
	}
	struct trace_rec r;
	while (fread(&r, sizeof(r), 1, f) == 1) {
		if (!memcmp(&r, TRACE_TRAILER_MAGIC, 8)) {
			_Static_assert(sizeof(struct trace_trailer) == sizeof(struct trace_rec),
			               "trailer and record are the same size");
			memcpy(&p->tr, &r, sizeof(p->tr));
			p->have_trailer = 1;
			break;
		}
		if (r.kind < TRACE_CALL || r.kind > TRACE_DROP)
			break; /* garbage: stop at the last good record */
		if (r.kind == TRACE_DROP)
			p->dropped += r.bytes;
		else
			p->rec[p->nrec++] = r;
	}
	if (p->have_trailer)
		p->dropped = p->tr.dropped;
	fclose(f);
	if (!p->have_trailer)
		close_cut_calls(p); /* out of memory: the trace stays usable without them */
	return 0;
}

int trace_load(const char *dir, struct trace_set *ts, char *err, size_t errlen)
{
	memset(ts, 0, sizeof(*ts));
	char path[4200];
	/* the size: from any rank's header */
	snprintf(path, sizeof(path), "%s/raw", dir);
	DIR *d = opendir(path);
	if (!d) {
		snprintf(err, errlen, "%s: %s (no trace there: the directory hclock trace -o wrote)", path,
		         strerror(errno));
		return -1;
	}
	struct dirent *e;
	int size = 0;
	while ((e = readdir(d))) {
		int r;
		char tail;
		if (sscanf(e->d_name, "rank.%d%c", &r, &tail) != 1 || r < 0)
			continue;
		struct trace_header h;
		snprintf(path, sizeof(path), "%s/raw/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (f && fread(&h, sizeof(h), 1, f) == 1 && !memcmp(h.magic, TRACE_MAGIC, 8) &&
		    h.size > size && h.size < (1 << 24))
			size = h.size;
		if (f)
			fclose(f);
	}
	closedir(d);
	if (!size) {
		snprintf(err, errlen, "%s/raw: no readable rank.N file (the program never called the C "
		         "MPI_Init the tracer wraps: Open MPI's Fortran bindings call PMPI_Init "
		         "directly; or it died before MPI_Init finished)", dir);
		return -1;
	}
	ts->size = size;
	ts->p = calloc((size_t)size, sizeof(*ts->p));
	if (!ts->p) {
		snprintf(err, errlen, "out of memory for %d processes", size);
		return -1;
	}
	ts->t0_g = INT64_MAX;
	for (int r = 0; r < size; r++) {
		snprintf(path, sizeof(path), "%s/raw/rank.%d", dir, r);
		if (load_one(path, &ts->p[r]) || ts->p[r].h.rank != r) {
			ts->missing++;
			free(ts->p[r].rec);
			memset(&ts->p[r], 0, sizeof(ts->p[r]));
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

void trace_set_free(struct trace_set *ts)
{
	for (int r = 0; ts->p && r < ts->size; r++) {
		if (ts->p[r].names)
			free(ts->p[r].names[0]);
		free(ts->p[r].names);
		free(ts->p[r].rec);
	}
	free(ts->p);
	memset(ts, 0, sizeof(*ts));
}

const char *trace_func_name(const struct trace_proc *p, const struct trace_rec *r)
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

int trace_match(const struct trace_set *ts, struct trace_msg **msgs, size_t *nmsgs,
                uint64_t *unmatched)
{
	size_t n = 0;
	for (int r = 0; r < ts->size; r++)
		for (size_t i = 0; i < ts->p[r].nrec; i++)
			n += ts->p[r].rec[i].kind == TRACE_SEND || ts->p[r].rec[i].kind == TRACE_RECV;
	struct ev *v = malloc((n ? n : 1) * sizeof(*v));
	*msgs = malloc((n ? n : 1) * sizeof(**msgs));
	if (!v || !*msgs) {
		free(v);
		free(*msgs);
		*msgs = NULL;
		return -1;
	}
	size_t k = 0;
	*unmatched = 0;
	for (int r = 0; r < ts->size; r++)
		for (size_t i = 0; i < ts->p[r].nrec; i++) {
			const struct trace_rec *x = &ts->p[r].rec[i];
			if (x->kind != TRACE_SEND && x->kind != TRACE_RECV)
				continue;
			if (x->peer < 0) {
				(*unmatched)++;
				continue;
			}
			int s = x->kind == TRACE_SEND;
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
			(*msgs)[m++] = (struct trace_msg){v[a + j].src, v[a + j].dst, v[a + j].idx,
			                                  v[ns + j].idx};
		*unmatched += sends + recvs - 2 * pairs;
		a = b;
	}
	free(v);
	*nmsgs = m;
	return 0;
}

uint64_t trace_inversions(const struct trace_set *ts, const struct trace_msg *m, size_t n)
{
	uint64_t inv = 0;
	for (size_t i = 0; i < n; i++)
		inv += ts->p[m[i].dst].rec[m[i].ri].t_g < ts->p[m[i].src].rec[m[i].si].t_g;
	return inv;
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

int trace_write_perfetto(const struct trace_set *ts, const struct trace_msg *m, size_t n,
                         const char *path, char *err, size_t errlen)
{
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.part", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	int first = 1;
	uint64_t nb_id = 0;
	for (int r = 0; r < ts->size; r++) {
		const struct trace_proc *p = &ts->p[r];
		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
		        "\"args\":{\"name\":\"rank %d\"}}", first ? "" : ",\n", r, r);
		fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
		        "\"args\":{\"sort_index\":%d}}", r, r);
		first = 0;
		for (size_t i = 0; i < p->nrec; i++) {
			const struct trace_rec *x = &p->rec[i];
			if (x->kind == TRACE_COLL && x->flags & TRACE_F_NB) {
				/* a nonblocking collective: an async slice (its own track: they overlap
				 * each other and the calls), args on its begin */
				fprintf(f, ",\n{\"ph\":\"b\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
				        ",\"pid\":%d,\"tid\":0,\"ts\":", trace_func_name(p, x), nb_id, r);
				us(f, x->t_g - ts->t0_g);
				fprintf(f, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
				        "\"}}", x->peer, x->bytes, x->comm);
				fprintf(f, ",\n{\"ph\":\"e\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
				        ",\"pid\":%d,\"tid\":0,\"ts\":", trace_func_name(p, x), nb_id++, r);
				us(f, x->t2_g - ts->t0_g);
				fputc('}', f);
				continue;
			}
			if (x->kind != TRACE_CALL && x->kind != TRACE_COLL)
				continue;
			fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,"
			        "\"ts\":", trace_func_name(p, x), r);
			us(f, x->t_g - ts->t0_g);
			fprintf(f, ",\"dur\":");
			us(f, x->t2_g - x->t_g);
			if (x->kind == TRACE_COLL)
				fprintf(f, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
				        "\"}", x->peer, x->bytes, x->comm);
			else if (x->flags & TRACE_F_CUT)
				fprintf(f, ",\"args\":{\"returned\":false}");
			fputc('}', f);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct trace_rec *s = &ts->p[m[i].src].rec[m[i].si];
		const struct trace_rec *d = &ts->p[m[i].dst].rec[m[i].ri];
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
		snprintf(err, errlen, "writing %s failed: %s", path, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}
