/*
 * cmd_align.c - hclock align: put traces recorded on separate machines on one timeline, with
 * guaranteed accuracy bounds. Serial, no MPI; a thin shell over include/hclock_align.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hclock_align.h"
#include "tools/cmd.h"

static void usage(FILE *f)
{
	fputs("usage: hclock align INPUTS... --out DIR [--reference NODE] [--format table|json]\n"
	      "                    [--bounds FILE] [--plot FILE.svg] [--segments auto|DURATION]\n"
	      "                    [--mode hull|regression] [--min-latency NS]\n"
	      "\n"
	      "Put per-node traces on the timeline of one reference node, by the accuracy-\n"
	      "reporting convex hull algorithm: no message is shown arriving before it left, and\n"
	      "every corrected time comes with strict bounds.\n"
	      "\n"
	      "  INPUTS              trace files, one per node, or directories of them: NODE.csv\n"
	      "                      (event,id,peer,time_ns), pcap/pcapng captures, OTF2 archives\n"
	      "  --out DIR           write the corrected traces there (same format; atomic)\n"
	      "  --reference NODE    reference timeline (default: the node minimising the total\n"
	      "                      bound over all nodes)\n"
	      "  --format table|json report on stdout (default table)\n"
	      "  --bounds FILE       CSV node,time_ns,corrected_ns,delta_minus_ns,delta_plus_ns\n"
	      "  --plot FILE.svg     accuracy bands and broadcast differential delays over time\n"
	      "  --segments S        when the hulls intersect (non-linear clocks): auto splits the\n"
	      "                      trace where needed, DURATION (e.g. 600s, 10m) into fixed\n"
	      "                      intervals, joined continuously; default: one line, fallback\n"
	      "  --mode M            hull (default) or regression (for comparison, no guarantee)\n"
	      "  --min-latency NS    minimum one-way latency for 'too fast' messages (default:\n"
	      "                      half the smallest corrected round trip of each pair)\n",
	      f);
}

/* "250ms", "10s", "2m", "1h", "1500ns", "3us"; a bare number is ns if bare_ns */
static int parse_duration(const char *s, int bare_ns, int64_t *ns)
{
	static const struct {
		const char *u;
		double f;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !(v >= 0))
		return -1;
	if (!*end) {
		if (!bare_ns)
			return -1;
		*ns = (int64_t)v;
		return v < 9e18 ? 0 : -1;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++)
		if (!strcmp(end, units[i].u)) {
			v *= units[i].f;
			if (!(v < 9e18))
				return -1;
			*ns = (int64_t)(v + 0.5);
			return 0;
		}
	return -1;
}

struct outfile {
	const char *path;
	char *tmp;
};

/* write fn's output completely under a temporary name next to path */
static int out_prepare(struct outfile *o, const hclock_align *a,
                       int (*fn)(const hclock_align *, FILE *))
{
	size_t n = strlen(o->path) + 16;
	FILE *f;
	int fd, r;

	o->tmp = malloc(n);
	if (!o->tmp)
		return -ENOMEM;
	snprintf(o->tmp, n, "%s.tmpXXXXXX", o->path);
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		fprintf(stderr, "hclock align: %s: cannot create: %s\n", o->path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return -EIO;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		r = -EIO;
	} else {
		r = fn(a, f);
		if (fclose(f))
			r = -EIO;
	}
	if (r)
		fprintf(stderr, "hclock align: %s: write error\n", o->path);
	return r;
}

