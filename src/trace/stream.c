/*
 * stream.c - one process's outputs as its records come (stream.h): the records handed to the
 * Perfetto writer (perfetto.h), the JSON writer (json.h) and the OTF2 part (otf2_stream.h),
 * the counters kept.
 *
 * A write that fails (a full disk) stops that output (out.h): the protobuf is cut back to its
 * last safe point; the JSON part is left out by the launcher. The counters go to a file whose
 * space is taken when the stream opens. Where recording stopped (record.h's REC_F_STOP) an
 * instant event says why; the protobuf holds PF_KEEP bytes of the disk past what it wrote
 * (held ahead after each write, beyond the file's end: util/hold.h), so that a part cut short
 * before that instant can have it again at the cut (pf_stop_tail) whoever else filled the
 * disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hclock_api.h"
#include "trace/json.h"
#include "trace/otf2_stream.h"
#include "trace/perfetto.h"
#include "trace/stream.h"
#include "trace/tracks.h"
#include "util/err.h"
#include "util/msgmatch.h"
#include "util/names.h"
#include "util/path.h"

#define STATS_CAP (64 << 10) /* bytes taken for the counters when the stream opens */
#define PF_KEEP 4096       /* bytes the protobuf part holds past what it wrote, for its tail */

/* ---- records -------------------------------------------------------------------------------- */

static void message(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	int send = r->kind == REC_SEND;
	if (send) {
		s->sends++;
		int b = r->bytes ? 64 - __builtin_clzll(r->bytes) : 0;
		s->hist[b < HIST_BINS ? b : HIST_BINS - 1]++;
		s->hist_bytes += r->bytes;
	} else {
		s->recvs++;
	}
	if (r->peer < 0)
		return;
	int32_t src = send ? s->rank : r->peer, dst = send ? r->peer : s->rank;
	int64_t n = msgmatch_next(&s->chans, r->comm, src, dst, r->tag, !send);
	if (n < 0)
		return;
	uint64_t id = msgmatch_id(r->comm, src, dst, r->tag, (uint64_t)n);
	pf_message(h, r, id, send);
	js_message(s, r, t, id, send);
}

static const char *stop_text(int why, int e)
{
	if (why == REC_STOP_SIZE)
		return "recording stopped: max-size reached";
	return e == ENOSPC || e == EDQUOT ? "recording stopped: disk full"
	                                  : "recording stopped: a write failed";
}

/* a bounds sample: the half-width on the process's counter track */
static void bound_sample(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	int64_t hw = (r->t2_l - r->t2_g) / 2;
	s->bound_samples++;
	if (hw > s->bound_max_ns)
		s->bound_max_ns = hw;
	if (h)
		pf_bound(s, t, h, r->t_g, hw);
	js_bound(s, r, t, hw);
}

/* an instant event where recording stopped (thread t at ts) */
static void stop_mark(struct trace_stream *s, int t, struct thr *h, int64_t ts)
{
	s->stop_marked = 1;
	s->stop_ts = ts;
	s->stop_at = UINT64_MAX;
	const char *what = stop_text(s->stopped, s->stop_errno);
	if (h)
		pf_stop(s, t, h, ts, what);
	js_stop(s, t, ts, what);
}

static void profile_call(struct trace_stream *s, const struct rec *r)
{
	int64_t d = r->t2_g - r->t_g;
	s->calls++;
	s->mpi_ns += d;
	if (r->func < s->nfuncs) {
		struct fprof *f = &s->prof[r->func];
		f->calls++;
		f->total_ns += d;
		if (d > f->max_ns)
			f->max_ns = d;
	}
}

static void call(struct trace_stream *s, const struct rec *r, int t, struct thr *h)
{
	profile_call(s, r);
	if (h)
		pf_call(s, r, t, h);
	js_call(s, r, t);
}

/* thread t's pending message records whose call's record is not there: a call around them,
 * so that every message lies inside a call; cut: the file ended (a program killed), marked as
 * not returned, else its record was dropped (full buffers) */
