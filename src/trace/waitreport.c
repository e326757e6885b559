/*
 * waitreport.c - the wait states of a run as people and programs read them (waitreport.h):
 * the table, the rows, the worst instances and the truth, in text and in JSON.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "trace/waitreport.h"

#define WAIT_ROWS_TXT 20 /* rows of the per-function/process table in profile.txt */

static double us(int64_t ns)
{
	return ns >= WAITS_NO_BOUND ? INFINITY : ns * 1e-3;
}

/* the truth of every instance (emulated clocks, --event-truth): how many missed */
static struct waits_total truth_total(const struct trace_waits *tw)
{
	struct waits_total a = {0};
	for (int i = 0; i < waits_pattern_count(); i++) {
		struct waits_total t = waits_pattern_total(tw->w, i);
		a.truth_n += t.truth_n;
		a.truth_outside += t.truth_outside;
	}
	return a;
}

static void truth_txt(const struct trace_waits *tw, FILE *f)
{
	if (!tw->truth_procs)
		return;
	struct waits_total a = truth_total(tw);
	fprintf(f, "# truth (emulated clocks): %" PRIu64 " instances with the truth of their "
	        "timestamps, %" PRIu64 " of them outside their interval\n", a.truth_n,
	        a.truth_outside);
	for (size_t i = 0; i < tw->noutside; i++) {
		const struct waits_instance *o = &tw->outside[i];
		fprintf(f, "# outside: %s rank %d peer %lld %s at %.9f s: [%.3f, %.3f] us, true "
		        "[%.3f, %.3f] us\n", waits_pattern_name(o->pattern), o->proc,
		        (long long)o->peer, trace_waits_fname(tw, o->func), (o->at_ns - tw->t0_g) * 1e-9,
		        us(o->lo_ns), us(o->hi_ns), us(o->true_lo_ns), us(o->true_hi_ns));
	}
}

void waitreport_txt(const struct trace_waits *tw, int64_t mpi, FILE *f)
{
	fprintf(f, "\n# wait states (docs/waits.md): time spent waiting for another process; "
	        "proven: the clock's bounds show at least that much; upper: at most that much "
	        "(inf: a timestamp without bounds)\n");
	fprintf(f, "%-16s %10s %10s %14s %14s %14s %8s %8s\n", "pattern", "instances", "proven",
	        "time_s", "proven_s", "upper_s", "mpi_%", "proven_%");
	for (int i = 0; i < waits_pattern_count(); i++) {
		struct waits_total t = waits_pattern_total(tw->w, i);
		fprintf(f, "%-16s %10" PRIu64 " %10" PRIu64 " %14.6f %14.6f %14.6f %8.2f %8.2f\n",
		        waits_pattern_name(i), t.n, t.proven, t.est_ns * 1e-9, t.lo_ns * 1e-9,
		        us(t.hi_ns) * 1e-6, mpi > 0 ? 100.0 * t.est_ns / mpi : 0.0,
		        t.est_ns > 0 ? 100.0 * t.lo_ns / t.est_ns : 0.0);
	}
	size_t n;
	const struct waits_row *r = waits_rows(tw->w, &n);
	fprintf(f, "\n# where: the largest by pattern, function, communicator and rank (%zu of %zu)"
	        "\n%-16s %-24s %16s %8s %10s %14s %14s\n", n < WAIT_ROWS_TXT ? n : WAIT_ROWS_TXT,
	        n, "pattern", "function", "comm", "rank", "instances", "time_s", "proven_s");
	for (size_t i = 0; i < n && i < WAIT_ROWS_TXT; i++)
		fprintf(f, "%-16s %-24s %16" PRIx64 " %8d %10" PRIu64 " %14.6f %14.6f\n",
		        waits_pattern_name(r[i].pattern), trace_waits_fname(tw, r[i].func), r[i].comm,
		        r[i].proc, r[i].t.n, r[i].t.est_ns * 1e-9, r[i].t.lo_ns * 1e-9);
	const struct waits_instance *w = waits_worst(tw->w, &n);
	fprintf(f, "\n# the worst instances: the true waiting time lies in [lo, hi]; at: the "
	        "waiting call's enter, s from the run's start\n%-16s %6s %6s %-24s %14s %12s %12s "
	        "%12s %7s\n", "pattern", "rank", "peer", "function", "at_s", "wait_us", "lo_us",
	        "hi_us", "proven");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%-16s %6d %6lld %-24s %14.9f %12.3f %12.3f %12.3f %7s\n",
		        waits_pattern_name(w[i].pattern), w[i].proc, (long long)w[i].peer,
		        trace_waits_fname(tw, w[i].func), (w[i].at_ns - tw->t0_g) * 1e-9,
		        us(w[i].est_ns), us(w[i].lo_ns), us(w[i].hi_ns), w[i].lo_ns > 0 ? "yes" : "no");
	truth_txt(tw, f);
	struct waits_left l;
	waits_left(tw->w, &l);
	fprintf(f, "# analysed: %" PRIu64 " messages, %" PRIu64 " collectives, %" PRIu64 " calls (%"
	        PRIu64 " without bounds); not analysed: %" PRIu64 " sends and %" PRIu64
	        " receives without their partner, %" PRIu64 " collectives not entered by every "
	        "member, %" PRIu64 " whose members disagree (kind, root, size), %" PRIu64
	        " on communicators of unknown size\n", l.messages, l.colls, tw->calls,
	        tw->unbounded, l.sends, l.recvs, l.colls_open, l.colls_mismatched,
	        tw->colls_unknown);
}

