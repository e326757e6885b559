/*
 * cmd_trace.c - hclock trace: run an unmodified MPI program with libhclock_trace preloaded,
 * then turn the raw records into the outputs.
 *
 *   mpirun -np P hclock trace [-o DIR] [--sync SPEC] [--emulate SPEC] [--filter LIST]
 *                             [--buffer N] [--max-size SIZE] [--event-truth[=realtime]] [--json]
 *                             [--repair-order [--min-latency D]] -- PROGRAM [ARGS...]
 *   hclock trace --convert DIR [--repair-order [--min-latency D]]
 *
 * Under mpirun every process is one `hclock trace` launcher: it never calls MPI itself; it
 * checks every setting (trace/settings.h: the options over their HCLOCK_TRACE_* variables)
 * before anything runs, sets the environment (LD_PRELOAD, and HCLOCK_TRACE_* from the
 * settings, which the tracer reads back), runs the program as its child and
 * waits for it, passing signals on. The program's stdin, stdout and stderr are its own and
 * its exit status comes back unchanged (a signal as 128 + its number). Then each launcher
 * marks its rank done (DIR/raw/done.R) and the launcher of rank 0 waits (up to 60 s) for
 * every rank's mark, assembles the outputs the processes wrote (trace/assemble.h: DIR/parts;
 * a rank without them, its program dead, is converted from its raw file a chunk at a time)
 * and prints the summary on stderr;
 * the others wait for its mark (DIR/raw/merged) before they exit, so that mpirun does not
 * kill rank 0's launcher while it writes. After a program failed (non-zero exit, a signal)
 * nobody waits long: the other programs may hang on their lost partner until mpirun ends
 * them; rank 0 converts what is on disk after 2 s. A program killed together with its launchers
 * (MPI_Abort) leaves DIR/raw, complete up to its last record (the tracer writes its buffer at
 * MPI_Abort, at a signal that ends the program and at exit; only SIGKILL loses the buffer
 * being filled): `hclock trace --convert DIR` writes the outputs from it afterwards. The first
 * of the tracers and launchers to see a program fail says so in one line (DIR/raw/failed).
 * --repair-order is the launcher's alone (no setting of the tracer): before the outputs, rank
 * 0's launcher repairs the message order of the raw files (trace/reorder.h) and converts
 * every rank anew.
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
#include "trace/assemble.h"
#include "trace/profile.h"
#include "trace/settings.h"
#include "trace/stream.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/path.h"
#include "util/timeutil.h"

#ifndef HCLOCK_TRACE_LIBDIRS
#define HCLOCK_TRACE_LIBDIRS "lib"
#endif

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: mpirun -np P hclock trace [OPTIONS] -- PROGRAM [ARGS...]\n"
	        "       hclock trace --convert DIR [--repair-order [--min-latency D]]\n"
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
	        "                     sizes; per process the time in MPI and outside; the wait\n"
	        "                     states: who waited for whom, each with its proven\n"
	        "                     interval), DIR/comm_matrix.svg (messages and bytes per\n"
	        "                     pair of processes) and DIR/wait_states.svg (waiting per\n"
	        "                     process and pattern). Where the\n"
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
	        "                     had the truth outside the clock's bounds;\n"
	        "                     --event-truth=realtime: the same on real clocks of hosts\n"
	        "                     that share CLOCK_REALTIME (hclock check --truth realtime)\n"
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
	        "  --repair-order     before the outputs, move events in time (a receive\n"
	        "                     forward, a send back if its receive cannot move), each\n"
	        "                     within the clock's bounds its records carry, until no\n"
	        "                     message is received before its send (each thread's events\n"
	        "                     in their order): the raw files are repaired in place,\n"
	        "                     DIR/moved.csv lists every moved enter and leave, every\n"
	        "                     rank's outputs are written anew from them; a repair\n"
	        "                     that needs a move past a bound fails with the message\n"
	        "                     named (exit 1, the raw files unchanged). Holds the whole\n"
	        "                     trace in memory (about 35 bytes an event)\n"
	        "  --min-latency D    with --repair-order: no receive less than D after its send\n"
	        "                     (a number with unit ns, us, ms or s, a bare number seconds;\n"
	        "                     default 0)\n"
	        "  -h, --help\n\n"
	        "Each option's default comes from its variable when set: HCLOCK_TRACE_DIR, _SYNC,\n"
	        "_EMULATE, _FILTER, _BUFFER, _WHEN_FULL, _MAX_SIZE, _TRUTH (1 or 0). A bad value,\n"
	        "given either way, is refused before the program starts (exit 2); the tracer reads\n"
	        "the same variables (a program started without hclock trace) and ends the program\n"
	        "at MPI_Init on a bad one, with the same line and exit status 2 on every rank.\n");
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

/* the launcher's own options (the tracer has no setting for them) */
struct launch_opts {
	int repair;             /* --repair-order */
	int64_t min_latency_ns; /* --min-latency, ns */
};

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

