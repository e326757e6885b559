/*
 * assemble.c - a trace's outputs put together from its processes' parts, pass after pass
 * (assemble.h). The outputs are byte copies of the parts (no per-event work) but for the
 * order pass of small traces, which loads the raw records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "hclock_api.h"
#include "trace/assemble.h"
#include "trace/merge.h"
#include "trace/otf2_stream.h"
#include "trace/perfetto.h"
#include "trace/profile.h"
#include "trace/waitplot.h"
#include "util/err.h"
#include "util/path.h"

/* one failure's line through o->warn */
__attribute__((format(printf, 2, 3))) static void warn(const struct trace_assemble_opts *o,
                                                       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = NULL;
	if (o->warn && vasprintf(&line, fmt, ap) >= 0)
		o->warn(o->warn_ctx, line);
	va_end(ap);
	free(line);
}

/* ---- the parts ------------------------------------------------------------------------------ */

static int read_counts(const char *dir, int r, struct trace_counts *p)
{
	char path[PATH_MAX + 64], key[64];
	memset(p, 0, sizeof(*p));
	path_fmt(path, sizeof(path), "%s/parts/rank.%d.stats", dir, r);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long long v;
	p->drift_max = p->drift_unc = p->drift_true = NAN;
	while (fscanf(f, "%63s", key) == 1) {
		if (!strncmp(key, "drift_", 6)) {
			char num[64];
			double *at = key[6] == 'm' ? &p->drift_max : key[6] == 'u' ? &p->drift_unc
			                                                           : &p->drift_true;
			if (fscanf(f, "%63s", num) == 1)
				*at = strtod(num, NULL);
			continue;
		}
		if (!strcmp(key, "func") || !strcmp(key, "hist")) {
			int c;
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (fscanf(f, "%lld", &v) != 1)
			break;
#define K(name, field) else if (!strcmp(key, name)) p->field = v
		if (0) {
		}
		K("size", size); K("finished", finished); K("json", json); K("records", records);
		K("dropped", dropped); K("raw_bytes", raw_bytes); K("pftrace_bytes", pf_bytes);
		K("json_bytes", json_bytes); K("sends", sends); K("recvs", recvs); K("calls", calls);
		K("t_first", t_first); K("t_last", t_last); K("mpi_ns", mpi_ns);
		K("overhead_ns", overhead_ns); K("rec_cost_ns", rec_cost_ns);
		K("stopped", stopped); K("stop_errno", stop_errno); K("json_error", json_error);
		K("pftrace_error", pf_error); K("clock_exchanges", clock.exchanges);
		K("when_full", when_full); K("waits", waits); K("waited_ns", waited_ns);
		K("clock_timeouts", clock.timeouts); K("clock_thread_cpu_us", clock.thread_cpu_us);
#undef K
		p->have_clock |= !strcmp(key, "clock_exchanges");
	}
	fclose(f);
	p->have = 1;
	return 0;
}

/* the processes of the trace in DIR: the largest size a raw header gives (0: none) */
static int trace_size(const char *dir)
{
	int size = 0;
	for (int r = 0; r < (size ? size : 1) && r < (1 << 20); r++) {
		char path[PATH_MAX + 64];
		struct rec_header h;
		path_fmt(path, sizeof(path), "%s/raw/rank.%d", dir, r);
		if (!rec_read_header(path, &h) && h.size > size)
			size = h.size;
	}
	return size;
}

/* rank r's counters into s->proc[r], its parts written from its raw file first when it has
 * none (a program that died) or o->redo; 0, or -1 when it has no counters */
static int rank_counts(const char *dir, const struct trace_assemble_opts *o,
                       struct trace_summary *s, int r)
{
	struct trace_counts *p = &s->proc[r];
	char raw[PATH_MAX + 64];
	path_fmt(raw, sizeof(raw), "%s/raw/reserve.%d", dir, r);
	remove(raw); /* the disk a process held back, left by a program that died */
	path_fmt(raw, sizeof(raw), "%s/raw/rank.%d", dir, r);
	/* converted again (--convert): the clock's statistics the tracer left are kept */
	int had = !read_counts(dir, r, p) && p->have_clock;
	struct stream_clock clk = p->clock;
	if ((o->redo || !p->have) && !access(raw, R_OK) &&
	    stream_convert_raw(dir, r, o->json_forced ? 0 : STREAM_JSON_LIMIT, NULL,
	                       had ? &clk : NULL))
		warn(o, "%s", hclock_last_error());
	if (o->redo)
		p->have = 0;
	return !p->have && read_counts(dir, r, p) ? -1 : 0;
}

/* rank r's counters added to the summary's */
static void add_counts(struct trace_summary *s, const struct trace_counts *p)
{
	s->total.records += p->records;
	s->total.dropped += p->dropped;
	s->total.raw_bytes += p->raw_bytes;
	s->total.pf_bytes += p->pf_bytes;
	s->total.sends += p->sends;
	s->total.recvs += p->recvs;
	s->finished += p->finished;
	s->total.json &= p->json;
	s->total.json_error |= p->json_error != 0;
	if (p->pf_error && !s->n_pf_cut++)
		s->pf_errno = p->pf_error;
	s->n_size += p->stopped == REC_STOP_SIZE;
	s->n_wait += p->when_full != REC_FULL_DROP;
	s->n_gave_up += p->when_full == REC_FULL_GAVE_UP;
	s->waits += p->waits;
	s->waited_ns += p->waited_ns;
	if (p->stopped == REC_STOP_DISK && !s->n_disk++)
		s->disk_errno = p->stop_errno;
	if (p->records && p->t_first < s->t_first)
		s->t_first = p->t_first;
	if (p->records && p->t_last > s->t_last)
		s->t_last = p->t_last;
	if (p->overhead_ns > s->overhead_max_ns)
		s->overhead_max_ns = p->overhead_ns;
	if (p->rec_cost_ns > s->rec_cost_ns)
		s->rec_cost_ns = p->rec_cost_ns;
}

static int pass_parts(const char *dir, const struct trace_assemble_opts *o,
                      struct trace_summary *s)
{
	s->prof = profile_create();
	s->total.json = 1;
	s->t_first = INT64_MAX;
	s->t_last = INT64_MIN;
	for (int r = 0; r < s->size; r++) {
		if (rank_counts(dir, o, s, r)) {
			s->missing++;
			continue;
		}
		char sp[PATH_MAX + 64];
		path_fmt(sp, sizeof(sp), "%s/parts/rank.%d.stats", dir, r);
		if (s->prof && profile_add(s->prof, sp)) {
			profile_free(s->prof);
			s->prof = NULL;
		}
		add_counts(s, &s->proc[r]);
	}
	/* rank 0's header: the clock */
	char p0[PATH_MAX + 64];
	path_fmt(p0, sizeof(p0), "%s/raw/rank.0", dir);
	s->have_header = !rec_read_header(p0, &s->header);
	return 0;
}

/* ---- pftrace, json, otf2: the parts put together -------------------------------------------- */

/* append the file at path (from byte skip) to fd; a byte copy, no per-event work */
static int append_file(int fd, const char *path, off_t skip)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	char *b = malloc(1 << 20);
	int rc = b ? 0 : -1;
	if (!rc && lseek(in, skip, SEEK_SET) < 0)
		rc = -1;
	for (ssize_t n; !rc && (n = read(in, b, 1 << 20)) != 0;) {
		if (n < 0) {
			rc = errno == EINTR ? 0 : -1;
			continue;
		}
		for (ssize_t off = 0; !rc && off < n;) {
			ssize_t w = write(fd, b + off, (size_t)(n - off));
			if (w <= 0)
				rc = -1;
			else
				off += w;
		}
	}
	free(b);
	close(in);
	return rc;
}

