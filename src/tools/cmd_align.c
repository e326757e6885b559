/*
 * cmd_align.c - hclock align: put traces recorded on separate machines on one timeline, with
 * guaranteed accuracy bounds. Serial, no MPI; a thin shell over include/hclock_align.h in
 * three steps: parse the command line, run the alignment, write and report.
 *
 * Exit status: 0 success, 1 bad input or a failure at run time (one line on stderr from the
 * library's error line), 2 bad command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hclock_align.h"
#include "align/outset.h"
#include "tools/cmd.h"
#include "util/parse.h"

static void usage(FILE *f)
{
	const char *name, *help;

	fputs("usage: hclock align INPUTS... --out DIR [--reference NODE]\n"
	      "                    [--format table|json|csv] [--bounds FILE] [--plot FILE.svg]\n"
	      "                    [--segments auto|DURATION] [--mode hull|regression]\n"
	      "                    [--estimate bisector|mean] [--min-latency DURATION]\n"
	      "                    [--unmatched skip|fail] [--repair-order [--moved FILE]]\n"
	      "\n"
	      "Put per-node traces on the timeline of one reference node, by the accuracy-\n"
	      "reporting convex hull algorithm: no message is shown arriving before it left, and\n"
	      "every corrected time comes with strict bounds.\n"
	      "\n"
	      "  INPUTS              trace files, one per node, or directories of them, all of one\n"
	      "                      format; the first format that recognises an input reads it:\n",
	      f);
	for (size_t i = 0; (name = hclock_align_format(i, &help)); i++)
		fprintf(f, "                        %-6s %s\n", name, help);
	fputs("  --out DIR           write the corrected traces there (same format; atomic)\n"
	      "  --reference NODE    reference timeline: a node's name (host name for pcap and\n"
	      "                      CTF) or its input; default: the node minimising the total\n"
	      "                      bound over all nodes, the first input on ties\n"
	      "  --format F          report on stdout: table (default), json or csv\n"
	      "  --bounds FILE       CSV node,time_ns,corrected_ns,delta_minus_ns,delta_plus_ns\n"
	      "  --plot FILE.svg     accuracy bands and broadcast differential delays over time\n"
	      "  --segments S        when the hulls intersect (non-linear clocks): auto splits the\n"
	      "                      trace where needed, a DURATION (e.g. 600s, 10m) into fixed\n"
	      "                      intervals, joined continuously; default: one line, fallback\n"
	      "  --mode M            hull (default) or regression (for comparison, no guarantee)\n"
	      "  --estimate E        the line inside the hull corridor: bisector (Duda, default)\n"
	      "                      or mean (of the extreme lines, as Trace Compass); same bounds\n"
	      "  --unmatched U       a send or recv without its other side (traces cut at their\n"
	      "                      ends, lost packets): skip (default; counted per pair in the\n"
	      "                      report) or fail\n"
	      "  --min-latency D     minimum one-way latency for 'too fast' messages, a DURATION\n"
	      "                      (e.g. 20us); default: half the smallest corrected round trip\n"
	      "                      of each pair\n"
	      "  --repair-order      after the alignment, move events (a receive forward, a send\n"
	      "                      back if its receive cannot move), each within its bounds,\n"
	      "                      until no message is received before its send (plus\n"
	      "                      --min-latency if given) and every node keeps its order;\n"
	      "                      fails naming the message if a bound does not allow it\n"
	      "  --moved FILE        with --repair-order: CSV node,time_ns,corrected_ns,\n"
	      "                      repaired_ns,shift_ns (signed) of every event moved\n"
	      "\n"
	      "DURATION: a number with a unit ns, us, ms, s, m or h; a bare number is seconds.\n",
	      f);
}

struct outpath {
	const char *path;
	char *tmp;
};

/* the command line */
struct args {
	const char **inputs;
	size_t nin;
	const char *outdir;
	int json; /* HCLOCK_ALIGN_REPORT_* */
	struct outpath bounds, plot, moved;
	struct hclock_align_opts o;
};

static const char *const options[] = {"--out", "--reference", "--format", "--bounds", "--plot",
                                      "--segments", "--mode", "--min-latency", "--estimate",
                                      "--unmatched", "--moved"};