/* ---- the summary ---------------------------------------------------------------------------- */

static void warn_line(void *ctx, const char *l)
{
	(void)ctx;
	fprintf(stderr, "hclock trace: %s\n", l);
}

/* how full buffers went and where recording stopped early, in the first line */
static void print_recording(const struct trace_summary *s)
{
	if (!s->n_wait)
		fprintf(stderr, "(when full: drop); ");
	else {
		fprintf(stderr, "(when full: wait; the program waited %.6f s for the writer, %llu "
		        "times, summed over its processes and threads", s->waited_ns * 1e-9,
		        (unsigned long long)s->waits);
		if (s->n_gave_up)
			fprintf(stderr, "; a wait reached its deadline on %d of %d processes, which "
			        "dropped from then on", s->n_gave_up, s->size);
		fprintf(stderr, "); ");
	}
	if (s->n_size || s->n_disk) {
		fprintf(stderr, "recording stopped early on %d of %d processes (", s->n_size + s->n_disk,
		        s->size);
		if (s->n_size)
			fprintf(stderr, "%d: max-size reached%s", s->n_size, s->n_disk ? "; " : "");
		if (s->n_disk)
			fprintf(stderr, "%d: %s, %s", s->n_disk, s->disk_errno == ENOSPC ||
			        s->disk_errno == EDQUOT ? "disk full" : "a write failed",
			        strerror(s->disk_errno));
		fprintf(stderr, "), the records after it lost (in the dropped count); ");
	}
}

/* the first line: processes, events, bytes, drops, messages */
static void print_counts(const struct trace_summary *s)
{
	const struct trace_counts *tot = &s->total;
	const struct trace_pairing *pr = &s->pairing;
	int live = s->size - s->missing;
	double span = s->t_last > s->t_first ? (s->t_last - s->t_first) * 1e-9 : 0;
	fprintf(stderr, "hclock trace: %d processes (%d finished MPI_Finalize, %d left no file), "
	        "%llu events (%.0f per second per process), %llu bytes of records (%.0f per "
	        "process), %llu dropped ", s->size, s->finished, s->missing,
	        (unsigned long long)tot->records, span > 0 && live ? tot->records / span / live : 0.0,
	        (unsigned long long)tot->raw_bytes, live ? (double)tot->raw_bytes / live : 0.0,
	        (unsigned long long)tot->dropped);
	print_recording(s);
	if (pr->done)
		fprintf(stderr, "%zu messages paired, %llu unpaired, %llu inversions (receive before "
		        "send on the global clock); order (send before receive) proven by the clock's "
		        "bounds for %llu, shown by the estimate only for %llu, %llu without bounds\n",
		        pr->paired, (unsigned long long)pr->unpaired, (unsigned long long)pr->inversions,
		        (unsigned long long)pr->proven, (unsigned long long)pr->estimated,
		        (unsigned long long)pr->unknown);
	else
		fprintf(stderr, "%llu sends, %llu receives (paired by their ids; unpaired ones and "
		        "inversions are counted for traces of at most %llu events, or with --json)\n",
		        (unsigned long long)tot->sends, (unsigned long long)tot->recvs,
		        (unsigned long long)STREAM_JSON_LIMIT);
}