/* DIR/NAME from the parts' EXT files in rank order, between head and tail (the first part
 * from byte skip0); written to NAME.part and renamed. Returns 0 or -1 */
static int concat(const char *dir, const char *name, const char *ext, int size, const char *head,
                  off_t skip0, const char *tail)
{
	char out[PATH_MAX + 64], tmp[PATH_MAX + 80], part[PATH_MAX + 64];
	path_fmt(out, sizeof(out), "%s/%s", dir, name);
	path_fmt(tmp, sizeof(tmp), "%s.part", out);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	int rc = head && write(fd, head, strlen(head)) != (ssize_t)strlen(head) ? -1 : 0;
	for (int r = 0, first = 1; !rc && r < size; r++) {
		path_fmt(part, sizeof(part), "%s/parts/rank.%d.%s", dir, r, ext);
		if (access(part, R_OK))
			continue;
		rc = append_file(fd, part, first ? skip0 : 0);
		first = 0;
	}
	if (!rc && tail && write(fd, tail, strlen(tail)) != (ssize_t)strlen(tail))
		rc = -1;
	if (close(fd) || rc || rename(tmp, out)) {
		remove(tmp);
		return -1;
	}
	return 0;
}

/* the processes' packet streams one after the other (the format allows it) */
static int pass_pftrace(const char *dir, const struct trace_assemble_opts *o,
                        struct trace_summary *s)
{
	s->pf_ok = !concat(dir, "trace.pftrace", "pftrace", s->size, NULL, 0, NULL);
	if (s->pf_ok)
		return 0;
	warn(o, "writing %s/trace.pftrace failed: %s; the processes' parts are left in "
	     "%s/parts/rank.R.pftrace, each a trace of its own", dir, strerror(errno), dir);
	return 1;
}

