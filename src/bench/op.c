/*
 * op.c - the operation table of hclock bench: each operation's buffer sizes and set-up, one
 * call, and --validate patterns (the buffers themselves: bench/buf.c).
 *
 * Validation patterns are functions of (source rank r, block j, index i) that every rank
 * can compute, so each rank checks its own result without further communication:
 * bytes8() for the data-movement operations, bench_dtype_val() (bench/dtype.h) for the
 * reductions, whose expected value is bench_dtype_expect() over the contributing ranks.
 *
 * Under the test hook HCLOCK_FAULT=rank=R|all,at=corrupt (util/fault.h) every reduction
 * adds 1 to the first value of its result, and the v-variants and neighborhood collectives
 * that move bytes flip the last byte of their receive buffer, so a test can prove that
 * --validate catches a wrong result.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/op.h"
#include "bench/overlap.h"
#include "hclock_api.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

#define GARBAGE 0xEE

static uint8_t bytes8(int r, int j, size_t i)
{
	return (uint8_t)(r * 131 + j * 17 + (int)(i % 251) * 7 + 1);
}

static void corrupt(const struct bench_buf *b, void *res)
{
	if (fault_armed && fault_mode(FAULT_CORRUPT) && b->count > 0)
		bench_dtype_store(b->type, res, 0, (int64_t)bench_dtype_load(b->type, res, 0) + 1);
}

/* the same for the data-movement operations added with the v-variants: the last byte of
 * the receive buffer flipped */
static void corrupt8(const struct bench_buf *b)
{
	if (fault_armed && fault_mode(FAULT_CORRUPT) && b->rbytes > 0)
		((uint8_t *)b->rbuf)[b->rbytes - 1] ^= 1;
}

/* the nonblocking forms: after the start, --overlap's compute phase (timed on the local
 * clock around it), then MPI_Wait */
static int wait_req(struct bench_buf *b, int rc, MPI_Request *q)
{
	if (rc != MPI_SUCCESS)
		return rc;
	if (b->compute_iters) {
		int64_t t0 = real_now_ns();
		overlap_compute(b->compute_iters);
		int64_t dt = real_now_ns() - t0;
		if (b->compute_cap)
			b->compute_ns[b->ncompute++ % b->compute_cap] = dt;
	}
	return MPI_USER(Wait)(q, MPI_STATUS_IGNORE);
}

static uint8_t *blk8(void *buf, const struct bench_buf *b, int j)
{
	return (uint8_t *)buf + (size_t)j * b->bytes;
}

static void fill8(uint8_t *p, size_t n, int r, int j)
{
	for (size_t i = 0; i < n; i++)
		p[i] = bytes8(r, j, i);
}

/* the cnt elements of block j of rank r (of the reductions) */
static void fillv_n(const struct bench_buf *b, void *p, size_t cnt, int r, int j)
{
	size_t n = cnt * (size_t)b->type->nvals;
	for (size_t i = 0; i < n; i++)
		bench_dtype_store(b->type, p, i, bench_dtype_val(b->rop, r, j, i));
}

static void fillv(const struct bench_buf *b, void *p, int r, int j)
{
	fillv_n(b, p, (size_t)b->count, r, j);
}

static int check8(const uint8_t *p, size_t n, int r, int j, const char *what, char *msg,
                  size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != bytes8(r, j, i)) {
			snprintf(msg, len, "%s byte %zu is %u, expected %u", what, i, p[i], bytes8(r, j, i));
			return -1;
		}
	return 0;
}

/* value i < cnt x nvals of p must be the reduction of the values (r, j, i) over r in
 * [r0, r1) */
static int check_red_n(const struct bench_buf *b, const void *p, size_t cnt, int r0, int r1,
                       int j, char *msg, size_t len)
{
	size_t n = cnt * (size_t)b->type->nvals;
	for (size_t i = 0; i < n; i++) {
		int64_t want = bench_dtype_expect(b->rop, r0, r1, j, i);
		double got = bench_dtype_load(b->type, p, i);
		if (got != (double)want) {
			snprintf(msg, len, "%s value %zu is %.17g, expected %lld (%s over ranks %d..%d)",
			         b->type->name, i, got, (long long)want, bench_rop_name(b->rop), r0,
			         r1 - 1);
			return -1;
		}
	}
	return 0;
}

static int check_red(const struct bench_buf *b, const void *p, int r0, int r1, int j,
                     char *msg, size_t len)
{
	return check_red_n(b, p, (size_t)b->count, r0, r1, j, msg, len);
}

/* ---- barrier ---------------------------------------------------------------------- */

static void sizes_none(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	(void)b;
	(void)n;
	*s = *r = 0;
}

static int barrier_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	return nb ? wait_req(b, MPI_USER(Ibarrier)(b->comm, &q), &q) : MPI_USER(Barrier)(b->comm);
}

static void fill_none(struct bench_buf *b)
{
	(void)b;
}

static int check_none(const struct bench_buf *b, char *msg, size_t len)
{
	(void)b;
	(void)msg;
	(void)len;
	return 0;
}

