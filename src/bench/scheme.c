/* scheme.c - the scheme family's factory and what the schemes share: the series of
 * repetitions, the stop rule, agreeing on flags, warm-up, and the MPI_Bcast latency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/buf.h"
#include "bench/scheme.h"
#include "hclock_api.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

/* The table (bench/schemes.def): adding a scheme is one file and one line there. */
#define SCHEME_TYPE(n) REGISTRY_MEMBER(scheme_type_##n)
#define REGISTRY_DEF "bench/schemes.def"
#define REGISTRY_TYPE struct scheme_type
#define REGISTRY_TABLE scheme_types
#define REGISTRY_FIND scheme_type_find
#include "util/registry.h"

size_t bench_scheme_count(void)
{
	return ARRAY_SIZE(scheme_types) - 1; /* the NULL at the end */
}

const struct scheme_type *bench_scheme_type(size_t i)
{
	return i < bench_scheme_count() ? scheme_types[i] : NULL;
}

const char *bench_scheme_names(int common)
{
	static char buf[3][256];
	char *b = buf[common < 0 ? 2 : !!common];
	if (!b[0]) {
		size_t off = 0;
		for (size_t i = 0; scheme_types[i]; i++)
			if (common < 0 || scheme_types[i]->common_start == !!common)
				off += (size_t)snprintf(b + off, sizeof(buf[0]) - off, "%s%s",
				                        off ? ", " : "", scheme_types[i]->name);
	}
	return b;
}

int bench_scheme_create(const char *spec, struct bench_scheme **out)
{
	*out = NULL;
	size_t n = strcspn(spec, "/");
	const struct scheme_type *t = scheme_type_find(spec, n);
	if (!t)
		return err_set(HCLOCK_EINVAL, "unknown scheme '%.*s'; expected one of: %s", (int)n,
		               spec, bench_scheme_names(-1));
	int rc = t->create(t, spec + n, out);
	if (rc)
		return rc;
	if (!((*out)->spec = strdup(spec))) {
		bench_scheme_free(*out);
		*out = NULL;
		return err_set(HCLOCK_ENOMEM, "out of memory for scheme %s", spec);
	}
	return 0;
}

void bench_scheme_free(struct bench_scheme *s)
{
	if (!s)
		return;
	free(s->spec);
	if (s->type->destroy)
		s->type->destroy(s);
	else
		free(s);
}

const char *bench_scheme_spec(const struct bench_scheme *s)
{
	return s->spec ? s->spec : s->type->name;
}

int bench_scheme_measure(struct bench_scheme *s, const struct bench_params *p,
                         struct bench_buf *b, struct bench_series *out)
{
	return s->type->measure(s, p, b, out);
}

/* ---- for the create hooks ----------------------------------------------------------- */

int scheme_new(const struct scheme_type *t, struct bench_scheme **out)
{
	struct bench_scheme *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory for scheme %s", t->name);
	s->type = t;
	*out = s;
	return 0;
}

int scheme_arg_next(const char **args, struct scheme_arg *a)
{
	const char *p = *args;
	if (*p != '/')
		return 0;
	p++;
	a->tok = p;
	a->len = strcspn(p, "/");
	const char *eq = memchr(p, '=', a->len);
	a->val = eq ? eq + 1 : NULL;
	a->vlen = eq ? a->len - (size_t)(eq + 1 - p) : 0;
	*args = p + a->len;
	return 1;
}

int scheme_arg_is(const struct scheme_arg *a, const char *key)
{
	size_t k = a->val ? (size_t)(a->val - 1 - a->tok) : a->len;
	return strlen(key) == k && !strncmp(a->tok, key, k);
}