static void json_ns(FILE *f, const char *key, int64_t ns)
{
	if (ns >= WAITS_NO_BOUND)
		fprintf(f, ",\"%s\":null", key);
	else
		fprintf(f, ",\"%s\":%" PRId64, key, ns);
}

void waitreport_json(const struct trace_waits *tw, int64_t mpi, FILE *f)
{
	fprintf(f, "{\"patterns\":[");
	for (int i = 0; i < waits_pattern_count(); i++) {
		struct waits_total t = waits_pattern_total(tw->w, i);
		fprintf(f, "%s\n{\"pattern\":\"%s\",\"title\":\"%s\",\"instances\":%" PRIu64
		        ",\"proven\":%" PRIu64 ",\"time_ns\":%" PRId64 ",\"proven_ns\":%" PRId64,
		        i ? "," : "", waits_pattern_name(i), waits_pattern_title(i), t.n, t.proven,
		        t.est_ns, t.lo_ns);
		json_ns(f, "upper_ns", t.hi_ns);
		fprintf(f, ",\"mpi_share\":%.6g", mpi > 0 ? (double)t.est_ns / mpi : 0.0);
		if (tw->truth_procs)
			fprintf(f, ",\"truth\":{\"instances\":%" PRIu64 ",\"outside\":%" PRIu64
			        ",\"true_lo_ns\":%" PRId64 ",\"true_hi_ns\":%" PRId64 "}", t.truth_n,
			        t.truth_outside, t.true_lo_ns, t.true_hi_ns);
		fprintf(f, "}");
	}
	size_t n;
	const struct waits_row *r = waits_rows(tw->w, &n);
	fprintf(f, "],\n\"rows\":[");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n{\"pattern\":\"%s\",\"function\":\"%s\",\"comm\":\"%016" PRIx64
		        "\",\"rank\":%d,\"instances\":%" PRIu64 ",\"proven\":%" PRIu64
		        ",\"time_ns\":%" PRId64 ",\"proven_ns\":%" PRId64, i ? "," : "",
		        waits_pattern_name(r[i].pattern), trace_waits_fname(tw, r[i].func), r[i].comm,
		        r[i].proc, r[i].t.n, r[i].t.proven, r[i].t.est_ns, r[i].t.lo_ns);
		json_ns(f, "upper_ns", r[i].t.hi_ns);
		fprintf(f, "}");
	}
	const struct waits_instance *w = waits_worst(tw->w, &n);
	fprintf(f, "],\n\"worst\":[");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n{\"pattern\":\"%s\",\"rank\":%d,\"peer\":%lld,\"function\":"
		        "\"%s\",\"comm\":\"%016" PRIx64 "\",\"at_ns\":%" PRId64 ",\"wait_ns\":%"
		        PRId64 ",\"lo_ns\":%" PRId64, i ? "," : "", waits_pattern_name(w[i].pattern),
		        w[i].proc, (long long)w[i].peer, trace_waits_fname(tw, w[i].func), w[i].comm,
		        w[i].at_ns - tw->t0_g, w[i].est_ns, w[i].lo_ns);
		json_ns(f, "hi_ns", w[i].hi_ns);
		if (w[i].has_truth)
			fprintf(f, ",\"true_lo_ns\":%" PRId64 ",\"true_hi_ns\":%" PRId64,
			        w[i].true_lo_ns, w[i].true_hi_ns);
		fprintf(f, ",\"proven\":%s}", w[i].lo_ns > 0 ? "true" : "false");
	}
	struct waits_left l;
	waits_left(tw->w, &l);
	fprintf(f, "],\n\"messages\":%" PRIu64 ",\"collectives\":%" PRIu64 ",\"calls\":%" PRIu64
	        ",\"calls_without_bounds\":%" PRIu64 ",\"unpaired_sends\":%" PRIu64
	        ",\"unpaired_receives\":%" PRIu64 ",\"incomplete_collectives\":%" PRIu64
	        ",\"mismatched_collectives\":%" PRIu64 ",\"collectives_of_unknown_size\":%"
	        PRIu64 ",\"analysis_ns\":%" PRId64 ",\"marked\":%" PRIu64, l.messages, l.colls,
	        tw->calls, tw->unbounded, l.sends, l.recvs, l.colls_open, l.colls_mismatched,
	        tw->colls_unknown, tw->took_ns, tw->marked);
	if (tw->truth_procs || tw->truth_unreadable) {
		struct waits_total a = truth_total(tw);
		fprintf(f, ",\n\"truth\":{\"processes\":%d,\"unreadable\":%d,\"instances\":%"
		        PRIu64 ",\"outside\":%" PRIu64 ",\"first_outside\":[", tw->truth_procs,
		        tw->truth_unreadable, a.truth_n, a.truth_outside);
		for (size_t i = 0; i < tw->noutside; i++) {
			const struct waits_instance *o = &tw->outside[i];
			fprintf(f, "%s{\"pattern\":\"%s\",\"rank\":%d,\"peer\":%lld,\"function\":"
			        "\"%s\",\"at_ns\":%" PRId64 ",\"wait_ns\":%" PRId64 ",\"lo_ns\":%"
			        PRId64, i ? "," : "", waits_pattern_name(o->pattern), o->proc,
			        (long long)o->peer, trace_waits_fname(tw, o->func), o->at_ns - tw->t0_g,
			        o->est_ns, o->lo_ns);
			json_ns(f, "hi_ns", o->hi_ns);
			fprintf(f, ",\"true_lo_ns\":%" PRId64 ",\"true_hi_ns\":%" PRId64 "}",
			        o->true_lo_ns, o->true_hi_ns);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "}");
}


