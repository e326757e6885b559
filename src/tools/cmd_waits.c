/*
 * cmd_waits.c - hclock waits: the wait-state analysis (docs/waits.md) on any OTF2 archive.
 *
 *   hclock waits ARCHIVE [--align [--reference NODE]] [--json] [-o DIR] [--truth DIR]
 *
 * A thin shell: the options, the archive read into the analysis (trace/otf2_waits.h), with
 * --align every time first put on one timeline with its strict bounds by hclock align
 * (include/hclock_align.h), and the report hclock trace's profile prints (waitreport.h), the
 * plots beside it (waitplot.h).
 *
 * Exit status: 0 done; 2 bad input (an option, no archive or not OTF2, an unknown --reference,
 * a --truth directory without truth files), one line on stderr; 1 a failure on the way (an
 * archive hclock align cannot align, events cut short, no memory, an output not written).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef HCLOCK_HAVE_ALIGN
#include "hclock_align.h"
#endif
#include "hclock_api.h"
#include "tools/cmd.h"
#include "trace/otf2_waits.h"
#include "trace/waitplot.h"
#include "trace/waitreport.h"
#include "util/path.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: hclock waits ARCHIVE [--align [--reference NODE]] [--json] [-o DIR]\n"
	        "                    [--truth DIR]\n"
	        "The wait states of an MPI run (late sender, late receiver, wait at N x N and at\n"
	        "barrier, late broadcast, early reduce, wrong order) from any OTF2 archive: one of\n"
	        "hclock trace, one hclock align corrected, one of another tool (Score-P). The same\n"
	        "report as the wait-state section of hclock trace's profile.txt.\n\n"
	        "  ARCHIVE            the archive's anchor file NAME.otf2, or its directory\n"
#ifdef HCLOCK_HAVE_ALIGN
	        "  --align            first put every time on one timeline with strict bounds\n"
	        "                     (hclock align's convex hulls over the archive's messages,\n"
	        "                     which need messages both ways along a path between every\n"
	        "                     two processes): the waiting times get intervals, and what\n"
	        "                     they prove is said; without it the archive's times are taken\n"
	        "                     as they are, with no bounds: estimates only, nothing proven\n"
	        "  --reference NODE   with --align: the timeline's process (MPI_Rank_0: a process's\n"
	        "                     name with characters outside [A-Za-z0-9._-] made '_');\n"
	        "                     default: the one hclock align chooses\n"
#else
	        "  --align            not in this build (HCLOCK_ALIGN=OFF): putting the times on\n"
	        "                     one timeline with strict bounds needs hclock align; without\n"
	        "                     it, estimates only, nothing proven\n"
	        "  --reference NODE   with --align\n"
#endif
	        "  --json             one JSON object instead of the text (profile.json's\n"
	        "                     wait_states)\n"
	        "  -o, --output DIR   also write DIR/comm_matrix.svg (messages and bytes per pair\n"
	        "                     of processes) and DIR/wait_states.svg (waiting per process,\n"
	        "                     stacked by pattern); DIR is created if missing\n"
	        "  --truth DIR        the directory of hclock trace --emulate ... --event-truth\n"
	        "                     (its raw/truth.R): every instance also gets its true waiting\n"
	        "                     time, and the report counts those outside their interval\n"
	        "  -h, --help\n\n"
	        "Times are ns since the archive's global offset. The report on stdout, after a\n"
	        "note line on what its intervals rest on (on stderr with --json); warnings on\n"
	        "stderr. Exit status: 0 done, 2 bad input, 1 a failure on the way.\n");
}

struct args {
	const char *archive, *reference, *out, *truth;
	int align, json;
};

/* the options into g; -1 to go on, else the exit status */
static int parse(int argc, char **argv, struct args *g)
{
	static const struct option opts[] = {
		{"align", no_argument, 0, 'a'}, {"reference", required_argument, 0, 'r'},
		{"json", no_argument, 0, 'j'}, {"output", required_argument, 0, 'o'},
		{"truth", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': g->align = 1; break;
		case 'r': g->reference = optarg; break;
		case 'j': g->json = 1; break;
		case 'o': g->out = optarg; break;
		case 't': g->truth = optarg; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "hclock waits: %s: unknown option or missing value (hclock waits "
			        "--help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "hclock waits: needs one ARCHIVE (an OTF2 anchor file NAME.otf2 or "
		        "its directory), got %d (hclock waits --help)\n", argc - optind);
		return 2;
	}
	g->archive = argv[optind];
	if (g->reference && !g->align) {
		fprintf(stderr, "hclock waits: --reference %s needs --align (the reference is the "
		        "timeline hclock align puts the times on)\n", g->reference);
		return 2;
	}
#ifndef HCLOCK_HAVE_ALIGN
	if (g->align) {
		fprintf(stderr, "hclock waits: --align: this hclock was built without hclock align "
		        "(HCLOCK_ALIGN=OFF); build it with libpcap, OTF2 and babeltrace2, or leave "
		        "--align out (estimates only)\n");
		return 2;
	}
#endif
	struct stat sb;
	char raw[4200];
	if (g->truth && (path_fmt(raw, sizeof(raw), "%s/raw", g->truth) || stat(raw, &sb) ||
	                 !S_ISDIR(sb.st_mode))) {
		fprintf(stderr, "hclock waits: --truth %s: no directory %s; expected the trace "
		        "directory of hclock trace --emulate ... --event-truth (holding raw/truth.R)\n",
		        g->truth, raw);
		return 2;
	}
	if (g->out && path_mkdirs(g->out)) {
		fprintf(stderr, "hclock waits: -o %s: cannot create the directory: %s\n", g->out,
		        strerror(errno));
		return 2;
	}
	return -1;
}

#ifdef HCLOCK_HAVE_ALIGN
/* the archive aligned: its processes' nodes, and the widths of the bounds given */
struct aligned {
	hclock_align *a;
	size_t *node;             /* by process */
	double width_max, width_sum; /* dminus + dplus, ns */
	uint64_t n, unbounded;
};

static int64_t half(double d)
{
	return isfinite(d) && d >= 0 && d < (double)WAITS_NO_BOUND ? (int64_t)ceil(d)
	                                                            : WAITS_NO_BOUND;
}

static void bound(void *ctx, size_t p, struct waits_stamp *s)
{
	struct aligned *al = ctx;
	int64_t ref;
	double dm, dp;
	if (hclock_align_convert(al->a, al->node[p], s->t_ns, &ref, &dm, &dp)) {
		al->unbounded++;
		return;
	}
	s->t_ns = ref;
	s->below_ns = half(dm);
	s->above_ns = half(dp);
	if (s->below_ns < WAITS_NO_BOUND && s->above_ns < WAITS_NO_BOUND) {
		double w = dm + dp;
		al->width_sum += w;
		al->n++;
		if (w > al->width_max)
			al->width_max = w;
	} else {
		al->unbounded++;
	}
}

/* the newline-separated lines of w on stderr, each a warning */
static void warnings(const char *w)
{
	while (*w) {
		const char *nl = strchr(w, '\n');
		int len = nl ? (int)(nl - w) : (int)strlen(w);
		if (len)
			fprintf(stderr, "hclock waits: warning: hclock align: %.*s\n", len, w);
		w += len + (nl != NULL);
	}
}

/* align the archive, the reference checked first; the exit status, -1 to go on */
static int align_archive(const struct args *g, const otf2_waits *o, struct aligned *al)
{
	char err[1024] = "";
	const char *in[1] = {otf2_waits_anchor(o)};
	int r = hclock_align_open(in, 1, &al->a, err, sizeof(err));
	if (r) {
		fprintf(stderr, "hclock waits: --align: %s\n", err[0] ? err : hclock_strerror(r));
		return 1;
	}
	size_t nn = hclock_align_nnodes(al->a), np = otf2_waits_nprocs(o);
	if (g->reference) {
		size_t k = 0;
		while (k < nn && strcmp(hclock_align_node_name(al->a, k), g->reference))
			k++;
		if (k == nn) {
			fprintf(stderr, "hclock waits: --reference %s: no such process in %s; expected "
			        "one of:", g->reference, otf2_waits_anchor(o));
			for (k = 0; k < nn && k < 16; k++)
				fprintf(stderr, " %s", hclock_align_node_name(al->a, k));
			fprintf(stderr, "%s\n", nn > 16 ? " ..." : "");
			return 2;
		}
	}
	if (!(al->node = calloc(np + 1, sizeof(*al->node)))) {
		fprintf(stderr, "hclock waits: out of memory\n");
		return 1;
	}
	for (size_t p = 0; p < np; p++) {
		size_t k = 0;
		while (k < nn && strcmp(hclock_align_node_name(al->a, k), otf2_waits_proc_name(o, p)))
			k++;
		if (k == nn) {
			fprintf(stderr, "hclock waits: --align: process %s of %s is no node of hclock "
			        "align's; expected the same processes in both\n",
			        otf2_waits_proc_name(o, p), otf2_waits_anchor(o));
			return 1;
		}
		al->node[p] = k;
	}
	struct hclock_align_opts ao;
	hclock_align_opts_init(&ao);
	ao.reference = g->reference;
	if ((r = hclock_align_run(al->a, &ao, err, sizeof(err)))) {
		fprintf(stderr, "hclock waits: --align: %s\n", err[0] ? err : hclock_strerror(r));
		return 1;
	}
	warnings(hclock_align_warnings(al->a));
	return -1;
}
#endif

/* the one note line: what the intervals rest on */
static void note(FILE *f, const struct args *g, const void *al_, const struct trace_waits *tw)
{
	fprintf(f, "# hclock waits %s: ", g->archive);
#ifdef HCLOCK_HAVE_ALIGN
	const struct aligned *al = al_;
	if (al && al->a) {
		fprintf(f, "times on %s's timeline by hclock align, each with its strict bounds (width "
		        "mean %.0f ns, max %.0f ns; %" PRIu64 " times without); proven: what the bounds "
		        "show\n", hclock_align_node_name(al->a, hclock_align_reference(al->a)),
		        al->n ? al->width_sum / (double)al->n : 0.0, al->width_max, al->unbounded);
		return;
	}
#else
	(void)al_;
#endif
	fprintf(f, "the archive's times as they are, without bounds: %" PRIu64 " calls, every "
	        "waiting time an estimate, none proven (hclock waits --align gives them bounds)\n",
	        tw->calls);
}

static int run(const struct args *g)
{
	otf2_waits *o = NULL;
	struct trace_waits tw = {0};
	int r = otf2_waits_open(g->archive, &o);
	if (r) {
		fprintf(stderr, "hclock waits: %s\n", hclock_last_error());
		return r == HCLOCK_EINVAL ? 2 : 1;
	}
	int rc = -1;
	if (g->truth && (r = otf2_waits_truth(o, g->truth))) {
		fprintf(stderr, "hclock waits: --truth: %s\n", hclock_last_error());
		rc = r == HCLOCK_EINVAL ? 2 : 1;
	}
	struct otf2_waits_opts op = {.plot = g->out != NULL};
	void *alp = NULL;
#ifdef HCLOCK_HAVE_ALIGN
	struct aligned al = {0};
	if (rc < 0 && g->align && (rc = align_archive(g, o, &al)) < 0) {
		op.bound = bound;
		op.ctx = alp = &al;
	}
#endif
	if (rc < 0 && otf2_waits_run(o, &op, &tw)) {
		fprintf(stderr, "hclock waits: %s\n", hclock_last_error());
		rc = 1;
	}
	if (rc < 0) {
		int64_t mpi = otf2_waits_mpi_ns(o);
		note(g->json ? stderr : stdout, g, alp, &tw);
		if (g->json) {
			waitreport_json(&tw, mpi, stdout);
			fputc('\n', stdout);
		} else {
			waitreport_txt(&tw, mpi, stdout);
		}
		rc = 0;
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "hclock waits: cannot write the report: %s\n", strerror(errno));
			rc = 1;
		}
		if (g->out && waitplot_write(tw.plot, tw.w, otf2_waits_span_ns(o), g->out)) {
			fprintf(stderr, "hclock waits: %s\n", hclock_last_error());
			rc = 1;
		}
	}
	trace_waits_free(&tw);
#ifdef HCLOCK_HAVE_ALIGN
	hclock_align_free(al.a);
	free(al.node);
#endif
	otf2_waits_free(o);
	return rc;
}

int cmd_waits(int argc, char **argv)
{
	struct args g = {0};
	int r = parse(argc, argv, &g);
	return r >= 0 ? r : run(&g);
}