/* ---- bcast ------------------------------------------------------------------------- */

static void sizes_bcast(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	(void)b;
	*s = 0;
	*r = n;
}

static int bcast_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	if (nb)
		return wait_req(b, MPI_USER(Ibcast)(b->rbuf, b->count, MPI_BYTE, b->root, b->comm, &q), &q);
	return MPI_USER(Bcast)(b->rbuf, b->count, MPI_BYTE, b->root, b->comm);
}

static void fill_bcast(struct bench_buf *b)
{
	if (b->rank == b->root)
		fill8(b->rbuf, b->bytes, b->root, 0);
	else
		memset(b->rbuf, GARBAGE, b->bytes);
}

static int check_bcast(const struct bench_buf *b, char *msg, size_t len)
{
	return check8(b->rbuf, b->bytes, b->root, 0, "received", msg, len);
}

/* ---- reduce, allreduce, scan, exscan (vectors of --datatype) -------------------------- */

static void sizes_vec(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = b->in_place ? 0 : n;
	*r = n;
}

static void sizes_reduce(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	int root = b->rank == b->root;
	*s = b->in_place && root ? 0 : n;
	*r = root ? n : 0;
}

static int reduce_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	int root = b->rank == b->root;
	const void *s = b->in_place && root ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(b, MPI_USER(Ireduce)(s, b->rbuf, b->count, b->mtype, b->mop, b->root,
	                                      b->comm, &q), &q)
	            : MPI_USER(Reduce)(s, b->rbuf, b->count, b->mtype, b->mop, b->root, b->comm);
	if (root)
		corrupt(b, b->rbuf);
	return rc;
}

static int allreduce_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(b, MPI_USER(Iallreduce)(s, b->rbuf, b->count, b->mtype, b->mop, b->comm,
	                                         &q), &q)
	            : MPI_USER(Allreduce)(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
	corrupt(b, b->rbuf);
	return rc;
}

static int scan_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(b, MPI_USER(Iscan)(s, b->rbuf, b->count, b->mtype, b->mop, b->comm, &q),
	                          &q)
	            : MPI_USER(Scan)(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
	corrupt(b, b->rbuf);
	return rc;
}

static int exscan_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(b, MPI_USER(Iexscan)(s, b->rbuf, b->count, b->mtype, b->mop, b->comm,
	                                      &q), &q)
	            : MPI_USER(Exscan)(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
	if (b->rank > 0)
		corrupt(b, b->rbuf);
	return rc;
}

static void fill_vec(struct bench_buf *b)
{
	/* reduce (the rooted one) takes its input from rbuf in place only at the root */
	int in_rbuf = b->in_place && (!(b->op->flags & OP_ROOTED) || b->rank == b->root);
	if (in_rbuf) {
		fillv(b, b->rbuf, b->rank, 0);
	} else {
		fillv(b, b->sbuf, b->rank, 0);
		memset(b->rbuf, GARBAGE, b->rbytes);
	}
}

static int check_reduce(const struct bench_buf *b, char *msg, size_t len)
{
	if (b->rank != b->root)
		return 0;
	return check_red(b, b->rbuf, 0, b->nprocs, 0, msg, len);
}

static int check_allreduce(const struct bench_buf *b, char *msg, size_t len)
{
	return check_red(b, b->rbuf, 0, b->nprocs, 0, msg, len);
}

static int check_scan(const struct bench_buf *b, char *msg, size_t len)
{
	return check_red(b, b->rbuf, 0, b->rank + 1, 0, msg, len);
}

static int check_exscan(const struct bench_buf *b, char *msg, size_t len)
{
	if (b->rank == 0) /* undefined on rank 0 */
		return 0;
	return check_red(b, b->rbuf, 0, b->rank, 0, msg, len);
}

/* ---- gather, scatter, allgather, alltoall ------------------------------------------ */

static void sizes_gather(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	int root = b->rank == b->root;
	*s = b->in_place && root ? 0 : n;
	*r = root ? n * (size_t)b->nprocs : 0;
}

static int gather_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place && b->rank == b->root ? MPI_IN_PLACE : b->sbuf;
	if (nb)
		return wait_req(b, MPI_USER(Igather)(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
		                               b->root, b->comm, &q), &q);
	return MPI_USER(Gather)(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->root, b->comm);
}

static void fill_gather(struct bench_buf *b)
{
	if (b->rank == b->root) {
		memset(b->rbuf, GARBAGE, b->rbytes);
		if (b->in_place) {
			fill8(blk8(b->rbuf, b, b->rank), b->bytes, b->rank, 0);
			return;
		}
	}
	fill8(b->sbuf, b->bytes, b->rank, 0);
}

static int check_blocks_from_all(const struct bench_buf *b, int to, char *msg, size_t len)
{
	char what[64];
	for (int r = 0; r < b->nprocs; r++) {
		snprintf(what, sizeof(what), "block from rank %d", r);
		if (check8(blk8(b->rbuf, b, r), b->bytes, r, to, what, msg, len))
			return -1;
	}
	return 0;
}

