/*
 * profile.c - the processes' counters summed into the trace's profile (profile.h).
 *
 * Memory is bounded by the number of functions and processes: a function's spread over
 * processes is kept as its least and most per-process total and the number of processes that
 * called it (a process that never did counts 0 toward the least).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/profile.h"
#include "trace/waitreport.h"
#include "trace/waitstate.h"
#include "util/grow.h"

#define HIST_BINS 64 /* as stream.c: bin 0 empty messages, bin k in [2^(k-1), 2^k) bytes */

struct pfunc {
	char name[64];
	uint64_t calls;
	int64_t total_ns, max_ns;     /* all processes; the largest single call */
	int64_t pmin_ns, pmax_ns;     /* least and most per-process total of the callers */
	uint64_t nproc;               /* processes that called it */
};

struct pproc {
	int rank;
	int64_t run_ns, mpi_ns;       /* first record to last; in MPI calls */
};

struct trace_profile {
	struct pfunc *f;
	size_t nf, fcap;
	struct pproc *p;
	size_t np, pcap;
	uint64_t hist[HIST_BINS], msg_bytes;
	int have_order;
	uint64_t order[3];            /* proven, estimated, without bounds */
	int have_repair;              /* the repair of the message order: */
	uint64_t repair_moved, repair_msgs, repair_unbounded; /* events moved, messages, moved
	                                 without an upper bound */
	int64_t repair_max_ns;        /* ... the largest move, ns */
	/* the drift check at MPI_Finalize (the process whose counters have it: rank 0), ns;
	 * NAN: none */
	double drift_max_ns, drift_unc_ns, drift_true_ns;
	/* the record buffers: records dropped, the processes that waited for the writer
	 * (--when-full wait), those whose wait gave up, their waits and time waited (ns) */
	uint64_t dropped, waits;
	int64_t waited_ns;
	size_t n_wait, n_gave_up;
	const struct trace_waits *tw; /* the wait states (NULL: not analysed) */
};

void profile_waits(struct trace_profile *p, const struct trace_waits *tw)
{
	p->tw = tw;
}

void profile_order(struct trace_profile *p, uint64_t proven, uint64_t estimated,
                   uint64_t unknown)
{
	p->have_order = 1;
	p->order[0] = proven;
	p->order[1] = estimated;
	p->order[2] = unknown;
}

void profile_repair(struct trace_profile *p, uint64_t moved, int64_t moved_max_ns,
                    uint64_t messages, uint64_t unbounded_moved)
{
	p->have_repair = 1;
	p->repair_moved = moved;
	p->repair_max_ns = moved_max_ns;
	p->repair_msgs = messages;
	p->repair_unbounded = unbounded_moved;
}

struct trace_profile *profile_create(void)
{
	struct trace_profile *p = calloc(1, sizeof(struct trace_profile));
	if (p)
		p->drift_max_ns = p->drift_unc_ns = p->drift_true_ns = NAN;
	return p;
}

/* the offset exceeds the check's uncertainty (in whole ns, as printed) */
static int drift_resolved(double max_ns, double unc_ns)
{
	return round(unc_ns) < round(max_ns);
}

void profile_drift_text(char *buf, size_t len, double max_ns, double unc_ns, double true_ns)
{
	int n = snprintf(buf, len, "largest offset %.0f ns", max_ns);
	if (n >= 0 && (size_t)n < len && !isnan(unc_ns))
		n += snprintf(buf + n, len - (size_t)n, "%s (+-%.0f ns: half the fastest round trip)",
		              drift_resolved(max_ns, unc_ns) ? "" : ", not resolved", unc_ns);
	if (n >= 0 && (size_t)n < len && !isnan(true_ns))
		snprintf(buf + n, len - (size_t)n, ", true error %.0f ns", true_ns);
}

void profile_free(struct trace_profile *p)
{
	if (!p)
		return;
	free(p->f);
	free(p->p);
	free(p);
}