int scheme_arg_bad(const struct scheme_type *t, const struct scheme_arg *a, const char *why)
{
	if (!strchr(t->usage, '/'))
		return err_set(HCLOCK_EINVAL, "scheme %s: bad argument '%.*s' (%s); %s takes no "
		               "arguments", t->name, (int)a->len, a->tok, why, t->name);
	return err_set(HCLOCK_EINVAL, "scheme %s: bad argument '%.*s' (%s); the form is %s",
	               t->name, (int)a->len, a->tok, why, t->usage);
}

int scheme_create_plain(const struct scheme_type *t, const char *args,
                        struct bench_scheme **out)
{
	struct scheme_arg a;
	if (scheme_arg_next(&args, &a))
		return scheme_arg_bad(t, &a, "unknown");
	return scheme_new(t, out);
}

/* ---- series ------------------------------------------------------------------------- */

void bench_series_init(struct bench_series *s)
{
	memset(s, 0, sizeof(*s));
}

void bench_series_free(struct bench_series *s)
{
	free(s->start_ns);
	free(s->end_ns);
	free(s->common_ns);
	free(s->valid);
	bench_series_init(s);
}

static int grow(void **p, size_t cap, size_t elem)
{
	void *q = realloc(*p, cap * elem);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

int bench_series_add(struct bench_series *s, int64_t common_ns, int64_t start_ns,
                     int64_t end_ns, int valid)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		if (grow((void **)&s->start_ns, cap, sizeof(int64_t)) ||
		    grow((void **)&s->end_ns, cap, sizeof(int64_t)) ||
		    grow((void **)&s->common_ns, cap, sizeof(int64_t)) ||
		    grow((void **)&s->valid, cap, 1))
			return err_set(HCLOCK_ENOMEM, "out of memory for %zu repetitions", cap);
		s->cap = cap;
	}
	if (fault_hit(FAULT_STORE))
		return err_set(HCLOCK_ENOMEM, "out of memory storing repetition %zu (injected)",
		               s->n + 1);
	s->start_ns[s->n] = start_ns;
	s->end_ns[s->n] = end_ns;
	s->common_ns[s->n] = common_ns;
	s->valid[s->n] = valid ? 1 : 0;
	s->n++;
	if (valid)
		s->nvalid++;
	return 0;
}

/* ---- stop rule ---------------------------------------------------------------------- */

int64_t scheme_slack_ns(const struct bench_params *p)
{
	int64_t s = (int64_t)(p->slack_factor * (double)p->bcast_lat_ns);
	return s > p->min_slack_ns ? s : p->min_slack_ns;
}

void slack_init(struct bench_slack *sl, int64_t base_ns, int64_t max_ns)
{
	/* a burst of load must not leave the slack, and each round, huge for long: cap it at
	 * 1000 x base (at least 1 ms, which covers a scheduler hand-off) */
	int64_t cap = 1000 * base_ns > 1000000 ? 1000 * base_ns : 1000000;
	if (max_ns > cap)
		max_ns = cap;
	sl->base_ns = sl->cur_ns = base_ns;
	sl->max_ns = max_ns > base_ns ? max_ns : base_ns;
	sl->streak = 0;
	sl->hist = 0;
}

void slack_update(struct bench_slack *sl, int late)
{
	sl->hist = ((sl->hist << 1) | (late ? 1u : 0u)) & 0xffu;
	if (late) {
		sl->streak = 0;
		if (__builtin_popcount(sl->hist) >= 3) {
			sl->cur_ns = sl->cur_ns > sl->max_ns / 2 ? sl->max_ns : 2 * sl->cur_ns;
			sl->hist = 0;
		}
	} else if (++sl->streak >= 16) {
		sl->cur_ns /= 2;
		if (sl->cur_ns < sl->base_ns)
			sl->cur_ns = sl->base_ns;
		sl->streak = 0;
	}
}

void stop_begin(struct bench_stop *st, const struct bench_params *p)
{
	memset(st, 0, sizeof(*st));
	st->t0_ns = hclock_now(p->clk);
	st->slice_ns = p->time_slice_ns;
	st->max_reps = p->max_reps;
	st->rse = p->rse;
	stats_running_init(&st->own);
	st->lat = p->rse_acc ? p->rse_acc : &st->own;
}