static void orphans(struct trace_stream *s, int t, struct thr *h, int cut)
{
	struct rec c = {.kind = REC_CALL, .flags = cut ? REC_F_CUT : 0, .func = h->p_func,
	                .peer = -1, .t_g = h->p_t0, .t2_g = h->p_t1};
	call(s, &c, t, h);
}

void stream_feed(struct trace_stream *s, const struct rec *r, size_t n)
{
	otf2s_feed(s->o2, r, n);
	for (size_t i = 0; i < n; i++, r++) {
		if (r->kind == REC_DROP) {
			s->drops += r->bytes;
			if ((r->flags & REC_F_STOP) && !s->stop_marked) {
				int t = (int)r->tid < MAX_THREADS ? (int)r->tid : MAX_THREADS - 1;
				struct thr *h = pf_thread(s, t, r->t_g);
				pf_release(s, t, h);
				s->stopped = r->tag;
				s->stop_errno = r->peer;
				stop_mark(s, t, h, r->t_g);
			}
			continue;
		}
		if (r->kind == REC_BOUND) {
			int t = (int)r->tid < MAX_THREADS ? (int)r->tid : MAX_THREADS - 1;
			if (r->t2_g || r->t2_l) /* else not known (an aligned trace) */
				bound_sample(s, r, t, pf_thread(s, t, r->t_g));
			continue;
		}
		s->records++;
		if (s->json_on && s->json_limit && s->records > s->json_limit)
			s->json_on = 0; /* too big for JSON: the launcher leaves it out */
		int t = (int)r->tid;
		struct thr *h = pf_thread(s, t, r->t_g);
		if (t < 0 || t >= MAX_THREADS)
			t = MAX_THREADS - 1;
		if (r->t_g < s->t_first)
			s->t_first = r->t_g;
		int64_t end = r->kind == REC_CALL || r->kind == REC_COLL ? r->t2_g : r->t_g;
		if (end > s->t_last)
			s->t_last = end;
		if (h && h->held && !of_held(h, r))
			pf_release(s, t, h);
		switch (r->kind) {
		case REC_SEND:
		case REC_RECV:
			message(s, r, t, h);
			break;
		case REC_COLL:
			s->coll++;
			if (r->flags & REC_F_NB) {
				if (h) {
					pf_nb_coll(s, r, t, h);
					js_nb_coll(s, r, t);
				}
				break;
			}
			/* fall through */
		case REC_CALL:
			/* sends pending for another call (theirs made before this one began, or by
			 * another function), or receives whose call ended before them: their call's
			 * record was dropped */
			if (h && ((h->nflow && (h->p_func != r->func || h->p_t0 < r->t_g)) ||
			          (h->nend && !h->held)))
				orphans(s, t, h, 0);
			call(s, r, t, h);
			break;
		default:
			break;
		}
	}
}

/* ---- open and close --------------------------------------------------------------------------- */

static int part_path(char *out, size_t len, const char *dir, int rank, const char *ext)
{
	int n = snprintf(out, len, "%s/parts/rank.%d.%s", dir, rank, ext);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* s->host: the host's name kept to letters, digits, '.', '-' and '_' (it goes into JSON,
 * protobuf and OTF2 strings as it is); s->name "rank R (HOST)", or "rank R" where the host
 * is not known */
static void proc_name(struct trace_stream *s, const char *host)
{
	snprintf(s->host, sizeof(s->host), "%s", host ? host : "");
	names_sanitize(s->host);
	if (s->host[0])
		snprintf(s->name, sizeof(s->name), "rank %d (%s)", s->rank, s->host);
	else
		snprintf(s->name, sizeof(s->name), "rank %d", s->rank);
}