static int check_gather(const struct bench_buf *b, char *msg, size_t len)
{
	return b->rank == b->root ? check_blocks_from_all(b, 0, msg, len) : 0;
}

static void sizes_scatter(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	int root = b->rank == b->root;
	*s = root ? n * (size_t)b->nprocs : 0;
	*r = b->in_place && root ? 0 : n;
}

static int scatter_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	void *r = b->in_place && b->rank == b->root ? MPI_IN_PLACE : b->rbuf;
	if (nb)
		return wait_req(b, MPI_USER(Iscatter)(b->sbuf, b->count, MPI_BYTE, r, b->count, MPI_BYTE,
		                                b->root, b->comm, &q), &q);
	return MPI_USER(Scatter)(b->sbuf, b->count, MPI_BYTE, r, b->count, MPI_BYTE, b->root, b->comm);
}

static void fill_scatter(struct bench_buf *b)
{
	if (b->rank == b->root)
		for (int j = 0; j < b->nprocs; j++)
			fill8(blk8(b->sbuf, b, j), b->bytes, b->root, j);
	if (b->rbytes)
		memset(b->rbuf, GARBAGE, b->rbytes);
}

static int check_scatter(const struct bench_buf *b, char *msg, size_t len)
{
	if (b->in_place && b->rank == b->root)
		return check8(blk8(b->sbuf, b, b->rank), b->bytes, b->root, b->rank,
		              "root's own block", msg, len);
	return check8(b->rbuf, b->bytes, b->root, b->rank, "received", msg, len);
}

static void sizes_allgather(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = b->in_place ? 0 : n;
	*r = n * (size_t)b->nprocs;
}

static int allgather_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	if (nb)
		return wait_req(b, MPI_USER(Iallgather)(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
		                                  b->comm, &q), &q);
	return MPI_USER(Allgather)(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->comm);
}

static void fill_allgather(struct bench_buf *b)
{
	memset(b->rbuf, GARBAGE, b->rbytes);
	fill8(b->in_place ? blk8(b->rbuf, b, b->rank) : (uint8_t *)b->sbuf, b->bytes, b->rank, 0);
}

static int check_allgather(const struct bench_buf *b, char *msg, size_t len)
{
	return check_blocks_from_all(b, 0, msg, len);
}

static void sizes_alltoall(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = b->in_place ? 0 : n * (size_t)b->nprocs;
	*r = n * (size_t)b->nprocs;
}

static int alltoall_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	if (nb)
		return wait_req(b, MPI_USER(Ialltoall)(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
		                                 b->comm, &q), &q);
	return MPI_USER(Alltoall)(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->comm);
}

static void fill_alltoall(struct bench_buf *b)
{
	void *in = b->in_place ? b->rbuf : b->sbuf;
	if (!b->in_place)
		memset(b->rbuf, GARBAGE, b->rbytes);
	for (int j = 0; j < b->nprocs; j++)
		fill8(blk8(in, b, j), b->bytes, b->rank, j);
}

static int check_alltoall(const struct bench_buf *b, char *msg, size_t len)
{
	return check_blocks_from_all(b, b->rank, msg, len);
}

/* ---- reduce_scatter_block ----------------------------------------------------------- */

static void sizes_rsb(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = b->in_place ? 0 : n * (size_t)b->nprocs;
	*r = b->in_place ? n * (size_t)b->nprocs : n;
}

static int rsb_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(b, MPI_USER(Ireduce_scatter_block)(s, b->rbuf, b->count, b->mtype,
	                                                    b->mop, b->comm, &q), &q)
	            : MPI_USER(Reduce_scatter_block)(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
	corrupt(b, b->rbuf);
	return rc;
}

static void fill_rsb(struct bench_buf *b)
{
	void *in = b->in_place ? b->rbuf : b->sbuf;
	if (!b->in_place)
		memset(b->rbuf, GARBAGE, b->rbytes);
	for (int j = 0; j < b->nprocs; j++)
		fillv(b, blk8(in, b, j), b->rank, j);
}

static int check_rsb(const struct bench_buf *b, char *msg, size_t len)
{
	return check_red(b, b->rbuf, 0, b->nprocs, b->rank, msg, len);
}

/* ---- gatherv, scatterv, allgatherv, alltoallv, reduce_scatter (blocks by --counts) ---- */

size_t bench_vshare(enum bench_counts mode, size_t n, int nprocs, int r)
{
	if (mode == COUNTS_REGULAR)
		return n;
	/* C(r) = floor(n (r + 1) (r + 2) / (P + 1)); C(P - 1) = n P exactly */
	unsigned __int128 hi = (unsigned __int128)n * (unsigned)(r + 1) * (unsigned)(r + 2);
	unsigned __int128 lo = (unsigned __int128)n * (unsigned)r * (unsigned)(r + 1);
	return (size_t)(hi / (unsigned)(nprocs + 1) - lo / (unsigned)(nprocs + 1));
}