int stop_out_of_time(const struct bench_stop *st, hclock_clock *clk)
{
	return hclock_now(clk) - st->t0_ns >= st->slice_ns;
}

int stop_add_valid(struct bench_stop *st, double lat_ns)
{
	st->nvalid++;
	stats_running_add(st->lat, lat_ns);
	if (st->max_reps > 0 && st->nvalid >= (size_t)st->max_reps)
		return 1;
	return stop_rse_reached(st->lat, st->rse);
}

int stop_rse_reached(const struct stats_running *lat, double rse)
{
	return rse > 0 && lat->n >= 10 && stats_running_rse(lat) <= rse;
}

/* ---- agreement ---------------------------------------------------------------------- */

int scheme_agree(MPI_Comm comm, int k, const int64_t *flags, const int64_t *start,
                 const int64_t *end, int out_of_time_in, int64_t *invalid,
                 int64_t *first_start, int64_t *last_end, int *out_of_time)
{
	/* one MAX reduction: flags, -start (so MAX gives the earliest start), end */
	enum { STACK = 3 * 64 + 1 };
	int64_t stack_in[STACK], stack_out[STACK];
	size_t n = 3 * (size_t)k + 1;
	int64_t *in = n <= STACK ? stack_in : malloc(2 * n * sizeof(int64_t));
	if (!in)
		return err_set(HCLOCK_ENOMEM, "out of memory agreeing on %d repetitions", k);
	int64_t *out = n <= STACK ? stack_out : in + n;
	for (int i = 0; i < k; i++) {
		in[3 * i] = flags[i] ? 1 : 0;
		in[3 * i + 1] = -start[i];
		in[3 * i + 2] = end[i];
	}
	in[3 * k] = out_of_time_in ? 1 : 0;
	int rc = PMPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_MAX, comm);
	for (int i = 0; rc == MPI_SUCCESS && i < k; i++) {
		invalid[i] = out[3 * i];
		first_start[i] = -out[3 * i + 1];
		last_end[i] = out[3 * i + 2];
	}
	*out_of_time = rc == MPI_SUCCESS ? (int)out[3 * k] : 1;
	if (in != stack_in)
		free(in);
	return comm_check(rc, "MPI_Allreduce (agreeing on repetitions)");
}

/* ---- warm-up and the broadcast latency --------------------------------------------- */

