/* collect.c - repetitions of all ranks to rank 0: latencies, the OSU mean, raw rows. */
#include <stdlib.h>
#include <string.h>

#include "bench/collect.h"
#include "hclock_api.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/fault.h"

#define CHUNK ((size_t)1 << 24) /* keeps MPI counts ints */

/* The first and the last of every repetition's entries and exits over the ranks, on rank 0
 * (first as the MAX of the negated entries). */
static int reduce_first_last(MPI_Comm comm, const struct bench_series *s, int64_t *neg,
                             int64_t *first, int64_t *last)
{
	int rc = MPI_SUCCESS;
	for (size_t i = 0; i < s->n; i++)
		neg[i] = -s->start_ns[i];
	for (size_t off = 0; off < s->n; off += CHUNK) {
		int c = (int)(s->n - off < CHUNK ? s->n - off : CHUNK);
		int r1 = PMPI_Reduce(neg + off, first ? first + off : NULL, c, MPI_INT64_T, MPI_MAX, 0,
		                    comm);
		int r2 = PMPI_Reduce(s->end_ns + off, last ? last + off : NULL, c, MPI_INT64_T, MPI_MAX,
		                    0, comm);
		rc = rc != MPI_SUCCESS ? rc : r1 != MPI_SUCCESS ? r1 : r2;
	}
	return comm_check(rc, "MPI_Reduce (first entries, last exits)");
}

int bench_collect(MPI_Comm comm, const struct bench_series *s, struct bench_result *r)
{
	int rank, p;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &p);
	memset(r, 0, sizeof(*r));
	r->nreps = s->n;
	r->nvalid = s->nvalid;

	/* this rank's mean local time over the valid repetitions */
	double local = 0, sum = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->valid[i])
			local += (double)(s->end_ns[i] - s->start_ns[i]);
	if (s->nvalid)
		local /= (double)s->nvalid;
	int mrc = PMPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
	int rc = comm_check(mrc, "MPI_Reduce (OSU mean)");
	r->osu_mean_ns = sum / p;

	size_t n = s->n;
	int64_t *neg = malloc((n ? n : 1) * sizeof(int64_t));
	int64_t *first = rank == 0 ? malloc((n ? n : 1) * sizeof(int64_t)) : NULL;
	int64_t *last = rank == 0 ? malloc((n ? n : 1) * sizeof(int64_t)) : NULL;
	if (rank == 0)
		r->lat_ns = malloc((s->nvalid ? s->nvalid : 1) * sizeof(double));
	if (!rc && (!(neg && (rank != 0 || (first && last && r->lat_ns))) || fault_hit(FAULT_COLLECT)))
		rc = err_set(HCLOCK_ENOMEM, "out of memory collecting %zu repetitions", n);
	if (!(rc = comm_agree(comm, rc)))
		rc = comm_agree(comm, reduce_first_last(comm, s, neg, first, last));
	if (!rc && rank == 0) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (!s->valid[i])
				continue;
			int64_t t0 = s->common_ns[i] != BENCH_NO_COMMON ? s->common_ns[i] : -first[i];
			r->lat_ns[k++] = (double)(last[i] - t0);
		}
	}
	free(neg);
	free(first);
	free(last);
	if (rc)
		bench_result_free(r);
	return rc;
}

void bench_result_free(struct bench_result *r)
{
	free(r->lat_ns);
	r->lat_ns = NULL;
}

/* Send or receive n int64 in chunks; the first MPI error, or MPI_SUCCESS. */
static int send_arr(const int64_t *a, size_t n, MPI_Comm comm)
{
	int rc = MPI_SUCCESS;
	for (size_t off = 0; off < n; off += CHUNK) {
		int c = PMPI_Send(a + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_INT64_T, 0, 1,
		                 comm);
		rc = rc != MPI_SUCCESS ? rc : c;
	}
	return rc;
}

static int recv_arr(int64_t *a, size_t n, int from, MPI_Comm comm)
{
	int rc = MPI_SUCCESS;
	for (size_t off = 0; off < n; off += CHUNK) {
		int c = PMPI_Recv(a + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_INT64_T, from,
		                 1, comm, MPI_STATUS_IGNORE);
		rc = rc != MPI_SUCCESS ? rc : c;
	}
	return rc;
}

/* Rank 0: its own rows, then rank by rank the others'. */
static int raw_root(MPI_Comm comm, int p, const struct bench_series *s, int64_t *buf,
                    bench_raw_fn fn, void *arg)
{
	size_t n = s->n;
	int rc = MPI_SUCCESS;
	for (size_t i = 0; i < n; i++)
		fn(arg, 0, i, s->common_ns[i], s->start_ns[i], s->end_ns[i], s->valid[i]);
	for (int q = 1; q < p; q++) {
		/* ask rank q for its series only now, so at most one is in flight */
		int go = 1;
		int r1 = PMPI_Send(&go, 1, MPI_INT, q, 0, comm);
		int r2 = recv_arr(buf, n, q, comm);
		int r3 = recv_arr(buf + n, n, q, comm);
		rc = rc != MPI_SUCCESS ? rc : r1 != MPI_SUCCESS ? r1 : r2 != MPI_SUCCESS ? r2 : r3;
		for (size_t i = 0; rc == MPI_SUCCESS && i < n; i++)
			fn(arg, q, i, s->common_ns[i], buf[i], buf[n + i], s->valid[i]);
	}
	return rc;
}

int bench_collect_raw(MPI_Comm comm, const struct bench_series *s, bench_raw_fn fn, void *arg)
{
	int rank, p, rc = 0;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &p);
	int64_t *buf = rank == 0 ? malloc((2 * s->n + 1) * sizeof(int64_t)) : NULL;
	if (rank == 0 && !buf)
		rc = err_set(HCLOCK_ENOMEM, "out of memory for the raw rows of %zu repetitions", s->n);
	if ((rc = comm_agree(comm, rc))) {
		free(buf);
		return rc;
	}
	int mrc;
	if (rank == 0) {
		mrc = raw_root(comm, p, s, buf, fn, arg);
	} else {
		int go;
		mrc = PMPI_Recv(&go, 1, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE);
		int r2 = send_arr(s->start_ns, s->n, comm);
		int r3 = send_arr(s->end_ns, s->n, comm);
		mrc = mrc != MPI_SUCCESS ? mrc : r2 != MPI_SUCCESS ? r2 : r3;
	}
	free(buf);
	if (mrc != MPI_SUCCESS)
		rc = comm_check(mrc, "MPI_Send/MPI_Recv (collecting raw rows)");
	return comm_agree(comm, rc);
}