/* above the limit, trace.json (and the order pass) only when forced */
static int big(const struct trace_assemble_opts *o, const struct trace_summary *s)
{
	return s->total.records > STREAM_JSON_LIMIT && !o->json_forced;
}

static int pass_json(const char *dir, const struct trace_assemble_opts *o,
                     struct trace_summary *s)
{
	char jpath[PATH_MAX + 32];
	path_fmt(jpath, sizeof(jpath), "%s/trace.json", dir);
	if (s->total.json && !big(o, s)) {
		s->json = TRACE_JSON_WRITTEN;
		if (!concat(dir, "trace.json", "json", s->size,
		            "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", 2, "\n]}\n"))
			return 0;
		warn(o, "writing %s failed: %s", jpath, strerror(errno));
		return 1;
	}
	s->json = s->total.json_error && !big(o, s) ? TRACE_JSON_NO_PART : TRACE_JSON_TOO_BIG;
	remove(jpath);
	return 0;
}

/* the parts are in the outputs now; the counters stay (the summary of --convert) */
static int pass_tidy(const char *dir, const struct trace_assemble_opts *o,
                     struct trace_summary *s)
{
	(void)o;
	for (int r = 0; r < s->size; r++) {
		char part[PATH_MAX + 64];
		path_fmt(part, sizeof(part), "%s/parts/rank.%d.pftrace", dir, r);
		if (s->pf_ok)
			remove(part);
		path_fmt(part, sizeof(part), "%s/parts/rank.%d.json", dir, r);
		remove(part);
	}
	return 0;
}

/* the processes' event files under the definitions (otf2_stream.h) */
static int pass_otf2(const char *dir, const struct trace_assemble_opts *o,
                     struct trace_summary *s)
{
#ifdef HCLOCK_HAVE_OTF2
	s->otf2 = 1;
	if (otf2s_assemble(dir, s->size)) {
		warn(o, "%s", hclock_last_error());
		return 1;
	}
#else
	(void)dir, (void)o, (void)s;
#endif
	return 0;
}

/* ---- order: small traces' messages paired in memory ----------------------------------------- */

/* each paired message's order, by the bounds its records carry, counted into pr and, when
 * pf, marked in DIR/trace.pftrace. Returns 0 or 1 */
static int order_marks(const char *dir, const struct trace_assemble_opts *o,
                       const struct rec_set *ts, const struct rec_msg *m, size_t nm, int pf,
                       struct trace_pairing *pr)
{
	signed char *ord = malloc(nm ? nm : 1);
	struct pf_order *so = pf ? malloc((nm ? nm : 1) * sizeof(*so)) : NULL;
	rec_order(ts, m, nm, &pr->proven, &pr->estimated, &pr->unknown, ord);
	int rc = 0;
	if (pf && ord && so) {
		size_t k = 0;
		for (size_t i = 0; i < nm; i++) {
			const struct rec *s = &ts->p[m[i].src].rec[m[i].si], *r = &ts->p[m[i].dst].rec[m[i].ri];
			if (ord[i] >= 0)
				so[k++] = (struct pf_order){.dst = m[i].dst, .proven = ord[i],
				                                .t_ns = r->t_g, .margin_ns = r->t2_g - s->t2_g};
		}
		char path[PATH_MAX + 32];
		path_fmt(path, sizeof(path), "%s/trace.pftrace", dir);
		if (k && pf_write_order(path, ts->size, so, k)) {
			warn(o, "%s", hclock_last_error());
			rc = 1;
		}
	} else if (pf) {
		warn(o, "out of memory for the message order marks");
		rc = 1;
	}
	free(ord);
	free(so);
	return rc;
}

/* the in-memory pass, for small traces only: pairs counted, inversions, the messages' order
 * (marked in trace.pftrace when it was written) */
static int pair_all(const char *dir, const struct trace_assemble_opts *o,
                    struct trace_summary *s)
{
	struct trace_pairing *pr = &s->pairing;
	struct rec_set ts;
	int rc = 0;
	if (rec_load(dir, &ts)) {
		warn(o, "%s", hclock_last_error());
		return 1;
	}
	struct rec_msg *m = NULL;
	if (rec_match(&ts, &m, &pr->paired, &pr->unpaired)) {
		warn(o, "%s", hclock_last_error());
		rc = 1;
	} else {
		pr->done = 1;
		pr->inversions = rec_inversions(&ts, m, pr->paired);
		rc |= order_marks(dir, o, &ts, m, pr->paired, s->pf_ok, pr);
	}
	free(m);
	rec_set_free(&ts);
	return rc;
}