const char *bench_counts_name(int mode)
{
	return mode == COUNTS_SKEWED ? "skewed" : "regular";
}

/* bytes per element of the v-variants: the reduction's extent, or 1 (MPI_BYTE) */
static size_t vunit(const struct bench_buf *b)
{
	return (b->op->flags & OP_REDUCE) ? b->type->extent : 1;
}

/* rank r's block at message size n bytes, bytes */
static size_t vbytes(const struct bench_buf *b, size_t n, int r)
{
	size_t u = vunit(b);
	return bench_vshare(b->counts, n / u, b->nprocs, r) * u;
}

/* the block at displacement d (elements) of buf */
static uint8_t *vat(void *buf, const struct bench_buf *b, int d)
{
	return (uint8_t *)buf + (size_t)d * vunit(b);
}

/* the v-variants' init hook: the counts and displacements of b; 0 or HCLOCK_ENOMEM */
static int vinit(struct bench_buf *b)
{
	int p = b->nprocs;
	if (!(b->vc = malloc(4 * (size_t)p * sizeof(int))))
		return err_set(HCLOCK_ENOMEM, "out of memory for the counts of %s", b->op->name);
	b->vd = b->vc + p;
	b->ac = b->vd + p;
	b->ad = b->ac + p;
	int off = 0, mine = (int)bench_vshare(b->counts, (size_t)b->count, p, b->rank);
	for (int r = 0; r < p; r++) { /* bench_buf_check keeps p x count within an int */
		b->vc[r] = (int)bench_vshare(b->counts, (size_t)b->count, p, r);
		b->vd[r] = off;
		off += b->vc[r];
		b->ac[r] = mine;
		b->ad[r] = r * mine;
	}
	return 0;
}

static void sizes_gatherv(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	int root = b->rank == b->root;
	*s = b->in_place && root ? 0 : vbytes(b, n, b->rank);
	*r = root ? n * (size_t)b->nprocs : 0;
}

static int gatherv_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place && b->rank == b->root ? MPI_IN_PLACE : b->sbuf;
	int n = b->vc[b->rank];
	if (nb)
		return wait_req(b, MPI_USER(Igatherv)(s, n, MPI_BYTE, b->rbuf, b->vc, b->vd, MPI_BYTE,
		                                b->root, b->comm, &q), &q);
	return MPI_USER(Gatherv)(s, n, MPI_BYTE, b->rbuf, b->vc, b->vd, MPI_BYTE, b->root, b->comm);
}

static void fill_gatherv(struct bench_buf *b)
{
	if (b->rank == b->root) {
		memset(b->rbuf, GARBAGE, b->rbytes);
		if (b->in_place) {
			fill8(vat(b->rbuf, b, b->vd[b->rank]), (size_t)b->vc[b->rank], b->rank, 0);
			return;
		}
	}
	fill8(b->sbuf, (size_t)b->vc[b->rank], b->rank, 0);
}

/* block r of rbuf (at vd[r], vc[r] bytes) is rank r's block 0, for every r */
static int check_vblocks(const struct bench_buf *b, char *msg, size_t len)
{
	char what[64];
	for (int r = 0; r < b->nprocs; r++) {
		snprintf(what, sizeof(what), "block from rank %d", r);
		if (check8(vat(b->rbuf, b, b->vd[r]), (size_t)b->vc[r], r, 0, what, msg, len))
			return -1;
	}
	return 0;
}

static int check_gatherv(const struct bench_buf *b, char *msg, size_t len)
{
	return b->rank == b->root ? check_vblocks(b, msg, len) : 0;
}

static void sizes_scatterv(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	int root = b->rank == b->root;
	*s = root ? n * (size_t)b->nprocs : 0;
	*r = b->in_place && root ? 0 : vbytes(b, n, b->rank);
}

static int scatterv_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	void *r = b->in_place && b->rank == b->root ? MPI_IN_PLACE : b->rbuf;
	int n = b->vc[b->rank];
	if (nb)
		return wait_req(b, MPI_USER(Iscatterv)(b->sbuf, b->vc, b->vd, MPI_BYTE, r, n, MPI_BYTE,
		                                 b->root, b->comm, &q), &q);
	return MPI_USER(Scatterv)(b->sbuf, b->vc, b->vd, MPI_BYTE, r, n, MPI_BYTE, b->root, b->comm);
}

static void fill_scatterv(struct bench_buf *b)
{
	if (b->rank == b->root)
		for (int j = 0; j < b->nprocs; j++)
			fill8(vat(b->sbuf, b, b->vd[j]), (size_t)b->vc[j], b->root, j);
	if (b->rbytes)
		memset(b->rbuf, GARBAGE, b->rbytes);
}

static int check_scatterv(const struct bench_buf *b, char *msg, size_t len)
{
	size_t n = (size_t)b->vc[b->rank];
	if (b->in_place && b->rank == b->root)
		return check8(vat(b->sbuf, b, b->vd[b->rank]), n, b->root, b->rank,
		              "root's own block", msg, len);
	return check8(b->rbuf, n, b->root, b->rank, "received", msg, len);
}