int scheme_warmup(const struct bench_params *p, struct bench_buf *b)
{
	/* every call is made even after one failed, so that no rank waits in one for good */
	int rc = 0;
	for (long i = 0; i < p->warmup; i++) {
		int c = bench_op_call(b);
		rc = rc ? rc : c;
	}
	int brc = PMPI_Barrier(p->comm);
	return rc ? rc : comm_check(brc, "MPI_Barrier (after warm-up)");
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int bench_bcast_latency(MPI_Comm comm, hclock_clock *clk, int tries, int64_t *lat_ns)
{
	int rank, rc = MPI_SUCCESS;
	const char *call = NULL;
	PMPI_Comm_rank(comm, &rank);
	if (tries < 1)
		tries = 1;
	int64_t *lat = malloc((size_t)tries * sizeof(*lat));
	int stall = fault_hit(FAULT_SLACK); /* tests: this measurement made through a stall */
	/* without memory this rank still takes part, and fails afterwards */
	for (int i = 0; i < tries; i++) {
		int64_t t = 0, d = 0, dmax = 0;
		int r1 = PMPI_Barrier(comm);
		if (rank == 0)
			t = hclock_now(clk);
		if (stall)
			real_sleep_ns(1000000);
		int r2 = PMPI_Bcast(&t, 1, MPI_INT64_T, 0, comm);
		if (rank != 0)
			d = hclock_now(clk) - t;
		int r3 = PMPI_Allreduce(&d, &dmax, 1, MPI_INT64_T, MPI_MAX, comm);
		if (rc == MPI_SUCCESS && (r1 || r2 || r3)) {
			rc = r1 ? r1 : r2 ? r2 : r3;
			call = r1 ? "MPI_Barrier" : r2 ? "MPI_Bcast" : "MPI_Allreduce";
		}
		if (lat)
			lat[i] = dmax;
	}
	if (rc != MPI_SUCCESS) {
		free(lat);
		return comm_check(rc, call);
	}
	if (!lat)
		return err_set(HCLOCK_ENOMEM, "out of memory measuring the MPI_Bcast latency");
	qsort(lat, (size_t)tries, sizeof(*lat), cmp_i64);
	*lat_ns = lat[tries / 2] > 1 ? lat[tries / 2] : 1;
	free(lat);
	return 0;
}

int bench_slack_latency(MPI_Comm comm, hclock_clock *clk, int64_t first_ns, int64_t *lat_ns)
{
	int64_t now_ns = first_ns;
	int rc = bench_bcast_latency(comm, clk, SLACK_RETRIES, &now_ns);
	*lat_ns = now_ns < first_ns ? now_ns : first_ns;
	return rc;
}

int64_t scheme_slack_base(const struct bench_params *p, int adaptive)
{
	struct bench_params q = *p;
	if (adaptive && p->slack_lat_ns > 0)
		q.bcast_lat_ns = p->slack_lat_ns;
	return scheme_slack_ns(&q);
}

int bench_comm_create(MPI_Comm parent, MPI_Comm *out)
{
	int rc = PMPI_Comm_dup(parent, out);
	if (rc != MPI_SUCCESS)
		return comm_check(rc, "MPI_Comm_dup");
	rc = PMPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
	if (rc != MPI_SUCCESS) {
		PMPI_Comm_free(out);
		return comm_check(rc, "MPI_Comm_set_errhandler");
	}
	return 0;
}

/* ---- the loop of barrier and none ------------------------------------------------- */

#define BATCH 32

int scheme_local_batches(struct bench_scheme *s, const struct bench_params *p,
                         struct bench_buf *b, struct bench_series *out,
                         int (*before)(struct bench_scheme *s, MPI_Comm comm))
{
	int64_t st[BATCH], en[BATCH], fl[BATCH] = {0}, inv[BATCH], first[BATCH], last[BATCH];
	struct bench_stop stop;
	int rc = scheme_warmup(p, b), arc;
	stop_begin(&stop, p);
	/* after a failure this rank keeps calling until the batch is agreed on: its peers
	 * are in the same calls */
	for (int done = 0; !done;) {
		int k = BATCH;
		if (p->max_reps > 0 && p->max_reps - (long)stop.nvalid < k)
			k = (int)(p->max_reps - (long)stop.nvalid);
		for (int i = 0; i < k; i++) {
			int c = bench_buf_prepare(b); /* --buffers offcache */
			int cb = before ? before(s, p->comm) : 0;
			c = c ? c : cb;
			st[i] = hclock_now(p->clk);
			int c2 = bench_op_call(b);
			en[i] = hclock_now(p->clk);
			rc = rc ? rc : c ? c : c2;
		}
		int oot = stop_out_of_time(&stop, p->clk) || rc;
		if ((arc = scheme_agree(p->comm, k, fl, st, en, oot, inv, first, last, &done)))
			return rc ? rc : arc;
		for (int i = 0; i < k; i++) {
			/* the stop rule is fed on every rank alike, whatever failed here */
			if (!rc)
				rc = bench_series_add(out, BENCH_NO_COMMON, st[i], en[i], 1);
			if (stop_add_valid(&stop, (double)(last[i] - first[i]))) {
				done = 1;
				break;
			}
		}
	}
	return rc;
}