/* the second line: rank 0's header and trailer (the clock, the drift check) and the
 * continuous clock's exchanges as each process's tracer left them, summed into *cont */
static void print_clock(const struct trace_summary *s, struct mpitool_cont *cont)
{
	const struct rec_header *h = &s->header;
	const struct trace_counts *p0 = &s->proc[0];
	if (s->have_header && h->magic[0])
		fprintf(stderr, "hclock trace: clock %s on %s; sync at MPI_Init %.3f s", h->sync,
		        h->clock, h->sync_ns * 1e-9);
	if (p0->finished && !isnan(p0->drift_max)) {
		char dc[200];
		profile_drift_text(dc, sizeof(dc), p0->drift_max, p0->drift_unc, p0->drift_true);
		fprintf(stderr, "; drift check at MPI_Finalize: %s", dc);
	} else {
		fprintf(stderr, "; no drift check (rank 0 did not finish MPI_Finalize)");
	}
	*cont = (struct mpitool_cont){.failed_rank = -1};
	double *cs = calloc((size_t)s->size * MPITOOL_CONT_N, sizeof(double));
	for (int r = 0; cs && r < s->size; r++) {
		const struct trace_counts *p = &s->proc[r];
		double *a = cs + MPITOOL_CONT_N * r; /* round trip and noise: not in the counters */
		a[0] = (double)p->clock.exchanges;
		a[1] = (double)p->clock.timeouts;
		a[2] = p->clock.thread_cpu_us < 0 ? -1 : (double)p->clock.thread_cpu_us * 1e-6;
		a[3] = p->have && p->have_clock;
	}
	if (cs)
		mpitool_cont_sum(s->size, cs, cont);
	free(cs);
	if (cont->have) {
		char text[200];
		mpitool_cont_text(text, sizeof(text), cont);
		fprintf(stderr, "; continuous clock: %s", text);
	}
}

/* the third line: the tracer's time, the outputs written */
static void print_outputs(const char *dir, const struct trace_summary *s)
{
	const struct trace_counts *tot = &s->total;
	char json_note[200] = "", pf_note[300] = "";
	if (s->json == TRACE_JSON_NO_PART)
		snprintf(json_note, sizeof(json_note), "; trace.json skipped (a process could not "
		         "write its part: %s)", s->n_disk ? "the disk was full" : "a write failed");
	else if (s->json == TRACE_JSON_TOO_BIG)
		snprintf(json_note, sizeof(json_note), "; trace.json skipped (%llu events, above %llu: "
		         "too big for a JSON viewer; --json writes it)", (unsigned long long)tot->records,
		         (unsigned long long)STREAM_JSON_LIMIT);
	if (s->order_bytes)
		snprintf(pf_note, sizeof(pf_note), " and %llu bytes of message order marks",
		         (unsigned long long)s->order_bytes);
	if (s->n_pf_cut)
		snprintf(pf_note + strlen(pf_note), sizeof(pf_note) - strlen(pf_note), " (the parts of "
		         "%d process%s cut short: %s; each ends where none of its calls was open)",
		         s->n_pf_cut, s->n_pf_cut > 1 ? "es" : "", strerror(s->pf_errno));
	fprintf(stderr, "\nhclock trace: tracer time (largest process): %.3f s (%lld ns per event); "
	        "written to %s/trace.pftrace (%llu bytes, %.1f per event)%s%s%s%s\n",
	        s->overhead_max_ns * 1e-9, (long long)s->rec_cost_ns, dir,
	        (unsigned long long)tot->pf_bytes,
	        tot->records ? (double)tot->pf_bytes / tot->records : 0.0, pf_note,
	        json_note[0] ? "" : ", trace.json", s->otf2 ? ", traces.otf2" : "", json_note);
}