static void sizes_allgatherv(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = b->in_place ? 0 : vbytes(b, n, b->rank);
	*r = n * (size_t)b->nprocs;
}

static int allgatherv_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int n = b->vc[b->rank];
	if (nb)
		return wait_req(b, MPI_USER(Iallgatherv)(s, n, MPI_BYTE, b->rbuf, b->vc, b->vd, MPI_BYTE,
		                                   b->comm, &q), &q);
	return MPI_USER(Allgatherv)(s, n, MPI_BYTE, b->rbuf, b->vc, b->vd, MPI_BYTE, b->comm);
}

static void fill_allgatherv(struct bench_buf *b)
{
	memset(b->rbuf, GARBAGE, b->rbytes);
	fill8(b->in_place ? vat(b->rbuf, b, b->vd[b->rank]) : (uint8_t *)b->sbuf,
	      (size_t)b->vc[b->rank], b->rank, 0);
}

/* alltoallv: the block from rank i to rank j is rank j's share, vc[j] bytes; so rank j
 * receives P x vc[j] and every rank sends P x size */
static void sizes_alltoallv(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = n * (size_t)b->nprocs;
	*r = vbytes(b, n, b->rank) * (size_t)b->nprocs;
}

static int alltoallv_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	if (nb)
		return wait_req(b, MPI_USER(Ialltoallv)(b->sbuf, b->vc, b->vd, MPI_BYTE, b->rbuf, b->ac, b->ad,
		                                  MPI_BYTE, b->comm, &q), &q);
	return MPI_USER(Alltoallv)(b->sbuf, b->vc, b->vd, MPI_BYTE, b->rbuf, b->ac, b->ad, MPI_BYTE,
	                     b->comm);
}

static void fill_alltoallv(struct bench_buf *b)
{
	memset(b->rbuf, GARBAGE, b->rbytes);
	for (int j = 0; j < b->nprocs; j++)
		fill8(vat(b->sbuf, b, b->vd[j]), (size_t)b->vc[j], b->rank, j);
}

static int check_alltoallv(const struct bench_buf *b, char *msg, size_t len)
{
	char what[64];
	for (int r = 0; r < b->nprocs; r++) {
		snprintf(what, sizeof(what), "block from rank %d", r);
		if (check8(vat(b->rbuf, b, b->ad[r]), (size_t)b->ac[r], r, b->rank, what, msg, len))
			return -1;
	}
	return 0;
}

/* reduce_scatter: a vector of P x size bytes reduced, rank r gets its share at vd[r] */
static void sizes_rs(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = b->in_place ? 0 : n * (size_t)b->nprocs;
	*r = b->in_place ? n * (size_t)b->nprocs : vbytes(b, n, b->rank);
}

static int rs_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(b, MPI_USER(Ireduce_scatter)(s, b->rbuf, b->vc, b->mtype, b->mop, b->comm,
	                                              &q), &q)
	            : MPI_USER(Reduce_scatter)(s, b->rbuf, b->vc, b->mtype, b->mop, b->comm);
	if (b->vc[b->rank] > 0)
		corrupt(b, b->rbuf);
	return rc;
}

static void fill_rs(struct bench_buf *b)
{
	void *in = b->in_place ? b->rbuf : b->sbuf;
	if (!b->in_place)
		memset(b->rbuf, GARBAGE, b->rbytes);
	for (int j = 0; j < b->nprocs; j++)
		fillv_n(b, vat(in, b, b->vd[j]), (size_t)b->vc[j], b->rank, j);
}

static int check_rs(const struct bench_buf *b, char *msg, size_t len)
{
	return check_red_n(b, b->rbuf, (size_t)b->vc[b->rank], 0, b->nprocs, b->rank, msg, len);
}

/* ---- neighborhood collectives on the --topology communicator --------------------------- */

const char *bench_topology_name(int topo)
{
	return topo == TOPO_GRAPH ? "graph" : "cart";
}

/* The neighbors of a rank in topology topo (op.h: enum bench_topology), which topo_create
 * puts in nsrc and ndst; the sizes hooks count them here, since bench_buf_check calls them
 * without the init hook. */
static int degree(enum bench_topology topo)
{
	return topo == TOPO_GRAPH ? 3 : 4;
}