static int pass_order(const char *dir, const struct trace_assemble_opts *o,
                      struct trace_summary *s)
{
	int rc = big(o, s) ? 0 : pair_all(dir, o, s);
	if (!s->pairing.done)
		s->pairing = (struct trace_pairing){0};
	/* the marks' bytes */
	char path[PATH_MAX + 32];
	struct stat st;
	path_fmt(path, sizeof(path), "%s/trace.pftrace", dir);
	if (s->pf_ok && !stat(path, &st) && (uint64_t)st.st_size > s->total.pf_bytes)
		s->order_bytes = (uint64_t)st.st_size - s->total.pf_bytes;
	return rc;
}

/* ---- waits ---------------------------------------------------------------------------------- */

static int pass_waits(const char *dir, const struct trace_assemble_opts *o,
                      struct trace_summary *s)
{
	char path[PATH_MAX + 32];
	path_fmt(path, sizeof(path), "%s/trace.pftrace", dir);
	int failed = 0;
	if (trace_waits_run(dir, s->size, s->pf_ok ? path : NULL, &s->wait_states)) {
		warn(o, "wait states: %s", hclock_last_error());
		failed = s->wait_states.done; /* the marks in trace.pftrace failed */
	}
	/* the two plots: comm_matrix.svg, wait_states.svg */
	const struct trace_waits *tw = &s->wait_states;
	if (tw->done && tw->plot &&
	    waitplot_write(tw->plot, tw->w, s->t_last > s->t_first ? s->t_last - s->t_first : 0,
	                   dir)) {
		warn(o, "plots: %s", hclock_last_error());
		failed = 1;
	}
	return failed;
}

/* ---- profile -------------------------------------------------------------------------------- */

static int pass_profile(const char *dir, const struct trace_assemble_opts *o,
                        struct trace_summary *s)
{
	(void)o;
	const struct trace_pairing *pr = &s->pairing;
	if (pr->done && s->prof)
		profile_order(s->prof, pr->proven, pr->estimated, pr->unknown);
	if (s->wait_states.done && s->prof)
		profile_waits(s->prof, &s->wait_states);
	if (s->repaired && s->prof)
		profile_repair(s->prof, s->repair.moved, s->repair.moved_max_ns, s->repair.messages,
		               s->repair.unbounded_moved);
	s->profile_written = s->prof && !profile_write(s->prof, dir);
	if (s->prof && !s->profile_written)
		s->profile_errno = errno;
	return 0;
}

/* ---- the repair of the message order, before all of them ------------------------------------ */

static int repair(const char *dir, const struct trace_assemble_opts *o, struct trace_summary *s)
{
#ifdef HCLOCK_HAVE_ALIGN
	int rc = trace_reorder(dir, s->size, o->min_latency_ns, &s->repair);
	if (rc == HCLOCK_EINVAL)
		warn(o, "%s (the raw files are unchanged; without --repair-order, hclock trace "
		     "--convert %s writes the outputs)", hclock_last_error(), dir);
	else if (rc)
		warn(o, "%s", hclock_last_error());
	s->repaired = !rc;
	return rc;
#else
	(void)s;
	warn(o, "--repair-order: not available in this build (hclock align is needed: "
	     "-DHCLOCK_ALIGN=ON)");
	return err_set(HCLOCK_EUNSUPP, "%s: --repair-order not available in this build", dir);
#endif
}

/* ---- all of them ---------------------------------------------------------------------------- */

static trace_pass *const passes[] = {
	pass_parts, pass_pftrace, pass_json, pass_tidy, pass_otf2, pass_order, pass_waits,
	pass_profile,
};

int trace_assemble(const char *dir, const struct trace_assemble_opts *o,
                   struct trace_summary *s)
{
	memset(s, 0, sizeof(*s));
	int size = trace_size(dir);
	if (!size) {
		warn(o, "%s/raw: no readable rank.N file (the program never called an MPI_Init the "
		     "tracer wraps: it is linked statically or built with another MPI library than "
		     "the tracer; or it died before MPI_Init finished)", dir);
		return err_set(HCLOCK_EIO, "%s/raw: no readable rank.N file", dir);
	}
	if (!(s->proc = calloc((size_t)size, sizeof(*s->proc)))) {
		warn(o, "out of memory for the counters of %d processes", size);
		return err_set(HCLOCK_ENOMEM, "out of memory for the counters of %d processes", size);
	}
	s->size = size;
	struct trace_assemble_opts oo = *o;
	if (o->repair_order) {
		int rc = repair(dir, o, s);
		if (rc) {
			trace_summary_free(s);
			return rc;
		}
		oo.redo = 1; /* the processes' parts hold the times before the repair */
	}
	for (size_t i = 0; i < sizeof(passes) / sizeof(passes[0]); i++)
		s->failed += passes[i](dir, &oo, s);
	return 0;
}

void trace_summary_free(struct trace_summary *s)
{
	profile_free(s->prof);
	trace_waits_free(&s->wait_states);
	free(s->proc);
	memset(s, 0, sizeof(*s));
}