int stream_open(const struct stream_opts *o, struct trace_stream **out)
{
	*out = NULL;
	struct trace_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory for the trace's outputs");
	s->rank = o->rank;
	proc_name(s, o->host);
	s->size = o->size;
	s->nfuncs = o->nfuncs;
	s->t0 = o->t0_g;
	s->json_limit = o->json_limit;
	s->json_on = 1;
	s->pf.fd = s->js.fd = s->stats_fd = -1;
	s->t_first = INT64_MAX;
	s->t_last = INT64_MIN;
	snprintf(s->dir, sizeof(s->dir), "%s", o->dir);
	s->names = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(char *));
	s->prof = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(*s->prof));
	int rc = s->names && s->prof ? 0 : err_set(HCLOCK_ENOMEM, "out of memory for the outputs");
	for (uint32_t i = 0; !rc && i < s->nfuncs; i++)
		if (!(s->names[i] = strdup(o->names[i] ? o->names[i] : "?")))
			rc = err_set(HCLOCK_ENOMEM, "out of memory for the outputs");
	char path[4300];
	snprintf(path, sizeof(path), "%s/parts", o->dir);
	if (!rc && path_mkdirs(path))
		rc = err_set(HCLOCK_EIO, "cannot create %s: %s", path, strerror(errno));
	if (!rc && (part_path(path, sizeof(path), o->dir, o->rank, "pftrace") ||
	            out_open(&s->pf, path)))
		rc = err_set(HCLOCK_EIO, "cannot write %s: %s", path, strerror(errno));
	if (!rc) {
		s->pf.keep = PF_KEEP;
		out_hold(&s->pf);
	}
	if (!rc && (part_path(path, sizeof(path), o->dir, o->rank, "json") ||
	            out_open(&s->js, path)))
		rc = err_set(HCLOCK_EIO, "cannot write %s: %s", path, strerror(errno));
	/* the counters' file first gets its space: they are written whatever else fills it */
	if (!rc && !part_path(path, sizeof(path), o->dir, o->rank, "stats.part") &&
	    (s->stats_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) >= 0)
		posix_fallocate(s->stats_fd, 0, STATS_CAP);
	if (!rc)
		rc = otf2s_open(o->dir, o->rank, s->host, o->nfuncs, o->names, &s->o2);
	if (rc) {
		stream_close(s, NULL, 0);
		return rc;
	}
	pf_process(s);
	js_process(s);
	out_safe(&s->pf);
	*out = s;
	return 0;
}