/* the repair of the message order, a line of the summary */
static void print_repair(const struct trace_summary *s)
{
	const struct trace_reorder_result *r = &s->repair;
	if (!s->repaired)
		return;
	fprintf(stderr, "hclock trace: repaired order: %llu events moved (either way), at most "
	        "%lld ns; %llu receives were before their send", (unsigned long long)r->moved,
	        (long long)r->moved_max_ns, (unsigned long long)r->inverted);
	if (r->unbounded_moved)
		fprintf(stderr, "; %llu of the moved events had no upper bound (after the last bounded "
		        "event of their thread: not checked)", (unsigned long long)r->unbounded_moved);
	fprintf(stderr, " (of %llu messages in the repair; the moved events in moved.csv)\n",
	        (unsigned long long)r->messages);
}

/* DIR's outputs (trace/assemble.h) and the summary. Returns 0 or 1 */
static int convert(const char *dir, int redo, int json_forced, const struct launch_opts *lo)
{
	struct trace_assemble_opts o = {.redo = redo, .json_forced = json_forced,
	                                .repair_order = lo->repair,
	                                .min_latency_ns = lo->min_latency_ns, .warn = warn_line};
	struct trace_summary s;
	if (trace_assemble(dir, &o, &s)) {
		trace_summary_free(&s);
		return 1;
	}
	struct mpitool_cont cont;
	print_counts(&s);
	print_repair(&s);
	print_clock(&s, &cont);
	print_outputs(dir, &s);
	mpitool_cont_warn("hclock trace", &cont);
	int rc = s.failed != 0;
	if (!s.profile_written) {
		fprintf(stderr, "hclock trace: writing %s/profile.txt and profile.json failed: %s\n",
		        dir, s.prof ? strerror(s.profile_errno) : "out of memory");
		rc = 1;
	} else {
		profile_summary(s.prof, stderr, 5);
		fprintf(stderr, "hclock trace: profile in %s/profile.txt and profile.json\n", dir);
	}
	trace_summary_free(&s);
	return rc;
}

/* ---- the launcher --------------------------------------------------------------------------- */

/* --repair-order's and --min-latency's values checked into lo; -1, or the exit code */
static int launch_opts_check(struct launch_opts *lo, const char *min_latency)
{
	if (min_latency && !lo->repair) {
		line("--min-latency %s: it sets the least latency of --repair-order; add "
		     "--repair-order, or drop --min-latency", min_latency);
		return 2;
	}
	if (min_latency && parse_duration_ns(min_latency, strlen(min_latency), 0,
	                                     (INT64_C(1) << 62) - 1, &lo->min_latency_ns)) {
		line("--min-latency %s: expected %s, from 0 to 2^62 ns", min_latency,
		     PARSE_DURATION_RULE);
		return 2;
	}
#ifndef HCLOCK_HAVE_ALIGN
	if (lo->repair) {
		line("--repair-order is not available: this hclock was built without hclock align "
		     "(cmake -DHCLOCK_ALIGN=ON)");
		return 2;
	}
#endif
	return -1;
}

