/* collect.c - repetitions of all ranks to rank 0: latencies, the OSU mean, raw rows. */
#include <stdlib.h>
#include <string.h>

#include "bench/collect.h"

static int agree_ok(MPI_Comm comm, int ok)
{
	int all;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
	return all;
}

int bench_collect(MPI_Comm comm, const struct bench_series *s, struct bench_result *r)
{
	int rank, p;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &p);
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
	MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
	r->osu_mean_ns = sum / p;

	size_t n = s->n;
	int64_t *neg = malloc((n ? n : 1) * sizeof(int64_t));
	int64_t *first = rank == 0 ? malloc((n ? n : 1) * sizeof(int64_t)) : NULL;
	int64_t *last = rank == 0 ? malloc((n ? n : 1) * sizeof(int64_t)) : NULL;
	if (rank == 0)
		r->lat_ns = malloc((s->nvalid ? s->nvalid : 1) * sizeof(double));
	int ok = neg && (rank != 0 || (first && last && r->lat_ns));
	if (!agree_ok(comm, ok)) {
		free(neg);
		free(first);
		free(last);
		bench_result_free(r);
		return -1;
	}
	const size_t chunk = (size_t)1 << 24; /* keeps MPI counts ints */
	for (size_t i = 0; i < n; i++)
		neg[i] = -s->start_ns[i];
	for (size_t off = 0; off < n; off += chunk) {
		int c = (int)(n - off < chunk ? n - off : chunk);
		MPI_Reduce(neg + off, first ? first + off : NULL, c, MPI_INT64_T, MPI_MAX, 0, comm);
		MPI_Reduce(s->end_ns + off, last ? last + off : NULL, c, MPI_INT64_T, MPI_MAX, 0,
		           comm);
	}
	if (rank == 0) {
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
	return 0;
}

void bench_result_free(struct bench_result *r)
{
	free(r->lat_ns);
	r->lat_ns = NULL;
}

#define CHUNK ((size_t)1 << 24) /* keeps MPI counts ints */

static void send_arr(const int64_t *a, size_t n, MPI_Comm comm)
{
	for (size_t off = 0; off < n; off += CHUNK)
		MPI_Send(a + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_INT64_T, 0, 1, comm);
}

static void recv_arr(int64_t *a, size_t n, int from, MPI_Comm comm)
{
	for (size_t off = 0; off < n; off += CHUNK)
		MPI_Recv(a + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_INT64_T, from, 1, comm,
		         MPI_STATUS_IGNORE);
}

int bench_collect_raw(MPI_Comm comm, const struct bench_series *s, bench_raw_fn fn, void *arg)
{
	int rank, p;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &p);
	size_t n = s->n;
	int64_t *buf = rank == 0 ? malloc((2 * n + 1) * sizeof(int64_t)) : NULL;
	if (!agree_ok(comm, rank != 0 || buf)) {
		free(buf);
		return -1;
	}
	if (rank == 0) {
		for (size_t i = 0; i < n; i++)
			fn(arg, 0, i, s->common_ns[i], s->start_ns[i], s->end_ns[i], s->valid[i]);
		for (int q = 1; q < p; q++) {
			/* ask rank q for its series only now, so at most one is in flight */
			int go = 1;
			MPI_Send(&go, 1, MPI_INT, q, 0, comm);
			recv_arr(buf, n, q, comm);
			recv_arr(buf + n, n, q, comm);
			for (size_t i = 0; i < n; i++)
				fn(arg, q, i, s->common_ns[i], buf[i], buf[n + i], s->valid[i]);
		}
		free(buf);
	} else {
		int go;
		MPI_Recv(&go, 1, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE);
		send_arr(s->start_ns, n, comm);
		send_arr(s->end_ns, n, comm);
	}
	return 0;
}
