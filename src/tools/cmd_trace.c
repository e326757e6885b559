/*
 * cmd_trace.c - hclock trace: run an unmodified MPI program with libhclock_trace preloaded,
 * then turn the raw records into the outputs.
 *
 *   mpirun -np P hclock trace [-o DIR] [--sync SPEC] [--emulate SPEC] [--filter LIST]
 *                             [--buffer N] [--max-size SIZE] [--event-truth] [--json]
 *                             -- PROGRAM [ARGS...]
 *   hclock trace --convert DIR
 *
 * Under mpirun every process is one `hclock trace` launcher: it never calls MPI itself; it
 * checks every setting (trace/settings.h: the options over their HCLOCK_TRACE_* variables)
 * before anything runs, sets the environment (LD_PRELOAD, and HCLOCK_TRACE_* from the
 * settings, which the tracer reads back), runs the program as its child and
 * waits for it, passing signals on. The program's stdin, stdout and stderr are its own and
 * its exit status comes back unchanged (a signal as 128 + its number). Then each launcher
 * marks its rank done (DIR/raw/done.R) and the launcher of rank 0 waits (up to 60 s) for
 * every rank's mark, assembles the outputs the processes wrote (DIR/parts: stream.h; a rank
 * without them, its program dead, is converted from its raw file a chunk at a time) and
 * prints the summary on stderr;
 * the others wait for its mark (DIR/raw/merged) before they exit, so that mpirun does not
 * kill rank 0's launcher while it writes. After a program failed (non-zero exit, a signal)
 * nobody waits long: the other programs may hang on their lost partner until mpirun ends
 * them; rank 0 converts what is on disk after 2 s. A program killed together with its launchers
 * (MPI_Abort) leaves DIR/raw, complete up to its last record (the tracer writes its buffer at
 * MPI_Abort, at a signal that ends the program and at exit; only SIGKILL loses the buffer
 * being filled): `hclock trace --convert DIR` writes the outputs from it afterwards. The first
 * of the tracers and launchers to see a program fail says so in one line (DIR/raw/failed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hclock.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "trace/merge.h"
#include "trace/otf2_stream.h"
#include "trace/profile.h"
#include "trace/settings.h"
#include "trace/stream.h"
#include "util/err.h"
#include "util/path.h"
#include "util/timeutil.h"

#ifndef HCLOCK_TRACE_LIBDIRS
#define HCLOCK_TRACE_LIBDIRS "lib"
#endif

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: mpirun -np P hclock trace [OPTIONS] -- PROGRAM [ARGS...]\n"
	        "       hclock trace --convert DIR\n"
	        "Run an unmodified MPI program with hclock's PMPI tracer preloaded: every MPI call\n"
	        "(enter and leave), point-to-point messages, collectives and communicators, on a\n"
	        "global clock synchronized at MPI_Init and kept right by the program's own MPI\n"
	        "calls. The program's output and exit code pass through unchanged.\n\n"
	        "  -o, --output DIR   where the trace goes (default hclock-trace): DIR/trace.pftrace\n"
	        "                     (Perfetto's protobuf format, written by each process as it\n"
	        "                     records), DIR/traces.otf2 (OTF2, each process writing its\n"
	        "                     threads' event files), DIR/trace.json (Chrome trace events)\n"
	        "                     for traces of at most 1000000 events, DIR/raw\n"
	        "                     (the records), DIR/profile.txt and DIR/profile.json (per MPI\n"
	        "                     function calls, time, share, spread over processes; message\n"
	        "                     sizes; per process the time in MPI and outside). Where the\n"
	        "                     clock has bounds, each process's bound half-width is a\n"
	        "                     counter track (an OTF2 metric), and each message's order\n"
	        "                     (send before receive) is counted and marked as proven by\n"
	        "                     the bounds or shown by the estimate only\n"
	        "  --json             trace.json and the pairing check whatever the size\n"
	        "  --sync SPEC        the global clock (default cont(" HCLOCK_SYNC_DEFAULT_SPEC "));\n"
	        "                     a cont(...) spec is driven by the program's MPI calls\n"
	        "                     (drive=progress): no thread is started; none: local clocks\n"
	        "  --emulate SPEC     emulated clocks with known truth, as hclock check --emulate\n"
	        "  --event-truth      with --emulate: the true error of every timestamp, summarized\n"
	        "                     at MPI_Finalize (median, p99, p99.9, max), and how many\n"
	        "                     had the truth outside the clock's bounds\n"
	        "  --filter LIST      record only these calls: names or shell patterns (case\n"
	        "                     folded), comma separated, !ITEM excludes (e.g.\n"
	        "                     MPI_Allreduce,MPI_*send or !MPI_Comm_rank,!MPI_Comm_size)\n"
	        "  --buffer N         records per buffer, two buffers per process (default 65536,\n"
	        "                     4 MiB each), written by a thread of the process\n"
	        "  --when-full MODE   when both buffers are full (the writer behind): drop (the\n"
	        "                     default) drops new records and counts them, the program\n"
	        "                     never waits for the disk; wait makes the program's thread\n"
	        "                     wait for the writer, nothing is lost (a wait longer than\n"
	        "                     10 s, a writer stuck, gives way to drop with a line). The\n"
	        "                     summary says which ran, the drops and the time waited\n"
	        "  --max-size SIZE    per process: recording stops when its records reach SIZE\n"
	        "                     bytes (K, M, G, T: powers of 1024; at least 64K); the rest\n"
	        "                     is counted as dropped, a marker in the trace says where.\n"
	        "                     A full disk stops recording the same way; the program runs\n"
	        "                     on and the summary says how much was lost and why\n"
	        "  --convert DIR      write the outputs from DIR/raw (after a program that died)\n"
	        "  -h, --help\n\n"
	        "Each option's default comes from its variable when set: HCLOCK_TRACE_DIR, _SYNC,\n"
	        "_EMULATE, _FILTER, _BUFFER, _WHEN_FULL, _MAX_SIZE, _TRUTH (1 or 0). A bad value,\n"
	        "given either way, is refused before the program starts (exit 2); the tracer reads\n"
	        "the same variables (a program started without hclock trace) and ends the program\n"
	        "at MPI_Init on a bad one, with the same line and exit status 2 on every rank.\n");
}

/* snprintf for paths: -1 when it did not fit */
__attribute__((format(printf, 3, 4))) static int path_fmt(char *out, size_t len,
                                                           const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int env_int(const char *const *names, int dflt)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		if (v && *v)
			return atoi(v);
	}
	return dflt;
}