/* one line: the waiting time of all patterns, its proven part, the largest pattern */
void waitreport_line(const struct trace_waits *tw, int64_t mpi, FILE *f)
{
	int64_t est = 0, lo = 0, best_ns = -1;
	int best = -1;
	for (int i = 0; i < waits_pattern_count(); i++) {
		struct waits_total t = waits_pattern_total(tw->w, i);
		if (waits_pattern_also_counted(i))
			continue;
		est += t.est_ns;
		lo += t.lo_ns;
		if (t.est_ns > best_ns)
			best_ns = t.est_ns, best = i;
	}
	fprintf(f, "hclock trace: wait states: %.6f s waiting (%.1f %% of the time in MPI), %.6f s of "
	        "it proven by the clock's bounds", est * 1e-9,
	        mpi > 0 ? 100.0 * est / mpi : 0.0, lo * 1e-9);
	if (best_ns > 0)
		fprintf(f, "; most: %s, %.6f s", waits_pattern_title(best), best_ns * 1e-9);
	if (tw->truth_procs) {
		struct waits_total a = truth_total(tw);
		fprintf(f, "; truth: %" PRIu64 " of %" PRIu64 " instances outside their interval",
		        a.truth_outside, a.truth_n);
	}
	fprintf(f, " (analysed in %.3f s)\n", tw->took_ns * 1e-9);
}