/* the options into given (trace/settings.h's), *conv and lo; -1, or the exit code */
static int parse(int argc, char **argv, const char **given, const char **conv,
                 struct launch_opts *lo)
{
	static const struct option opts[] = {
		{"output", required_argument, 0, 'o'}, {"sync", required_argument, 0, 's'},
		{"emulate", required_argument, 0, 'e'}, {"filter", required_argument, 0, 'f'},
		{"buffer", required_argument, 0, 'b'}, {"convert", required_argument, 0, 'c'},
		{"max-size", required_argument, 0, 'm'}, {"when-full", required_argument, 0, 'W'},
		{"event-truth", optional_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
		{"repair-order", no_argument, 0, 'R'}, {"min-latency", required_argument, 0, 'L'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *min_latency = NULL;
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
		case 'c': *conv = optarg; break;
		case 't': given[TS_TRUTH] = optarg ? optarg : "1"; break;
		case 'j': given[TS_JSON] = "1"; break;
		case 'R': lo->repair = 1; break;
		case 'L': min_latency = optarg; break;
		case 'h': usage(stdout); return 0;
		default:
			line("%s: unknown option or missing value (hclock trace --help)",
			     argv[optind - 1]);
			return 2;
		}
	}
	return launch_opts_check(lo, min_latency);
}

/* the output directory, absolute (the program may change its working directory), made and
 * writable, and its raw folder. Returns 0 or 2 */
static int out_dir(const char *dir, char *absdir, size_t len, char *raw, size_t rlen)
{
	if (dir[0] == '/') {
		if (path_fmt(absdir, len, "%s", dir))
			absdir[0] = 0;
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd))) {
			line("cannot find the working directory: %s", strerror(errno));
			return 2;
		}
		if (path_fmt(absdir, len, "%s/%s", cwd, dir))
			absdir[0] = 0;
	}
	if (!absdir[0] || path_fmt(raw, rlen, "%s/raw", absdir)) {
		line("-o %s: the path is too long", dir);
		return 2;
	}
	if (path_mkdirs(raw) || access(raw, W_OK)) {
		line("cannot write to %s: %s (give -o a writable directory)", absdir, strerror(errno));
		return 2;
	}
	return 0;
}

/* the marks a launcher of an earlier run in this directory may have left, removed */
static void clear_marks(const char *raw, const char *mk)
{
	char p[PATH_MAX + 64];
	path_fmt(p, sizeof(p), "%s/%s", raw, mk);
	remove(p);
	if (g_rank == 0) {
		path_fmt(p, sizeof(p), "%s/merged", raw);
		remove(p);
		path_fmt(p, sizeof(p), "%s/failed", raw);
		remove(p);
	}
}

/* the program's environment: the tracer preloaded, the settings. Returns 0 or 2 */
static int set_env(const char *lib, struct trace_settings *set)
{
	const char *pre = getenv("LD_PRELOAD");
	char *ld = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
	if (!ld)
		return 2;
	sprintf(ld, "%s%s%s", lib, pre && *pre ? ":" : "", pre && *pre ? pre : "");
	setenv("LD_PRELOAD", ld, 1);
	free(ld);
	return trace_settings_to_env(set) ? 2 : 0;
}

/* rank 0's launcher: disk held back for the outputs (stream.h) in reserve (a path of len
 * bytes), should the program fill it; reserve stays "" on other ranks */
static void hold_reserve(const char *raw, char *reserve, size_t len)
{
	if (g_rank != 0)
		return;
	long long want = (long long)world_size() * STREAM_RESERVE_BYTES;
	path_fmt(reserve, len, "%s/reserve.launcher", raw);
	int fd = open(reserve, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	/* fallocate, not posix_fallocate: where the file system cannot allocate (NFS), no
	 * reserve rather than 64 MiB of zeros written */
	if (fd < 0 || fallocate(fd, 0, 0, want < STREAM_RESERVE_LAUNCHER_MAX ? want :
	                        STREAM_RESERVE_LAUNCHER_MAX))
		remove(reserve);
	if (fd >= 0)
		close(fd);
}

/* run prog as a child, signals passed on, and wait for it: 0 with its wait status in
 * *status, or the exit code when it could not run (2: no pipe or fork, 126, 127: no exec) */
static int run(char **prog, const char *reserve, int *status)
{
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
	*status = 0;
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(e))
		return 0;
	if (reserve[0])
		remove(reserve);
	line("cannot run %s: %s", prog[0], strerror(e));
	return e == ENOENT ? 127 : 126;
}

/* one line a job: from the first of the tracer (MPI_Abort) and the launchers to see a
 * program die or fail (mpirun then ends the others, whose lines would only say that) */