static void write_stats(struct trace_stream *s, const struct rec_trailer *tr, uint64_t raw_bytes,
                        int pf_err, int js_err, char *path)
{
	char tmp[4400];
	snprintf(tmp, sizeof(tmp), "%s.part", path);
	FILE *f = s->stats_fd >= 0 ? fdopen(s->stats_fd, "w") : fopen(tmp, "w");
	if (!f)
		return;
	s->stats_fd = -1;
	fprintf(f, "hclock-trace-stats 1\nrank %d\nsize %d\n", s->rank, s->size);
	fprintf(f, "records %" PRIu64 "\ndropped %" PRIu64 "\nfinished %d\n", s->records,
	        tr ? tr->dropped : s->drops, tr != NULL);
	fprintf(f, "stopped %d\nstop_errno %d\n", s->stopped, s->stop_errno);
	fprintf(f, "when_full %u\nwaits %" PRIu64 "\nwaited_ns %" PRId64 "\n", s->when_full,
	        s->waits, s->waited_ns);
	fprintf(f, "bound_samples %" PRIu64 "\nbound_max_ns %" PRId64 "\n", s->bound_samples,
	        s->bound_max_ns);
	fprintf(f, "raw_bytes %" PRIu64 "\npftrace_bytes %" PRIu64 "\npftrace_error %d\n", raw_bytes,
	        s->pf.bytes, pf_err);
	fprintf(f, "json %d\njson_bytes %" PRIu64 "\njson_error %d\n", s->json_on && !js_err,
	        s->js.bytes, js_err);
	fprintf(f, "sends %" PRIu64 "\nrecvs %" PRIu64 "\ncalls %" PRIu64 "\n", s->sends, s->recvs,
	        s->calls);
	fprintf(f, "t_first %" PRId64 "\nt_last %" PRId64 "\nmpi_ns %" PRId64 "\n",
	        s->records ? s->t_first : 0, s->records ? s->t_last : 0, s->mpi_ns);
	if (tr)
		fprintf(f, "overhead_ns %" PRId64 "\nrec_cost_ns %" PRId32 "\ndrift_max %.17g\n"
		        "drift_unc %.9g\ndrift_true %.17g\n", tr->overhead_ns, tr->rec_cost_ns,
		        tr->drift_max_ns, (double)tr->drift_unc_ns, tr->drift_true_ns);
	if (s->have_clock)
		fprintf(f, "clock_exchanges %" PRIu64 "\nclock_timeouts %" PRIu64 "\n"
		        "clock_thread_cpu_us %" PRId64 "\n", s->clock.exchanges, s->clock.timeouts,
		        s->clock.thread_cpu_us);
	for (uint32_t i = 0; i < s->nfuncs; i++)
		if (s->prof[i].calls)
			fprintf(f, "func %s %" PRIu64 " %" PRId64 " %" PRId64 "\n", s->names[i],
			        s->prof[i].calls, s->prof[i].total_ns, s->prof[i].max_ns);
	fprintf(f, "hist_bytes %" PRIu64 "\n", s->hist_bytes);
	for (int b = 0; b < HIST_BINS; b++)
		if (s->hist[b])
			fprintf(f, "hist %d %" PRIu64 "\n", b, s->hist[b]);
	int bad = fflush(f) || ferror(f);
	long len = ftell(f);
	if (!bad && (len < 0 || ftruncate(fileno(f), len))) /* the space taken at open, given back */
		bad = 1;
	if (!fclose(f) && !bad)
		rename(tmp, path);
	else
		remove(tmp);
}

int stream_close(struct trace_stream *s, const struct rec_trailer *tr, uint64_t raw_bytes)
{
	if (!s)
		return 0;
	/* a file cut short (SIGKILL loses the buffer being filled) can end in message records
	 * whose call's record was lost: a call marked cut around them, so that every message
	 * lies inside its call */
	for (int t = 0; t < MAX_THREADS; t++) {
		struct thr *h = s->thr[t];
		if (h && h->up && (h->nflow || (h->nend && !h->held)))
			orphans(s, t, h, 1);
		if (h && h->up)
			pf_release(s, t, h);
	}
	if (tr && tr->stopped && !s->stop_marked) {
		/* the stop's marker did not reach the file (a full disk): at the last record */
		s->stopped = tr->stopped;
		s->stop_errno = tr->stop_errno;
		stop_mark(s, 0, s->records ? pf_thread(s, 0, s->t_last) : NULL,
		          s->records ? s->t_last : 0);
	}
	if (s->pf.fd >= 0) {
		out_flush(&s->pf);
		pf_stop_tail(s, stop_text(s->stopped, s->stop_errno));
	}
	int pf_err = out_close(&s->pf), js_err = out_close(&s->js);
	if (!js_err && s->json_skip_errno)
		js_err = s->json_skip_errno; /* in the counters, not an error of this stream */
	char path[4300];
	int rc = otf2s_close(s->o2);
	if (s->names && s->prof && !part_path(path, sizeof(path), s->dir, s->rank, "stats"))
		write_stats(s, tr, raw_bytes, pf_err, js_err, path);
	if (!rc && (pf_err || (js_err && js_err != s->json_skip_errno)))
		rc = err_set(HCLOCK_EIO, "rank %d's outputs in %s/parts: %s", s->rank, s->dir,
		             strerror(pf_err ? pf_err : js_err));
	for (int t = 0; t < MAX_THREADS; t++) {
		if (s->thr[t])
			free(s->thr[t]->iid);
		free(s->thr[t]);
	}
	for (uint32_t i = 0; s->names && i < s->nfuncs; i++)
		free(s->names[i]);
	free(s->names);
	free(s->prof);
	msgmatch_chans_free(&s->chans);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	free(s);
	return rc;
}