/* one option's value into g; returns 0, or 2 after one line on stderr */
static int set_option(struct args *g, const char *name, const char *val)
{
	if (!strcmp(name, "--out")) {
		g->outdir = val;
	} else if (!strcmp(name, "--reference")) {
		g->o.reference = val;
	} else if (!strcmp(name, "--format")) {
		if (!strcmp(val, "table"))
			g->json = HCLOCK_ALIGN_REPORT_TABLE;
		else if (!strcmp(val, "json"))
			g->json = HCLOCK_ALIGN_REPORT_JSON;
		else if (!strcmp(val, "csv"))
			g->json = HCLOCK_ALIGN_REPORT_CSV;
		else
			goto bad;
	} else if (!strcmp(name, "--bounds")) {
		g->bounds.path = val;
	} else if (!strcmp(name, "--plot")) {
		g->plot.path = val;
	} else if (!strcmp(name, "--moved")) {
		g->moved.path = val;
	} else if (!strcmp(name, "--segments")) {
		if (!strcmp(val, "auto"))
			g->o.segments_ns = HCLOCK_ALIGN_SEGMENTS_AUTO;
		else if (parse_duration_ns(val, strlen(val), 1, INT64_MAX, &g->o.segments_ns))
			goto bad;
	} else if (!strcmp(name, "--mode")) {
		if (!strcmp(val, "hull"))
			g->o.mode = HCLOCK_ALIGN_HULL;
		else if (!strcmp(val, "regression"))
			g->o.mode = HCLOCK_ALIGN_REGRESSION;
		else
			goto bad;
	} else if (!strcmp(name, "--estimate")) {
		if (!strcmp(val, "bisector"))
			g->o.estimate = HCLOCK_ALIGN_BISECTOR;
		else if (!strcmp(val, "mean"))
			g->o.estimate = HCLOCK_ALIGN_MEAN;
		else
			goto bad;
	} else if (!strcmp(name, "--unmatched")) {
		if (strcmp(val, "skip") && strcmp(val, "fail"))
			goto bad;
		g->o.unmatched_fail = !strcmp(val, "fail");
	} else if (parse_duration_ns(val, strlen(val), 0, INT64_MAX, &g->o.min_latency_ns)) {
		goto bad; /* --min-latency */
	}
	return 0;
bad:
	fprintf(stderr, "hclock align: %s %s: expected %s\n", name, val,
	        !strcmp(name, "--format") ? "table, json or csv" :
	        !strcmp(name, "--estimate") ? "bisector or mean" :
	        !strcmp(name, "--unmatched") ? "skip or fail" :
	        !strcmp(name, "--mode") ? "hull or regression" :
	        !strcmp(name, "--segments") ? "auto or a positive duration: a number with unit ns, "
	                                      "us, ms, s, m or h; a bare number is seconds" :
	        "a non-negative duration (e.g. 20us): " PARSE_DURATION_RULE);
	return 2;
}

/* argv into g; returns 0 to run, -1 after --help, 2 after one line on stderr */
static int parse_args(int argc, char **argv, struct args *g)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '=');
		size_t len = eq ? (size_t)(eq - arg) : strlen(arg), k = 0;

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(stdout);
			return -1;
		}
		if (!strcmp(arg, "--")) {
			while (++i < argc)
				g->inputs[g->nin++] = argv[i];
			break;
		}
		if (strncmp(arg, "--", 2) || !arg[2]) {
			g->inputs[g->nin++] = arg;
			continue;
		}
		if (!strncmp(arg, "--repair-order", len) && len == strlen("--repair-order")) {
			if (eq) {
				fprintf(stderr, "hclock align: --repair-order takes no value; see "
				        "hclock align --help\n");
				return 2;
			}
			g->o.repair_order = 1;
			continue;
		}
		while (k < sizeof(options) / sizeof(*options) &&
		       (strlen(options[k]) != len || strncmp(options[k], arg, len)))
			k++;
		if (k == sizeof(options) / sizeof(*options)) {
			fprintf(stderr, "hclock align: unknown option '%s'; see hclock align --help\n",
			        arg);
			return 2;
		}
		if (!eq && i + 1 >= argc) {
			fprintf(stderr, "hclock align: %s needs a value; see hclock align --help\n", arg);
			return 2;
		}
		if (set_option(g, options[k], eq ? eq + 1 : argv[++i]))
			return 2;
	}
	if (!g->nin) {
		fprintf(stderr, "hclock align: no INPUTS given; see hclock align --help\n");
		return 2;
	}
	if (!g->outdir) {
		fprintf(stderr, "hclock align: --out DIR is required (where the corrected traces go)\n");
		return 2;
	}
	if (g->moved.path && !g->o.repair_order) {
		fprintf(stderr, "hclock align: --moved %s lists the events --repair-order moves; add "
		        "--repair-order, or drop --moved\n", g->moved.path);
		return 2;
	}
	return 0;
}