static void say_failure(const char *prog, const char *absdir, int status, int prc)
{
	if (WIFSIGNALED(status) && mark(absdir, "failed", 1))
		err_line("hclock trace", "%s (rank %d) died of signal %d (%s); its records up to then "
		         "are in %s/raw (hclock trace --convert %s writes the trace from them)", prog,
		         g_rank, WTERMSIG(status), strsignal(WTERMSIG(status)), absdir, absdir);
	else if (prc && mark(absdir, "failed", 1))
		err_line("hclock trace", "%s (rank %d) exited with code %d; its records are in %s/raw "
		         "(hclock trace --convert %s writes the trace from them, should %s/trace.json "
		         "not appear)", prog, g_rank, prc, absdir, absdir, absdir);
}

/* the outputs; after a failure (prc) the others' programs may never end (their partner is
 * gone): wait briefly, convert what is there (hclock trace --convert can redo it). Returns
 * what convert returned (rank 0), else 0 */
static int outputs(const char *absdir, const char *mk, int prc, int json,
                   const struct launch_opts *lo)
{
	int rc = 0, all = 0;
	mark(absdir, mk, 0);
	int size = world_size(), limit_ms = prc ? 2000 : 60000;
	if (g_rank == 0) {
		for (int waited = 0; waited < limit_ms && !all; waited += 20) {
			all = 1;
			for (int r = 0; r < size && all; r++) {
				char d[32];
				snprintf(d, sizeof(d), "done.%d", r);
				all = marked(absdir, d);
			}
			if (!all)
				real_delay_ns(20000000);
		}
		/* a program still running may still write its raw file: no repair in place */
		struct launch_opts now = *lo;
		if (lo->repair && !all) {
			line("--repair-order: not done, the programs of some ranks had not ended; once "
			     "they have, hclock trace --convert %s --repair-order repairs the order",
			     absdir);
			now.repair = 0;
		}
		rc = convert(absdir, now.repair, json, &now) || (lo->repair && !now.repair);
		mark(absdir, "merged", 0);
	} else if (!prc) {
		for (int waited = 0; waited < 120000 && !marked(absdir, "merged"); waited += 20)
			real_delay_ns(20000000);
	}
	return rc;
}

/* the program prog run traced with settings set. Returns its exit code, or 2; with
 * --repair-order, 1 from rank 0 when the program exited 0 but its outputs failed (the repair
 * among them) */
static int launch(struct trace_settings *set, char **prog, const struct launch_opts *lo)
{
	char absdir[PATH_MAX], raw[PATH_MAX + 8], lib[PATH_MAX];
	int rc = out_dir(set->dir, absdir, sizeof(absdir), raw, sizeof(raw));
	if (rc)
		return rc;
	if (find_lib(lib, sizeof(lib))) {
		line("cannot find libhclock_trace.so (looked next to this hclock, in ../lib; set "
		     "HCLOCK_TRACE_LIB to its path)");
		return 2;
	}
	char mk[64];
	snprintf(mk, sizeof(mk), "done.%d", g_rank);
	clear_marks(raw, mk);
	set->dir = absdir;
	if (set_env(lib, set))
		return 2;
	char reserve[PATH_MAX + 64] = "";
	hold_reserve(raw, reserve, sizeof(reserve));
	int status;
	if ((rc = run(prog, reserve, &status)))
		return rc;
	int prc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	say_failure(prog[0], absdir, status, prc);
	if (reserve[0])
		remove(reserve);
	int orc = outputs(absdir, mk, prc, set->json, lo);
	return prc ? prc : lo->repair && orc ? 1 : 0;
}

int cmd_trace(int argc, char **argv)
{
	const char *given[TS_COUNT] = {0}, *conv = NULL;
	struct launch_opts lo = {0};
	g_rank = my_rank();
	int rc = parse(argc, argv, given, &conv, &lo);
	if (rc >= 0)
		return rc;
	if (conv)
		return convert(conv, 1, given[TS_JSON] != NULL, &lo);
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
	return launch(&set, argv + optind, &lo);
}