static void out_discard(struct outfile *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

int cmd_align(int argc, char **argv)
{
	const char **inputs = calloc((size_t)argc + 1, sizeof(*inputs));
	const char *outdir = NULL, *format = "table";
	struct outfile bounds = {0}, plot = {0};
	struct hclock_align_opts o;
	hclock_align *a = NULL;
	size_t nin = 0;
	char err[1024];
	int rc = 1;

	if (!inputs)
		return 1;
	hclock_align_opts_init(&o);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL, *eq;
		char name[32];

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(stdout);
			free(inputs);
			return 0;
		}
		if (strncmp(arg, "--", 2) || !arg[2]) {
			if (!strcmp(arg, "--")) {
				while (++i < argc)
					inputs[nin++] = argv[i];
				break;
			}
			inputs[nin++] = arg;
			continue;
		}
		eq = strchr(arg, '=');
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
		if (strcmp(name, "--out") && strcmp(name, "--reference") && strcmp(name, "--format") &&
		    strcmp(name, "--bounds") && strcmp(name, "--plot") && strcmp(name, "--segments") &&
		    strcmp(name, "--mode") && strcmp(name, "--min-latency")) {
			fprintf(stderr, "hclock align: unknown option '%s'; see hclock align --help\n",
			        arg);
			goto usage_err;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(stderr, "hclock align: %s needs a value; see hclock align --help\n", arg);
			goto usage_err;
		}
		if (!strcmp(name, "--out")) {
			outdir = val;
		} else if (!strcmp(name, "--reference")) {
			o.reference = val;
		} else if (!strcmp(name, "--format")) {
			if (strcmp(val, "table") && strcmp(val, "json")) {
				fprintf(stderr, "hclock align: --format %s: expected table or json\n", val);
				goto usage_err;
			}
			format = val;
		} else if (!strcmp(name, "--bounds")) {
			bounds.path = val;
		} else if (!strcmp(name, "--plot")) {
			plot.path = val;
		} else if (!strcmp(name, "--segments")) {
			if (!strcmp(val, "auto")) {
				o.segments_ns = HCLOCK_ALIGN_SEGMENTS_AUTO;
			} else if (parse_duration(val, 0, &o.segments_ns) || o.segments_ns <= 0) {
				fprintf(stderr, "hclock align: --segments %s: expected auto or a positive "
				        "duration with a unit (e.g. 600s, 10m, 1h)\n", val);
				goto usage_err;
			}
		} else if (!strcmp(name, "--mode")) {
			if (!strcmp(val, "hull")) {
				o.mode = HCLOCK_ALIGN_HULL;
			} else if (!strcmp(val, "regression")) {
				o.mode = HCLOCK_ALIGN_REGRESSION;
			} else {
				fprintf(stderr, "hclock align: --mode %s: expected hull or regression\n",
				        val);
				goto usage_err;
			}
		} else if (!strcmp(name, "--min-latency")) {
			if (parse_duration(val, 1, &o.min_latency_ns)) {
				fprintf(stderr, "hclock align: --min-latency %s: expected a non-negative "
				        "number of ns (or with a unit: 20us)\n", val);
				goto usage_err;
			}
		}
	}
	if (!nin) {
		fprintf(stderr, "hclock align: no INPUTS given; see hclock align --help\n");
		goto usage_err;
	}
	if (!outdir) {
		fprintf(stderr, "hclock align: --out DIR is required (where the corrected traces go)\n");
		goto usage_err;
	}

	if (hclock_align_open(inputs, nin, &a, err, sizeof(err)) ||
	    hclock_align_run(a, &o, err, sizeof(err))) {
		fprintf(stderr, "hclock align: %s\n", err);
		goto out;
	}
	{
		const char *w = hclock_align_warnings(a);
		while (*w) {
			const char *nl = strchr(w, '\n');
			int len = nl ? (int)(nl - w) : (int)strlen(w);
			fprintf(stderr, "hclock align: warning: %.*s\n", len, w);
			w += len + (nl != NULL);
		}
	}
	/* nothing appears under its final name until everything is complete */
	if (bounds.path && out_prepare(&bounds, a, hclock_align_bounds_csv))
		goto out;
	if (plot.path && out_prepare(&plot, a, hclock_align_plot_svg))
		goto out;
	if (hclock_align_write(a, outdir, err, sizeof(err))) {
		fprintf(stderr, "hclock align: %s\n", err);
		goto out;
	}
	if (bounds.tmp && rename(bounds.tmp, bounds.path)) {
		fprintf(stderr, "hclock align: %s: %s\n", bounds.path, strerror(errno));
		goto out;
	}
	if (plot.tmp && rename(plot.tmp, plot.path)) {
		fprintf(stderr, "hclock align: %s: %s\n", plot.path, strerror(errno));
		goto out;
	}
	free(bounds.tmp);
	free(plot.tmp);
	bounds.tmp = plot.tmp = NULL;
	if (hclock_align_report(a, stdout, !strcmp(format, "json")) || fflush(stdout)) {
		fprintf(stderr, "hclock align: cannot write the report\n");
		goto out;
	}
	rc = 0;
out:
	out_discard(&bounds);
	out_discard(&plot);
	hclock_align_free(a);
	free(inputs);
	return rc;
usage_err:
	free(inputs);
	return 2;
}