/* the library's error line (or the code's description if it gave none); exit status 1 */
static int fail(int code, const char *err)
{
	fprintf(stderr, "hclock align: %s\n", err[0] ? err : hclock_strerror(code));
	return 1;
}

/* the newline-separated lines of w on stderr, each "hclock align: " tag line */
static void print_lines(const char *w, const char *tag)
{
	while (*w) {
		const char *nl = strchr(w, '\n');
		int len = nl ? (int)(nl - w) : (int)strlen(w);
		fprintf(stderr, "hclock align: %s%.*s\n", tag, len, w);
		w += len + (nl != NULL);
	}
}

/* the warnings not printed yet, one "warning:" line each */
static void print_warnings(const hclock_align *a, size_t *done)
{
	print_lines(hclock_align_warnings(a) + *done, "warning: ");
	*done = strlen(hclock_align_warnings(a));
}

/* write fn's output completely under a temporary name next to o->path */
static int out_prepare(struct outpath *o, const hclock_align *a,
                       int (*fn)(const hclock_align *, FILE *))
{
	size_t n = strlen(o->path) + 16;
	FILE *f;
	int fd, r;

	o->tmp = malloc(n);
	if (!o->tmp)
		return fail(HCLOCK_ENOMEM, "");
	snprintf(o->tmp, n, "%s.tmpXXXXXX", o->path);
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		fprintf(stderr, "hclock align: %s: cannot create: %s\n", o->path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return 1;
	}
	f = outset_mode(fd, o->tmp, 0) ? NULL : fdopen(fd, "w");
	if (!f) {
		close(fd);
		r = HCLOCK_EIO;
	} else {
		r = fn(a, f);
		if (fclose(f))
			r = HCLOCK_EIO;
	}
	if (r)
		fprintf(stderr, "hclock align: %s: write error\n", o->path);
	return r ? 1 : 0;
}

/* the file under its final name */
static int out_commit(struct outpath *o)
{
	if (o->tmp && rename(o->tmp, o->path)) {
		fprintf(stderr, "hclock align: %s: %s\n", o->path, strerror(errno));
		return 1;
	}
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

static void out_discard(struct outpath *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

/* the outputs: nothing appears under its final name until everything is complete */
static int write_outputs(struct args *g, hclock_align *a, size_t *warned, size_t noted)
{
	char err[1024] = "";
	int r;

	if (g->bounds.path && out_prepare(&g->bounds, a, hclock_align_bounds_csv))
		return 1;
	if (g->plot.path && out_prepare(&g->plot, a, hclock_align_plot_svg))
		return 1;
	if (g->moved.path && out_prepare(&g->moved, a, hclock_align_moved_csv))
		return 1;
	r = hclock_align_write(a, g->outdir, err, sizeof(err));
	print_lines(hclock_align_notes(a) + noted, ""); /* what the writer said */
	print_warnings(a, warned);
	if (r)
		return fail(r, err);
	return out_commit(&g->bounds) || out_commit(&g->plot) || out_commit(&g->moved);
}

/* read, align, write, report; returns the exit status */
static int run(struct args *g)
{
	hclock_align *a = NULL;
	char err[1024] = "";
	size_t warned = 0, noted = 0;
	int r = hclock_align_open(g->inputs, g->nin, &a, err, sizeof(err));

	if (!r) {
		print_lines(hclock_align_notes(a), "");
		noted = strlen(hclock_align_notes(a));
		r = hclock_align_run(a, &g->o, err, sizeof(err));
	}
	if (r) {
		r = fail(r, err);
	} else {
		print_warnings(a, &warned);
		r = write_outputs(g, a, &warned, noted);
	}
	if (!r && (hclock_align_report(a, stdout, g->json) || fflush(stdout))) {
		fprintf(stderr, "hclock align: cannot write the report\n");
		r = 1;
	}
	out_discard(&g->bounds);
	out_discard(&g->plot);
	out_discard(&g->moved);
	hclock_align_free(a);
	return r;
}

int cmd_align(int argc, char **argv)
{
	struct args g = {0};
	int r;

	g.inputs = calloc((size_t)argc + 1, sizeof(*g.inputs));
	if (!g.inputs)
		return fail(HCLOCK_ENOMEM, "");
	hclock_align_opts_init(&g.o);
	r = parse_args(argc, argv, &g);
	if (r == 0)
		r = run(&g);
	else if (r < 0)
		r = 0;
	free(g.inputs);
	return r;
}