/* Collective over b->comm: make b->ncomm and its neighbor lists. An MPI code. */
static int topo_create(struct bench_buf *b)
{
	int rc, p = b->nprocs, me = b->rank;
	b->nsrc = b->ndst = degree(b->topology);
	if (b->topology == TOPO_GRAPH) {
		int h = p / 2 > 0 ? p / 2 : 1;
		int s[3] = {(me - 1 + p) % p, (me + 1) % p, (me - h % p + p) % p};
		int d[3] = {(me + 1) % p, (me - 1 + p) % p, (me + h) % p};
		int w[3] = {1, 1, 1}; /* Open MPI's MPI_UNWEIGHTED, (int *)2, trips -Wextra */
		memcpy(b->srcs, s, sizeof(s));
		memcpy(b->dsts, d, sizeof(d));
		return PMPI_Dist_graph_create_adjacent(b->comm, 3, s, w, 3, d, w, MPI_INFO_NULL, 0,
		                                      &b->ncomm);
	}
	int dims[2] = {0, 0}, periods[2] = {1, 1};
	if ((rc = PMPI_Dims_create(p, 2, dims)) != MPI_SUCCESS ||
	    (rc = PMPI_Cart_create(b->comm, 2, dims, periods, 0, &b->ncomm)) != MPI_SUCCESS)
		return rc;
	/* MPI_Cart_shift's order: in each dimension the -1 neighbor, then the +1 one */
	for (int k = 0; rc == MPI_SUCCESS && k < 2; k++)
		rc = PMPI_Cart_shift(b->ncomm, k, 1, &b->srcs[2 * k], &b->srcs[2 * k + 1]);
	memcpy(b->dsts, b->srcs, sizeof(b->srcs));
	return rc;
}

/* the neighborhood collectives' init hook: 0 or HCLOCK_EMPI */
static int nbr_init(struct bench_buf *b)
{
	int rc = topo_create(b);
	return comm_check(rc, b->topology == TOPO_GRAPH ? "MPI_Dist_graph_create_adjacent"
	                                                : "MPI_Cart_create");
}

static void sizes_nallgather(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = n;
	*r = n * (size_t)degree(b->topology);
}

static int nallgather_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	if (nb)
		return wait_req(b, MPI_USER(Ineighbor_allgather)(b->sbuf, b->count, MPI_BYTE, b->rbuf,
		                                           b->count, MPI_BYTE, b->ncomm, &q), &q);
	return MPI_USER(Neighbor_allgather)(b->sbuf, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
	                              b->ncomm);
}

static void fill_nallgather(struct bench_buf *b)
{
	memset(b->rbuf, GARBAGE, b->rbytes);
	fill8(b->sbuf, b->bytes, b->rank, 0);
}

/* receive block k (of the v-forms: nrc[k] bytes at nrd[k]) came from srcs[k] and is its
 * block for rank `to` (0: allgather's one) */
static int check_nblocks(const struct bench_buf *b, int to, char *msg, size_t len)
{
	char what[64];
	int v = (b->op->flags & OP_V) != 0;
	for (int k = 0; k < b->nsrc; k++) {
		snprintf(what, sizeof(what), "block %d (from rank %d)", k, b->srcs[k]);
		const uint8_t *p = v ? (uint8_t *)b->rbuf + b->nrd[k] : blk8(b->rbuf, b, k);
		if (check8(p, v ? (size_t)b->nrc[k] : b->bytes, b->srcs[k], to, what, msg, len))
			return -1;
	}
	return 0;
}

static int check_nallgather(const struct bench_buf *b, char *msg, size_t len)
{
	return check_nblocks(b, 0, msg, len);
}

static void sizes_nalltoall(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = *r = n * (size_t)degree(b->topology);
}

static int nalltoall_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	if (nb)
		return wait_req(b, MPI_USER(Ineighbor_alltoall)(b->sbuf, b->count, MPI_BYTE, b->rbuf,
		                                          b->count, MPI_BYTE, b->ncomm, &q), &q);
	return MPI_USER(Neighbor_alltoall)(b->sbuf, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
	                             b->ncomm);
}

static void fill_nalltoall(struct bench_buf *b)
{
	/* the block for neighbor k carries (sender, receiver), not k: where one rank is
	 * neighbor twice (a periodic dimension of 1 or 2 ranks) either matching is right */
	memset(b->rbuf, GARBAGE, b->rbytes);
	for (int k = 0; k < b->ndst; k++)
		fill8(blk8(b->sbuf, b, k), b->bytes, b->rank, b->dsts[k]);
}

static int check_nalltoall(const struct bench_buf *b, char *msg, size_t len)
{
	return check_nblocks(b, b->rank, msg, len);
}

/* neighbor_allgatherv, neighbor_alltoallv: the block to or from rank r is r's share */

/* the largest share at message size n bytes, bytes */
static size_t vmax(const struct bench_buf *b, size_t n)
{
	size_t m = 0;
	for (int r = 0; r < b->nprocs; r++) {
		size_t v = vbytes(b, n, r);
		m = v > m ? v : m;
	}
	return m;
}

/* the shares of the k ranks at message size n bytes, bytes; an upper bound before
 * bench_buf_init has made the neighbor lists (vc: after them) */
static size_t vsum(const struct bench_buf *b, size_t n, const int *ranks, int k)
{
	size_t sum = 0;
	if (!b->vc)
		return vmax(b, n) * (size_t)k;
	for (int i = 0; i < k; i++)
		sum += vbytes(b, n, ranks[i]);
	return sum;
}