/* ---- from a raw file -------------------------------------------------------------------------- */

int stream_convert_raw(const char *dir, int rank, uint64_t json_limit,
                       const struct rec_trailer *known, const struct stream_clock *clock)
{
	enum { CHUNK = 16384 }; /* records per read: 1 MiB */
	char path[4300];
	snprintf(path, sizeof(path), "%s/raw/rank.%d", dir, rank);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(HCLOCK_EIO, "%s: %s", path, strerror(errno));
	struct rec_header h;
	char *head = NULL;
	struct rec *chunk = malloc(CHUNK * sizeof(struct rec));
	struct rec_file f = {0};
	struct trace_stream *s = NULL;
	int rc = HCLOCK_EIO;
	if (!chunk) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory converting %s", path);
		goto out;
	}
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.names_bytes > (1u << 24)) {
		rc = err_set(HCLOCK_EINVAL, "%s: no header of a raw trace", path);
		goto out;
	}
	size_t first = sizeof(h) + h.names_bytes;
	if (!(head = malloc(first))) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory converting %s", path);
		goto out;
	}
	if (pread(fd, head, first, 0) != (ssize_t)first) {
		rc = err_set(HCLOCK_EINVAL, "%s: cut inside its header", path);
		goto out;
	}
	if ((rc = rec_parse(path, head, first, &f)))
		goto out;
	if (f.h.rank != rank) {
		rc = err_set(HCLOCK_EINVAL, "%s: the header says rank %d", path, (int)f.h.rank);
		goto out;
	}
	char host[sizeof(f.h.host) + 1] = {0};
	memcpy(host, f.h.host, sizeof(f.h.host));
	struct stream_opts o = {.dir = dir, .rank = rank, .size = f.h.size, .host = host,
	                        .nfuncs = f.h.nfuncs,
	                        .names = f.names, .t0_g = f.h.t0_g, .json_limit = json_limit};
	if ((rc = stream_open(&o, &s)))
		goto out;
	if (clock) {
		s->have_clock = 1;
		s->clock = *clock;
	}
	s->when_full = f.h.when_full;
	s->waits = f.h.waits;
	s->waited_ns = f.h.waited_ns;
	if (known && known->stopped == REC_STOP_DISK) {
		/* its disk is full: the protobuf first, no JSON to compete for what is left (the
		 * launcher would leave trace.json out anyway) */
		s->json_on = 0;
		s->json_skip_errno = known->stop_errno ? known->stop_errno : ENOSPC;
	}
	struct rec_trailer tr;
	int have_tr = 0;
	off_t off = (off_t)first;
	for (;;) {
		ssize_t got = pread(fd, chunk, CHUNK * sizeof(struct rec), off);
		if (got <= 0)
			break;
		size_t n = (size_t)got / sizeof(struct rec), k = 0;
		for (; k < n; k++) {
			const unsigned char *b = (const unsigned char *)&chunk[k];
			if (!memcmp(b, REC_TRAILER_MAGIC, 8)) {
				memcpy(&tr, b, sizeof(tr));
				have_tr = 1;
				break;
			}
			if (b[0] < REC_CALL || b[0] > REC_KIND_MAX)
				break;
		}
		stream_feed(s, chunk, k);
		if (k < n || (size_t)got < CHUNK * sizeof(struct rec))
			break;
		off += got;
	}
	struct stat sb;
	rc = stream_close(s, have_tr ? &tr : known, fstat(fd, &sb) ? 0 : (uint64_t)sb.st_size);
out:
	rec_file_free(&f);
	free(head);
	free(chunk);
	close(fd);
	return rc;
}