/* the entry of name (processes list the functions in the same order: hint first) */
static struct pfunc *func_at(struct trace_profile *p, const char *name, size_t hint)
{
	if (hint < p->nf && !strcmp(p->f[hint].name, name))
		return &p->f[hint];
	for (size_t i = 0; i < p->nf; i++)
		if (!strcmp(p->f[i].name, name))
			return &p->f[i];
	if (GROW(p->f, p->nf, p->fcap))
		return NULL;
	struct pfunc *f = &p->f[p->nf++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	return f;
}

int profile_add(struct trace_profile *p, const char *path)
{
	FILE *in = fopen(path, "r");
	if (!in)
		return -1;
	if (GROW(p->p, p->np, p->pcap)) {
		fclose(in);
		return -1;
	}
	struct pproc pr = {0};
	int64_t t_first = 0, t_last = 0;
	char line[256], name[64];
	size_t nth = 0;
	int rc = 0;
	double dmax = NAN, dunc = NAN, dtrue = NAN;
	while (fgets(line, sizeof(line), in)) {
		long long a, b, c;
		unsigned long long u;
		double d;
		int k;
		if (sscanf(line, "func %63s %llu %lld %lld", name, &u, &a, &b) == 4) {
			struct pfunc *f = func_at(p, name, nth++);
			if (!f) {
				rc = -1;
				break;
			}
			f->calls += u;
			f->total_ns += a;
			if (b > f->max_ns)
				f->max_ns = b;
			if (!f->nproc || a < f->pmin_ns)
				f->pmin_ns = a;
			if (!f->nproc || a > f->pmax_ns)
				f->pmax_ns = a;
			f->nproc++;
		} else if (sscanf(line, "hist %d %llu", &k, &u) == 2 && k >= 0 && k < HIST_BINS) {
			p->hist[k] += u;
		} else if (sscanf(line, "hist_bytes %llu", &u) == 1) {
			p->msg_bytes += u;
		} else if (sscanf(line, "rank %lld", &c) == 1) {
			pr.rank = (int)c;
		} else if (sscanf(line, "t_first %lld", &c) == 1) {
			t_first = c;
		} else if (sscanf(line, "t_last %lld", &c) == 1) {
			t_last = c;
		} else if (sscanf(line, "mpi_ns %lld", &c) == 1) {
			pr.mpi_ns = c;
		} else if (sscanf(line, "drift_max %lf", &d) == 1) {
			dmax = d;
		} else if (sscanf(line, "drift_unc %lf", &d) == 1) {
			dunc = d;
		} else if (sscanf(line, "drift_true %lf", &d) == 1) {
			dtrue = d;
		} else if (sscanf(line, "dropped %llu", &u) == 1) {
			p->dropped += u;
		} else if (sscanf(line, "when_full %lld", &c) == 1) {
			p->n_wait += c != 0;
			p->n_gave_up += c == 2; /* record.h's REC_FULL_GAVE_UP */
		} else if (sscanf(line, "waits %llu", &u) == 1) {
			p->waits += u;
		} else if (sscanf(line, "waited_ns %lld", &c) == 1) {
			p->waited_ns += c;
		}
	}
	fclose(in);
	if (!isnan(dmax)) {
		p->drift_max_ns = dmax;
		p->drift_unc_ns = dunc;
		p->drift_true_ns = dtrue;
	}
	pr.run_ns = t_last > t_first ? t_last - t_first : 0;
	if (!rc)
		p->p[p->np++] = pr;
	return rc;
}

/* ---- output ----------------------------------------------------------------------------------- */

static int by_total(const void *a, const void *b)
{
	const struct pfunc *x = *(const struct pfunc *const *)a, *y = *(const struct pfunc *const *)b;
	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : strcmp(x->name, y->name);
}

/* the functions by total time, largest first (NULL without memory) */
static const struct pfunc **sorted(const struct trace_profile *p)
{
	const struct pfunc **s = malloc((p->nf ? p->nf : 1) * sizeof(*s));
	if (!s)
		return NULL;
	for (size_t i = 0; i < p->nf; i++)
		s[i] = &p->f[i];
	qsort(s, p->nf, sizeof(*s), by_total);
	return s;
}

static int64_t run_ns(const struct trace_profile *p)
{
	int64_t t = 0;
	for (size_t i = 0; i < p->np; i++)
		t += p->p[i].run_ns;
	return t;
}

static int64_t mpi_ns(const struct trace_profile *p)
{
	int64_t t = 0;
	for (size_t i = 0; i < p->np; i++)
		t += p->p[i].mpi_ns;
	return t;
}

static uint64_t messages(const struct trace_profile *p)
{
	uint64_t n = 0;
	for (int b = 0; b < HIST_BINS; b++)
		n += p->hist[b];
	return n;
}

/* histogram bin b holds the sizes in [bin_from(b), bin_below(b)) bytes */
static unsigned long long bin_from(int b)
{
	return b ? 1ULL << (b - 1) : 0ULL;
}

static unsigned long long bin_below(int b)
{
	return b < 63 ? 1ULL << b : ~0ULL;
}

static double mean_ns(const struct pfunc *f)
{
	return f->calls ? (double)f->total_ns / f->calls : 0.0;
}

/* least per-process total: 0 when some process never called it */
static int64_t pmin(const struct trace_profile *p, const struct pfunc *f)
{
	return f->nproc < p->np ? 0 : f->pmin_ns;
}

static double imbalance(const struct trace_profile *p, const struct pfunc *f)
{
	double mean = p->np ? (double)f->total_ns / p->np : 0;
	return f->pmax_ns > 0 ? (f->pmax_ns - mean) / f->pmax_ns : 0;
}

static double share(const struct trace_profile *p, int64_t ns)
{
	int64_t run = run_ns(p);
	return run > 0 ? (double)ns / run : 0;
}


static void write_txt(const struct trace_profile *p, const struct pfunc **s, FILE *f)
{
	int64_t mpi = mpi_ns(p);
	fprintf(f, "# hclock trace profile: %zu processes, run %.6f s summed over them, %.6f s in "
	        "MPI (%.2f %%)\n", p->np, run_ns(p) * 1e-9, mpi * 1e-9, 100 * share(p, mpi));
	if (!isnan(p->drift_max_ns)) {
		char dc[200];
		profile_drift_text(dc, sizeof(dc), p->drift_max_ns, p->drift_unc_ns, p->drift_true_ns);
		fprintf(f, "# drift check at MPI_Finalize: %s\n", dc);
	}
	if (p->n_wait)
		fprintf(f, "# when the buffers were full: wait; %" PRIu64 " records dropped, the "
		        "program waited %.6f s for the writer, %" PRIu64 " times (summed over its "
		        "processes and threads); the wait gave up on %zu processes\n", p->dropped,
		        p->waited_ns * 1e-9, p->waits, p->n_gave_up);
	else
		fprintf(f, "# when the buffers were full: drop; %" PRIu64 " records dropped\n",
		        p->dropped);
	fprintf(f, "# share: of the processes' run times summed; least/most: a process's total; "
	        "imbalance: (most - mean) / most\n");
	fprintf(f, "%-28s %12s %14s %12s %12s %8s %14s %14s %9s\n", "function", "calls", "total_s",
	        "mean_us", "max_us", "share_%", "least_s", "most_s", "imbalance");
	for (size_t i = 0; i < p->nf; i++)
		fprintf(f, "%-28s %12" PRIu64 " %14.6f %12.3f %12.3f %8.2f %14.6f %14.6f %9.3f\n",
		        s[i]->name, s[i]->calls, s[i]->total_ns * 1e-9,
		        mean_ns(s[i]) * 1e-3, s[i]->max_ns * 1e-3,
		        100 * share(p, s[i]->total_ns), pmin(p, s[i]) * 1e-9, s[i]->pmax_ns * 1e-9,
		        imbalance(p, s[i]));
	uint64_t n = messages(p);
	fprintf(f, "\n# messages sent: %" PRIu64 ", %" PRIu64 " bytes; sizes in bytes\n", n,
	        p->msg_bytes);
	if (p->have_order)
		fprintf(f, "# their order (send before receive): proven by the clock's bounds %" PRIu64
		        ", by the estimate only %" PRIu64 ", without bounds %" PRIu64 "\n", p->order[0],
		        p->order[1], p->order[2]);
	if (p->have_repair)
		fprintf(f, "# repaired order: %" PRIu64 " events moved (either way), at most %" PRId64
		        " ns (%" PRIu64 " messages; %" PRIu64 " moved without an upper bound)\n",
		        p->repair_moved, p->repair_max_ns, p->repair_msgs, p->repair_unbounded);
	fprintf(f, "%-12s %-12s %12s\n", "from", "below", "messages");
	for (int b = 0; b < HIST_BINS; b++)
		if (p->hist[b])
			fprintf(f, "%-12llu %-12llu %12" PRIu64 "\n", bin_from(b), bin_below(b), p->hist[b]);
	fprintf(f, "\n%-8s %14s %14s %14s %8s\n", "rank", "run_s", "mpi_s", "outside_s", "mpi_%");
	for (size_t i = 0; i < p->np; i++)
		fprintf(f, "%-8d %14.6f %14.6f %14.6f %8.2f\n", p->p[i].rank, p->p[i].run_ns * 1e-9,
		        p->p[i].mpi_ns * 1e-9, (p->p[i].run_ns - p->p[i].mpi_ns) * 1e-9,
		        p->p[i].run_ns > 0 ? 100.0 * p->p[i].mpi_ns / p->p[i].run_ns : 0.0);
	if (p->tw)
		waitreport_txt(p->tw, mpi_ns(p), f);
}

/* ---- the wait states ---- */

static void write_json(const struct trace_profile *p, const struct pfunc **s, FILE *f)
{
	int64_t mpi = mpi_ns(p);
	fprintf(f, "{\"processes\":%zu,\"run_ns\":%" PRId64 ",\"mpi_ns\":%" PRId64 ",\"mpi_share\":"
	        "%.6g,\n\"functions\":[", p->np, run_ns(p), mpi, share(p, mpi));
	for (size_t i = 0; i < p->nf; i++)
		fprintf(f, "%s\n{\"name\":\"%s\",\"calls\":%" PRIu64 ",\"total_ns\":%" PRId64
		        ",\"mean_ns\":%.3f,\"max_ns\":%" PRId64 ",\"share\":%.6g,\"processes\":%" PRIu64
		        ",\"least_ns\":%" PRId64 ",\"most_ns\":%" PRId64 ",\"imbalance\":%.6g}",
		        i ? "," : "", s[i]->name, s[i]->calls, s[i]->total_ns,
		        mean_ns(s[i]), s[i]->max_ns,
		        share(p, s[i]->total_ns), s[i]->nproc, pmin(p, s[i]), s[i]->pmax_ns,
		        imbalance(p, s[i]));
	uint64_t n = messages(p);
	fprintf(f, "],\n\"messages\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"sizes\":[", n,
	        p->msg_bytes);
	for (int b = 0, first = 1; b < HIST_BINS; b++)
		if (p->hist[b]) {
			fprintf(f, "%s{\"from\":%llu,\"below\":%llu,\"count\":%" PRIu64 "}",
			        first ? "" : ",", bin_from(b), bin_below(b),
			        p->hist[b]);
			first = 0;
		}
	fprintf(f, "]");
	if (p->have_order)
		fprintf(f, ",\"order\":{\"proven\":%" PRIu64 ",\"estimated\":%" PRIu64
		        ",\"without_bounds\":%" PRIu64 "}", p->order[0], p->order[1], p->order[2]);
	fprintf(f, "}");
	if (p->have_repair)
		fprintf(f, ",\n\"repair\":{\"moved\":%" PRIu64 ",\"moved_max_ns\":%" PRId64
		        ",\"messages\":%" PRIu64 ",\"unbounded_moved\":%" PRIu64 "}", p->repair_moved,
		        p->repair_max_ns, p->repair_msgs, p->repair_unbounded);
	if (!isnan(p->drift_max_ns)) {
		fprintf(f, ",\n\"drift_check\":{\"largest_offset_ns\":%.0f", p->drift_max_ns);
		if (!isnan(p->drift_unc_ns))
			fprintf(f, ",\"uncertainty_ns\":%.0f,\"resolved\":%s", p->drift_unc_ns,
			        drift_resolved(p->drift_max_ns, p->drift_unc_ns) ? "true" : "false");
		if (!isnan(p->drift_true_ns))
			fprintf(f, ",\"true_error_ns\":%.0f", p->drift_true_ns);
		fprintf(f, "}");
	}
	fprintf(f, ",\n\"buffers\":{\"when_full\":\"%s\",\"dropped\":%" PRIu64 ",\"waits\":%" PRIu64
	        ",\"waited_ns\":%" PRId64 ",\"gave_up_processes\":%zu}", p->n_wait ? "wait" : "drop",
	        p->dropped, p->waits, p->waited_ns, p->n_gave_up);
	if (p->tw) {
		fprintf(f, ",\n\"wait_states\":");
		waitreport_json(p->tw, mpi_ns(p), f);
	}
	fprintf(f, ",\n\"ranks\":[");
	for (size_t i = 0; i < p->np; i++)
		fprintf(f, "%s\n{\"rank\":%d,\"run_ns\":%" PRId64 ",\"mpi_ns\":%" PRId64
		        ",\"outside_ns\":%" PRId64 "}", i ? "," : "", p->p[i].rank, p->p[i].run_ns,
		        p->p[i].mpi_ns, p->p[i].run_ns - p->p[i].mpi_ns);
	fprintf(f, "]}\n");
}

static int write_one(const struct trace_profile *p, const struct pfunc **s, const char *dir,
                     const char *name, void (*fn)(const struct trace_profile *,
                                                  const struct pfunc **, FILE *))
{
	size_t len = strlen(dir) + strlen(name) + 8;
	char *path = malloc(len), *tmp = malloc(len + 8);
	int rc = -1;
	if (path && tmp) {
		snprintf(path, len, "%s/%s", dir, name);
		snprintf(tmp, len + 8, "%s.part", path);
		FILE *f = fopen(tmp, "w");
		if (f) {
			fn(p, s, f);
			int bad = ferror(f);
			if (!fclose(f) && !bad && !rename(tmp, path))
				rc = 0;
			else
				remove(tmp);
		}
	}
	free(path);
	free(tmp);
	return rc;
}

int profile_write(const struct trace_profile *p, const char *dir)
{
	const struct pfunc **s = sorted(p);
	if (!s) {
		errno = ENOMEM;
		return -1;
	}
	int rc = write_one(p, s, dir, "profile.txt", write_txt);
	if (!rc)
		rc = write_one(p, s, dir, "profile.json", write_json);
	free(s);
	return rc;
}

void profile_summary(const struct trace_profile *p, FILE *f, int top)
{
	if (p->tw)
		waitreport_line(p->tw, mpi_ns(p), f);
	const struct pfunc **s = sorted(p);
	if (!s || !p->nf) {
		free(s);
		return;
	}
	fprintf(f, "hclock trace: %-24s %10s %12s %12s %8s %9s\n", "top MPI functions", "calls",
	        "total_s", "mean_us", "share_%", "imbalance");
	for (size_t i = 0; i < p->nf && i < (size_t)top; i++)
		fprintf(f, "hclock trace: %-24s %10" PRIu64 " %12.6f %12.3f %8.2f %9.3f\n", s[i]->name,
		        s[i]->calls, s[i]->total_ns * 1e-9,
		        mean_ns(s[i]) * 1e-3,
		        100 * share(p, s[i]->total_ns), imbalance(p, s[i]));
	free(s);
}