static void sizes_nallgatherv(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	*s = vbytes(b, n, b->rank);
	*r = vsum(b, n, b->srcs, degree(b->topology));
}

static int nallgatherv_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	int n = b->vc[b->rank];
	if (nb)
		return wait_req(b, MPI_USER(Ineighbor_allgatherv)(b->sbuf, n, MPI_BYTE, b->rbuf, b->nrc,
		                                            b->nrd, MPI_BYTE, b->ncomm, &q), &q);
	return MPI_USER(Neighbor_allgatherv)(b->sbuf, n, MPI_BYTE, b->rbuf, b->nrc, b->nrd, MPI_BYTE,
	                               b->ncomm);
}

static void fill_nallgatherv(struct bench_buf *b)
{
	memset(b->rbuf, GARBAGE, b->rbytes);
	fill8(b->sbuf, (size_t)b->vc[b->rank], b->rank, 0);
}

static void sizes_nalltoallv(const struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	int k = degree(b->topology);
	*s = vsum(b, n, b->dsts, k);
	*r = vbytes(b, n, b->rank) * (size_t)k;
}

static int nalltoallv_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	if (nb)
		return wait_req(b, MPI_USER(Ineighbor_alltoallv)(b->sbuf, b->nsc, b->nsd, MPI_BYTE, b->rbuf,
		                                           b->nrc, b->nrd, MPI_BYTE, b->ncomm, &q),
		                &q);
	return MPI_USER(Neighbor_alltoallv)(b->sbuf, b->nsc, b->nsd, MPI_BYTE, b->rbuf, b->nrc, b->nrd,
	                              MPI_BYTE, b->ncomm);
}

static void fill_nalltoallv(struct bench_buf *b)
{
	memset(b->rbuf, GARBAGE, b->rbytes);
	for (int k = 0; k < b->ndst; k++) /* (sender, receiver), as fill_nalltoall */
		fill8((uint8_t *)b->sbuf + b->nsd[k], (size_t)b->nsc[k], b->rank, b->dsts[k]);
}

/* the init hook of the neighborhood v-forms: the topology (nbr_init), the shares (vinit),
 * and from them the neighbor counts and displacements; 0 or a negative HCLOCK_E* */
static int nbr_vinit(struct bench_buf *b)
{
	int rc = nbr_init(b);
	if (rc || (rc = vinit(b)))
		return rc;
	int me = b->vc[b->rank], roff = 0, soff = 0;
	int allgather = b->op->sizes == sizes_nallgatherv;
	for (int k = 0; k < b->nsrc; k++) {
		b->nrc[k] = allgather ? b->vc[b->srcs[k]] : me;
		b->nrd[k] = roff;
		roff += b->nrc[k];
	}
	for (int k = 0; k < b->ndst; k++) {
		b->nsc[k] = b->vc[b->dsts[k]];
		b->nsd[k] = soff;
		soff += b->nsc[k];
	}
	return 0;
}

/* ---- the table ---------------------------------------------------------------------- */

#define PAIR(x)                                                                            \
	static int call_##x(struct bench_buf *b) { return x##_x(b, 0); }                      \
	static int call_i##x(struct bench_buf *b) { return x##_x(b, 1); }
PAIR(barrier)
PAIR(bcast)
PAIR(reduce)
PAIR(allreduce)
PAIR(gather)
PAIR(scatter)
PAIR(allgather)
PAIR(alltoall)
PAIR(rsb)
PAIR(scan)
PAIR(exscan)
PAIR(rs)
/* the byte-moving operations that the hook build breaks (corrupt8) */
#define PAIR8(x)                                                                           \
	static int call_##x(struct bench_buf *b) { return x##_x8(b, 0); }                     \
	static int call_i##x(struct bench_buf *b) { return x##_x8(b, 1); }
#define X8(x)                                                                              \
	static int x##_x8(struct bench_buf *b, int nb)                                         \
	{                                                                                      \
		int rc = x##_x(b, nb);                                                             \
		corrupt8(b);                                                                       \
		return rc;                                                                         \
	}                                                                                      \
	PAIR8(x)
X8(gatherv)
X8(scatterv)
X8(allgatherv)
X8(alltoallv)
X8(nallgather)
X8(nalltoall)
X8(nallgatherv)
X8(nalltoallv)