static int my_rank(void)
{
	int r = cmd_launched_rank();
	return r < 0 ? 0 : r;
}

static int world_size(void)
{
	static const char *const v[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
	return env_int(v, 1);
}

static int g_rank;

/* one error line, from rank 0's launcher only */
__attribute__((format(printf, 1, 2))) static void line(const char *fmt, ...)
{
	if (g_rank != 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	err_vline("hclock trace", fmt, ap);
	va_end(ap);
}

/* libhclock_trace.so next to this executable: ../lib (the build tree), or the install's
 * library directories; HCLOCK_TRACE_LIB overrides */
static int find_lib(char *out, size_t len)
{
	const char *e = getenv("HCLOCK_TRACE_LIB");
	if (e && *e) {
		path_fmt(out, len, "%s", e);
		return access(out, R_OK);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	const char *dirs = HCLOCK_TRACE_LIBDIRS;
	for (const char *d = dirs; *d;) {
		size_t k = strcspn(d, ":");
		path_fmt(out, len, "%s/../%.*s/libhclock_trace.so", exe, (int)k, d);
		if (!access(out, R_OK))
			return 0;
		d += k + (d[k] == ':');
	}
	return -1;
}

static volatile pid_t child = -1;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* create the mark DIR/raw/NAME; excl: only if nobody has. Returns 1 if this call made it */
static int mark(const char *dir, const char *name, int excl)
{
	char p[PATH_MAX + 64];
	path_fmt(p, sizeof(p), "%s/raw/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | (excl ? O_EXCL : O_TRUNC), 0666);
	return fd >= 0 && !close(fd);
}

static int marked(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];
	path_fmt(p, sizeof(p), "%s/raw/%s", dir, name);
	return !access(p, F_OK);
}

/* One process's counters (stream.h's DIR/parts/rank.R.stats). */
struct pstats {
	int have, finished, json, json_error, pf_error, size, stopped, stop_errno, when_full;
	uint64_t waits;
	int64_t waited_ns; /* summed over the process's threads */
	uint64_t records, dropped, raw_bytes, pf_bytes, json_bytes, sends, recvs, calls;
	int64_t t_first, t_last, mpi_ns, overhead_ns, rec_cost_ns;
	double drift_max, drift_unc, drift_true; /* rank 0's drift check (NAN: none), ns */
	int have_clock; /* the continuous clock's statistics, from the tracer at MPI_Finalize */
	struct stream_clock clock;
};

static int read_stats(const char *dir, int r, struct pstats *p)
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
		for (ssize_t o = 0; !rc && o < n;) {
			ssize_t w = write(fd, b + o, (size_t)(n - o));
			if (w <= 0)
				rc = -1;
			else
				o += w;
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

/* each paired message's order, by the bounds its records carry (ord: proven, estimated,
 * unknown) and, when pf, marked in DIR/trace.pftrace. Returns 0 or 1 */
static int order_marks(const char *dir, const struct rec_set *ts, const struct rec_msg *m,
                       size_t nm, int pf, uint64_t ord[3])
{
	signed char *o = malloc(nm ? nm : 1);
	struct stream_order *so = pf ? malloc((nm ? nm : 1) * sizeof(*so)) : NULL;
	rec_order(ts, m, nm, &ord[0], &ord[1], &ord[2], o);
	int rc = 0;
	if (pf && o && so) {
		size_t k = 0;
		for (size_t i = 0; i < nm; i++) {
			const struct rec *s = &ts->p[m[i].src].rec[m[i].si], *r = &ts->p[m[i].dst].rec[m[i].ri];
			if (o[i] >= 0)
				so[k++] = (struct stream_order){.dst = m[i].dst, .proven = o[i], .t_ns = r->t_g,
				                                .margin_ns = r->t2_g - s->t2_g};
		}
		char path[PATH_MAX + 32];
		path_fmt(path, sizeof(path), "%s/trace.pftrace", dir);
		if (k && stream_write_order(path, ts->size, so, k)) {
			fprintf(stderr, "hclock trace: %s\n", hclock_last_error());
			rc = 1;
		}
	} else if (pf) {
		fprintf(stderr, "hclock trace: out of memory for the message order marks\n");
		rc = 1;
	}
	free(o);
	free(so);
	return rc;
}

/* the old in-memory pass, for small traces only: pairs counted, inversions, the messages'
 * order (marked in trace.pftrace when pf) */
static int small_pass(const char *dir, int pf, int *pairs_ok, size_t *nm, uint64_t *unmatched,
                      uint64_t *inv, uint64_t ord[3])
{
	struct rec_set ts;
	int rc = 0;
	*pairs_ok = 0;
	if (rec_load(dir, &ts)) {
		fprintf(stderr, "hclock trace: %s\n", hclock_last_error());
		return 1;
	}
	struct rec_msg *m = NULL;
	if (rec_match(&ts, &m, nm, unmatched)) {
		fprintf(stderr, "hclock trace: %s\n", hclock_last_error());
		rc = 1;
	} else {
		*pairs_ok = 1;
		*inv = rec_inversions(&ts, m, *nm);
		rc |= order_marks(dir, &ts, m, *nm, pf, ord);
	}
	free(m);
	rec_set_free(&ts);
	return rc;
}

/* DIR's outputs from what the processes wrote (DIR/parts), each rank without its parts (a
 * program that died, or redo) converted from its raw file first, one at a time; print the
 * summary. Returns 0 or 1 */
static int convert(const char *dir, int redo, int json_forced)
{
	int size = trace_size(dir), rc = 0;
	if (!size) {
		fprintf(stderr, "hclock trace: %s/raw: no readable rank.N file (the program never "
		        "called an MPI_Init the tracer wraps: it is linked statically or built with "
		        "another MPI library than the tracer; or it died before MPI_Init finished)\n",
		        dir);
		return 1;
	}
	struct pstats *ps = calloc((size_t)size, sizeof(*ps)), tot = {0};
	if (!ps)
		return 1;
	struct trace_profile *prof = profile_create();
	int missing = 0, finished = 0, json_ok = 1, json_err = 0, n_size = 0, n_disk = 0;
	int n_wait = 0, n_gave_up = 0; /* --when-full wait: processes, those whose wait gave up */
	uint64_t waits = 0;
	int64_t waited_ns = 0;
	int disk_errno = 0, n_pf_cut = 0, pf_errno = 0;
	int64_t t_first = INT64_MAX, t_last = INT64_MIN, over_max = 0, cost = 0;
	for (int r = 0; r < size; r++) {
		char raw[PATH_MAX + 64];
		path_fmt(raw, sizeof(raw), "%s/raw/reserve.%d", dir, r);
		remove(raw); /* the disk a process held back, left by a program that died */
		path_fmt(raw, sizeof(raw), "%s/raw/rank.%d", dir, r);
		/* converted again (--convert): the clock's statistics the tracer left are kept */
		int had = !read_stats(dir, r, &ps[r]) && ps[r].have_clock;
		struct stream_clock clk = ps[r].clock;
		if ((redo || !ps[r].have) && !access(raw, R_OK) &&
		    stream_convert_raw(dir, r, json_forced ? 0 : STREAM_JSON_LIMIT, NULL,
		                       had ? &clk : NULL))
			fprintf(stderr, "hclock trace: %s\n", hclock_last_error());
		if (redo)
			ps[r].have = 0;
		if (!ps[r].have && read_stats(dir, r, &ps[r])) {
			missing++;
			continue;
		}
		struct pstats *p = &ps[r];
		char sp[PATH_MAX + 64];
		path_fmt(sp, sizeof(sp), "%s/parts/rank.%d.stats", dir, r);
		if (prof && profile_add(prof, sp)) {
			profile_free(prof);
			prof = NULL;
		}
		tot.records += p->records;
		tot.dropped += p->dropped;
		tot.raw_bytes += p->raw_bytes;
		tot.pf_bytes += p->pf_bytes;
		tot.sends += p->sends;
		tot.recvs += p->recvs;
		finished += p->finished;
		json_ok &= p->json;
		json_err |= p->json_error != 0;
		if (p->pf_error && !n_pf_cut++)
			pf_errno = p->pf_error;
		n_size += p->stopped == REC_STOP_SIZE;
		n_wait += p->when_full != REC_FULL_DROP;
		n_gave_up += p->when_full == REC_FULL_GAVE_UP;
		waits += p->waits;
		waited_ns += p->waited_ns;
		if (p->stopped == REC_STOP_DISK && !n_disk++)
			disk_errno = p->stop_errno;
		if (p->records && p->t_first < t_first)
			t_first = p->t_first;
		if (p->records && p->t_last > t_last)
			t_last = p->t_last;
		over_max = p->overhead_ns > over_max ? p->overhead_ns : over_max;
		cost = p->rec_cost_ns > cost ? p->rec_cost_ns : cost;
	}
	/* Perfetto: the processes' packet streams one after the other (the format allows it) */
	int pf_ok = !concat(dir, "trace.pftrace", "pftrace", size, NULL, 0, NULL);
	if (!pf_ok) {
		fprintf(stderr, "hclock trace: writing %s/trace.pftrace failed: %s; the processes' "
		        "parts are left in %s/parts/rank.R.pftrace, each a trace of its own\n", dir,
		        strerror(errno), dir);
		rc = 1;
	}
	char json_note[200] = "";
	char jpath[PATH_MAX + 32];
	path_fmt(jpath, sizeof(jpath), "%s/trace.json", dir);
	/* above the limit, trace.json and the pairing check only on --json */
	int big = tot.records > STREAM_JSON_LIMIT && !json_forced;
	if (json_ok && !big) {
		if (concat(dir, "trace.json", "json", size, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n",
		           2, "\n]}\n")) {
			fprintf(stderr, "hclock trace: writing %s failed: %s\n", jpath, strerror(errno));
			rc = 1;
		}
	} else if (json_err && !big) {
		remove(jpath);
		snprintf(json_note, sizeof(json_note), "; trace.json skipped (a process could not "
		         "write its part: %s)", n_disk ? "the disk was full" : "a write failed");
	} else {
		remove(jpath);
		snprintf(json_note, sizeof(json_note), "; trace.json skipped (%llu events, above %llu: "
		         "too big for a JSON viewer; --json writes it)", (unsigned long long)tot.records,
		         (unsigned long long)STREAM_JSON_LIMIT);
	}
	/* the parts are in the outputs now; the counters stay (the summary of --convert) */
	for (int r = 0; r < size; r++) {
		char part[PATH_MAX + 64];
		path_fmt(part, sizeof(part), "%s/parts/rank.%d.pftrace", dir, r);
		if (pf_ok)
			remove(part);
		path_fmt(part, sizeof(part), "%s/parts/rank.%d.json", dir, r);
		remove(part);
	}
#ifdef HCLOCK_HAVE_OTF2
	/* OTF2: the processes' event files under the definitions (otf2_stream.h) */
	if (otf2s_assemble(dir, size)) {
		fprintf(stderr, "hclock trace: %s\n", hclock_last_error());
		rc = 1;
	}
#endif
	/* small traces: every message paired and its order checked, in memory */
	int pairs_ok = 0;
	size_t nm = 0;
	uint64_t unmatched = 0, inv = 0, ord[3] = {0, 0, 0};
	if (!big)
		rc |= small_pass(dir, pf_ok, &pairs_ok, &nm, &unmatched, &inv, ord);
	if (pairs_ok && prof)
		profile_order(prof, ord[0], ord[1], ord[2]);
	double span = t_last > t_first ? (t_last - t_first) * 1e-9 : 0;
	fprintf(stderr, "hclock trace: %d processes (%d finished MPI_Finalize, %d left no file), "
	        "%llu events (%.0f per second per process), %llu bytes of records (%.0f per "
	        "process), %llu dropped ", size, finished, missing,
	        (unsigned long long)tot.records,
	        span > 0 && size > missing ? tot.records / span / (size - missing) : 0.0,
	        (unsigned long long)tot.raw_bytes,
	        size > missing ? (double)tot.raw_bytes / (size - missing) : 0.0,
	        (unsigned long long)tot.dropped);
	if (!n_wait)
		fprintf(stderr, "(when full: drop); ");
	else {
		fprintf(stderr, "(when full: wait; the program waited %.6f s for the writer, %llu "
		        "times, summed over its processes and threads", waited_ns * 1e-9,
		        (unsigned long long)waits);
		if (n_gave_up)
			fprintf(stderr, "; a wait reached its deadline on %d of %d processes, which "
			        "dropped from then on", n_gave_up, size);
		fprintf(stderr, "); ");
	}
	if (n_size || n_disk) {
		fprintf(stderr, "recording stopped early on %d of %d processes (", n_size + n_disk,
		        size);
		if (n_size)
			fprintf(stderr, "%d: max-size reached%s", n_size, n_disk ? "; " : "");
		if (n_disk)
			fprintf(stderr, "%d: %s, %s", n_disk, disk_errno == ENOSPC || disk_errno == EDQUOT ?
			        "disk full" : "a write failed", strerror(disk_errno));
		fprintf(stderr, "), the records after it lost (in the dropped count); ");
	}
	if (pairs_ok)
		fprintf(stderr, "%zu messages paired, %llu unpaired, %llu inversions (receive before "
		        "send on the global clock); order (send before receive) proven by the clock's "
		        "bounds for %llu, shown by the estimate only for %llu, %llu without bounds\n",
		        nm, (unsigned long long)unmatched, (unsigned long long)inv,
		        (unsigned long long)ord[0], (unsigned long long)ord[1],
		        (unsigned long long)ord[2]);
	else
		fprintf(stderr, "%llu sends, %llu receives (paired by their ids; unpaired ones and "
		        "inversions are counted for traces of at most %llu events, or with --json)\n",
		        (unsigned long long)tot.sends, (unsigned long long)tot.recvs,
		        (unsigned long long)STREAM_JSON_LIMIT);
	/* rank 0's header and trailer: the clock and the drift check */
	char p0[PATH_MAX + 64];
	path_fmt(p0, sizeof(p0), "%s/raw/rank.0", dir);
	struct rec_header h;
	if (rec_read_header(p0, &h))
		h.magic[0] = 0;
	if (h.magic[0])
		fprintf(stderr, "hclock trace: clock %s on %s; sync at MPI_Init %.3f s", h.sync,
		        h.clock, h.sync_ns * 1e-9);
	if (ps[0].finished && !isnan(ps[0].drift_max)) {
		char dc[200];
		profile_drift_text(dc, sizeof(dc), ps[0].drift_max, ps[0].drift_unc, ps[0].drift_true);
		fprintf(stderr, "; drift check at MPI_Finalize: %s", dc);
	} else {
		fprintf(stderr, "; no drift check (rank 0 did not finish MPI_Finalize)");
	}
	/* the continuous clock's exchanges, as each process's tracer left them */
	struct mpitool_cont cont = {.failed_rank = -1};
	double *cs = calloc((size_t)size * MPITOOL_CONT_N, sizeof(double));
	for (int r = 0; cs && r < size; r++) {
		const struct pstats *p = &ps[r];
		double *a = cs + MPITOOL_CONT_N * r; /* round trip and noise: not in the counters */
		a[0] = (double)p->clock.exchanges;
		a[1] = (double)p->clock.timeouts;
		a[2] = p->clock.thread_cpu_us < 0 ? -1 : (double)p->clock.thread_cpu_us * 1e-6;
		a[3] = p->have && p->have_clock;
	}
	if (cs)
		mpitool_cont_sum(size, cs, &cont);
	free(cs);
	if (cont.have) {
		char text[200];
		mpitool_cont_text(text, sizeof(text), &cont);
		fprintf(stderr, "; continuous clock: %s", text);
	}
	char pf_note[300] = "";
	struct stat pst;
	path_fmt(jpath, sizeof(jpath), "%s/trace.pftrace", dir);
	if (pf_ok && !stat(jpath, &pst) && (uint64_t)pst.st_size > tot.pf_bytes)
		snprintf(pf_note, sizeof(pf_note), " and %llu bytes of message order marks",
		         (unsigned long long)pst.st_size - tot.pf_bytes);
	if (n_pf_cut)
		snprintf(pf_note + strlen(pf_note), sizeof(pf_note) - strlen(pf_note), " (the parts of "
		         "%d process%s cut short: %s; each ends where none of its calls was open)",
		         n_pf_cut, n_pf_cut > 1 ? "es" : "", strerror(pf_errno));
	fprintf(stderr, "\nhclock trace: tracer time (largest process): %.3f s (%lld ns per event); "
	        "written to %s/trace.pftrace (%llu bytes, %.1f per event)%s%s%s%s\n",
	        over_max * 1e-9, (long long)cost, dir, (unsigned long long)tot.pf_bytes,
	        tot.records ? (double)tot.pf_bytes / tot.records : 0.0, pf_note,
	        json_note[0] ? "" : ", trace.json",
#ifdef HCLOCK_HAVE_OTF2
	        ", traces.otf2",
#else
	        "",
#endif
	        json_note);
	mpitool_cont_warn("hclock trace", &cont);
	/* the profile, from the counters */
	if (!prof || profile_write(prof, dir)) {
		fprintf(stderr, "hclock trace: writing %s/profile.txt and profile.json failed: %s\n",
		        dir, prof ? strerror(errno) : "out of memory");
		rc = 1;
	} else {
		profile_summary(prof, stderr, 5);
		fprintf(stderr, "hclock trace: profile in %s/profile.txt and profile.json\n", dir);
	}
	profile_free(prof);
	free(ps);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	const char *given[TS_COUNT] = {0}, *conv = NULL;
	g_rank = my_rank();
	static const struct option opts[] = {
		{"output", required_argument, 0, 'o'}, {"sync", required_argument, 0, 's'},
		{"emulate", required_argument, 0, 'e'}, {"filter", required_argument, 0, 'f'},
		{"buffer", required_argument, 0, 'b'}, {"convert", required_argument, 0, 'c'},
		{"max-size", required_argument, 0, 'm'}, {"when-full", required_argument, 0, 'W'},
		{"event-truth", no_argument, 0, 't'}, {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': given[TS_DIR] = optarg; break;
		case 's': given[TS_SYNC] = optarg; break;
		case 'e': given[TS_EMULATE] = optarg; break;
		case 'f': given[TS_FILTER] = optarg; break;
		case 'b': given[TS_BUFFER] = optarg; break;
		case 'm': given[TS_MAX_SIZE] = optarg; break;
		case 'W': given[TS_WHEN_FULL] = optarg; break;
		case 'c': conv = optarg; break;
		case 't': given[TS_TRUTH] = "1"; break;
		case 'j': given[TS_JSON] = "1"; break;
		case 'h': usage(stdout); return 0;
		default:
			line("%s: unknown option or missing value (hclock trace --help)",
			     argv[optind - 1]);
			return 2;
		}
	}
	if (conv)
		return convert(conv, 1, given[TS_JSON] != NULL);
	if (optind >= argc) {
		line("no program to run: hclock trace [OPTIONS] -- PROGRAM [ARGS...]");
		return 2;
	}
	/* every setting is checked here, before the program runs, as the tracer would */
	struct trace_settings set;
	char why[600];
	if (trace_settings_load(&set, given, why, sizeof(why))) {
		line("%s", why);
		return 2;
	}
	const char *dir = set.dir;
	char **prog = argv + optind;
	/* the output directory, absolute (the program may change its working directory) */
	char absdir[PATH_MAX], raw[PATH_MAX + 8], lib[PATH_MAX];
	if (dir[0] == '/') {
		if (path_fmt(absdir, sizeof(absdir), "%s", dir))
			absdir[0] = 0;
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd))) {
			line("cannot find the working directory: %s", strerror(errno));
			return 2;
		}
		if (path_fmt(absdir, sizeof(absdir), "%s/%s", cwd, dir))
			absdir[0] = 0;
	}
	if (!absdir[0] || path_fmt(raw, sizeof(raw), "%s/raw", absdir)) {
		line("-o %s: the path is too long", dir);
		return 2;
	}
	if (path_mkdirs(raw) || access(raw, W_OK)) {
		line("cannot write to %s: %s (give -o a writable directory)", absdir, strerror(errno));
		return 2;
	}
	if (find_lib(lib, sizeof(lib))) {
		line("cannot find libhclock_trace.so (looked next to this hclock, in ../lib; set "
		     "HCLOCK_TRACE_LIB to its path)");
		return 2;
	}
	/* a launcher of an earlier run in this directory may have left marks */
	char mk[64];
	snprintf(mk, sizeof(mk), "done.%d", g_rank);
	char p[PATH_MAX + 64];
	path_fmt(p, sizeof(p), "%s/%s", raw, mk);
	remove(p);
	if (g_rank == 0) {
		path_fmt(p, sizeof(p), "%s/merged", raw);
		remove(p);
		path_fmt(p, sizeof(p), "%s/failed", raw);
		remove(p);
	}
	/* the environment */
	const char *pre = getenv("LD_PRELOAD");
	char *ld = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
	if (!ld)
		return 2;
	sprintf(ld, "%s%s%s", lib, pre && *pre ? ":" : "", pre && *pre ? pre : "");
	setenv("LD_PRELOAD", ld, 1);
	free(ld);
	set.dir = absdir;
	if (trace_settings_to_env(&set))
		return 2;
	/* disk held back for the outputs (stream.h), should the program fill it */
	char reserve[PATH_MAX + 64] = "";
	if (g_rank == 0) {
		long long want = (long long)world_size() * STREAM_RESERVE_BYTES;
		path_fmt(reserve, sizeof(reserve), "%s/reserve.launcher", raw);
		int fd = open(reserve, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		/* fallocate, not posix_fallocate: where the file system cannot allocate (NFS), no
		 * reserve rather than 64 MiB of zeros written */
		if (fd < 0 || fallocate(fd, 0, 0, want < STREAM_RESERVE_LAUNCHER_MAX ? want :
		                        STREAM_RESERVE_LAUNCHER_MAX))
			remove(reserve);
		if (fd >= 0)
			close(fd);
	}
	/* run it */
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC)) {
		line("pipe: %s", strerror(errno));
		return 2;
	}
	struct sigaction sa = {0};
	sa.sa_handler = pass_on;
	sigemptyset(&sa.sa_mask);
	pid_t pid = fork();
	if (pid < 0) {
		line("fork: %s", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		close(errpipe[0]);
		execvp(prog[0], prog);
		int e = errno;
		if (write(errpipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	child = pid;
	close(errpipe[1]);
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	int e = 0;
	ssize_t got = read(errpipe[0], &e, sizeof(e));
	close(errpipe[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof(e)) {
		if (reserve[0])
			remove(reserve);
		line("cannot run %s: %s", prog[0], strerror(e));
		return e == ENOENT ? 127 : 126;
	}
	int prc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	/* one line a job: from the first of the tracer (MPI_Abort) and the launchers to see a
	 * program die or fail (mpirun then ends the others, whose lines would only say that) */
	if (WIFSIGNALED(status) && mark(absdir, "failed", 1))
		err_line("hclock trace", "%s (rank %d) died of signal %d (%s); its records up to then "
		         "are in %s/raw (hclock trace --convert %s writes the trace from them)", prog[0],
		         g_rank, WTERMSIG(status), strsignal(WTERMSIG(status)), absdir, absdir);
	else if (prc && mark(absdir, "failed", 1))
		err_line("hclock trace", "%s (rank %d) exited with code %d; its records are in %s/raw "
		         "(hclock trace --convert %s writes the trace from them, should %s/trace.json "
		         "not appear)", prog[0], g_rank, prc, absdir, absdir, absdir);
	/* the outputs; after a failure the others' programs may never end (their partner is
	 * gone): wait briefly, convert what is there (hclock trace --convert can redo it) */
	if (reserve[0])
		remove(reserve);
	mark(absdir, mk, 0);
	int size = world_size(), limit_ms = prc ? 2000 : 60000;
	if (g_rank == 0) {
		for (int waited = 0; waited < limit_ms; waited += 20) {
			int all = 1;
			for (int r = 0; r < size && all; r++) {
				char d[32];
				snprintf(d, sizeof(d), "done.%d", r);
				all = marked(absdir, d);
			}
			if (all)
				break;
			real_delay_ns(20000000);
		}
		convert(absdir, 0, set.json);
		mark(absdir, "merged", 0);
	} else if (!prc) {
		for (int waited = 0; waited < 120000 && !marked(absdir, "merged"); waited += 20)
			real_delay_ns(20000000);
	}
	return prc;
}