#define OPS(name, x, flags, sz, fl, ck, init)                                              \
	{#name, flags, sz, call_##x, fl, ck, init},                                            \
	{"i" #name, (flags) | OP_NONBLOCKING, sz, call_i##x, fl, ck, init}

static const struct bench_op ops[] = {
	OPS(barrier, barrier, OP_NOSIZE, sizes_none, fill_none, check_none, NULL),
	OPS(bcast, bcast, OP_ROOTED, sizes_bcast, fill_bcast, check_bcast, NULL),
	OPS(reduce, reduce, OP_ROOTED | OP_REDUCE | OP_INPLACE, sizes_reduce, fill_vec,
	    check_reduce, NULL),
	OPS(allreduce, allreduce, OP_REDUCE | OP_INPLACE, sizes_vec, fill_vec, check_allreduce,
	    NULL),
	OPS(gather, gather, OP_ROOTED | OP_INPLACE, sizes_gather, fill_gather, check_gather, NULL),
	OPS(scatter, scatter, OP_ROOTED | OP_INPLACE, sizes_scatter, fill_scatter, check_scatter,
	    NULL),
	OPS(allgather, allgather, OP_INPLACE, sizes_allgather, fill_allgather, check_allgather,
	    NULL),
	OPS(alltoall, alltoall, OP_INPLACE, sizes_alltoall, fill_alltoall, check_alltoall, NULL),
	OPS(reduce_scatter_block, rsb, OP_REDUCE | OP_INPLACE, sizes_rsb, fill_rsb, check_rsb,
	    NULL),
	OPS(scan, scan, OP_REDUCE | OP_INPLACE, sizes_vec, fill_vec, check_scan, NULL),
	OPS(exscan, exscan, OP_REDUCE | OP_INPLACE, sizes_vec, fill_vec, check_exscan, NULL),
	OPS(gatherv, gatherv, OP_V | OP_ROOTED | OP_INPLACE, sizes_gatherv, fill_gatherv,
	    check_gatherv, vinit),
	OPS(scatterv, scatterv, OP_V | OP_ROOTED | OP_INPLACE, sizes_scatterv, fill_scatterv,
	    check_scatterv, vinit),
	OPS(allgatherv, allgatherv, OP_V | OP_INPLACE, sizes_allgatherv, fill_allgatherv,
	    check_vblocks, vinit),
	OPS(alltoallv, alltoallv, OP_V, sizes_alltoallv, fill_alltoallv, check_alltoallv, vinit),
	OPS(reduce_scatter, rs, OP_V | OP_REDUCE | OP_INPLACE, sizes_rs, fill_rs, check_rs, vinit),
	OPS(neighbor_allgather, nallgather, OP_NEIGHBOR, sizes_nallgather, fill_nallgather,
	    check_nallgather, nbr_init),
	OPS(neighbor_alltoall, nalltoall, OP_NEIGHBOR, sizes_nalltoall, fill_nalltoall,
	    check_nalltoall, nbr_init),
	OPS(neighbor_allgatherv, nallgatherv, OP_NEIGHBOR | OP_V, sizes_nallgatherv,
	    fill_nallgatherv, check_nallgather, nbr_vinit),
	OPS(neighbor_alltoallv, nalltoallv, OP_NEIGHBOR | OP_V, sizes_nalltoallv,
	    fill_nalltoallv, check_nalltoall, nbr_vinit),
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

const struct bench_op *bench_op_find(const char *name)
{
	for (size_t i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

int bench_op_lookup(const char *name, const struct bench_op **out)
{
	*out = bench_op_find(name);
	if (!*out)
		return err_set(HCLOCK_EINVAL, "unknown operation '%s'; expected one of: %s", name,
		               bench_op_names());
	return 0;
}

size_t bench_op_count(void)
{
	return NOPS;
}

const struct bench_op *bench_op_at(size_t i)
{
	return i < NOPS ? &ops[i] : NULL;
}

const char *bench_op_names_where(unsigned all_of, unsigned none_of, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NOPS && off < len; i++)
		if ((ops[i].flags & all_of) == all_of && !(ops[i].flags & none_of))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
			                        ops[i].name);
	return buf;
}

const char *bench_op_names(void)
{
	static char buf[1024];
	return buf[0] ? buf : bench_op_names_where(0, 0, buf, sizeof(buf));
}

/* ---- validation and errors ---------------------------------------------------------- */

int bench_op_validate(struct bench_buf *b)
{
	char msg[256] = "";
	int root = b->root;
	void *sbuf = b->sbuf, *rbuf = b->rbuf;
	size_t set = b->set;
	b->op->fill(b);
	int rc = bench_op_call(b);
	/* the check looks at the root and the buffers of this call */
	b->root = root;
	b->sbuf = sbuf;
	b->rbuf = rbuf;
	b->set = set;
	if (rc) {
		snprintf(msg, sizeof(msg), "%s", hclock_last_error());
		return err_set(rc, "%s of %zu bytes: %s", b->op->name, b->bytes, msg);
	}
	if (b->op->check(b, msg, sizeof(msg)))
		return err_set(HCLOCK_EMPI, "%s of %zu bytes gave a wrong result: %s", b->op->name,
		               b->bytes, msg);
	return 0;
}

int bench_op_error(const struct bench_buf *b, int mpi_rc)
{
	/* the MPI function is the operation's name, capitalized: allreduce -> MPI_Allreduce */
	char call[64];
	const char *name = b->op->name;
	snprintf(call, sizeof(call), "MPI_%c%s%s", toupper((unsigned char)name[0]), name + 1,
	         (b->op->flags & OP_NONBLOCKING) ? "/MPI_Wait" : "");
	return comm_check(mpi_rc, call);
}
