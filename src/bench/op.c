/*
 * op.c - the operation table of hclock bench: buffers, one call, and --validate patterns.
 *
 * Validation patterns are functions of (source rank r, block j, index i) that every rank
 * can compute, so each rank checks its own result without further communication:
 * bytes8() for the data-movement operations, bench_dtype_val() (bench/dtype.h) for the
 * reductions, whose expected value is bench_dtype_expect() over the contributing ranks.
 *
 * A test build defines HCLOCK_BENCH_BREAK_REDUCE: every reduction then adds 1 to the first
 * value of its result, so a test can prove that --validate catches a wrong reduction.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/op.h"
#include "hclock_api.h"
#include "transport/comm.h"
#include "util/err.h"

#define GARBAGE 0xEE

static uint8_t bytes8(int r, int j, size_t i)
{
	return (uint8_t)(r * 131 + j * 17 + (int)(i % 251) * 7 + 1);
}

static void corrupt(const struct bench_buf *b, void *res)
{
#ifdef HCLOCK_BENCH_BREAK_REDUCE
	if (b->count > 0)
		bench_dtype_store(b->type, res, 0, (int64_t)bench_dtype_load(b->type, res, 0) + 1);
#else
	(void)b;
	(void)res;
#endif
}

static int wait_req(int rc, MPI_Request *q)
{
	return rc != MPI_SUCCESS ? rc : MPI_Wait(q, MPI_STATUS_IGNORE);
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

/* the count elements of block j of rank r (of the reductions) */
static void fillv(const struct bench_buf *b, void *p, int r, int j)
{
	size_t n = (size_t)b->count * (size_t)b->type->nvals;
	for (size_t i = 0; i < n; i++)
		bench_dtype_store(b->type, p, i, bench_dtype_val(b->rop, r, j, i));
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

/* value i of p must be the reduction of the values (r, j, i) over r in [r0, r1) */
static int check_red(const struct bench_buf *b, const void *p, int r0, int r1, int j,
                     char *msg, size_t len)
{
	size_t n = (size_t)b->count * (size_t)b->type->nvals;
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
	return nb ? wait_req(MPI_Ibarrier(b->comm, &q), &q) : MPI_Barrier(b->comm);
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
		return wait_req(MPI_Ibcast(b->rbuf, b->count, MPI_BYTE, b->root, b->comm, &q), &q);
	return MPI_Bcast(b->rbuf, b->count, MPI_BYTE, b->root, b->comm);
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
	int rc = nb ? wait_req(MPI_Ireduce(s, b->rbuf, b->count, b->mtype, b->mop, b->root,
	                                   b->comm, &q), &q)
	            : MPI_Reduce(s, b->rbuf, b->count, b->mtype, b->mop, b->root, b->comm);
	if (root)
		corrupt(b, b->rbuf);
	return rc;
}

static int allreduce_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(MPI_Iallreduce(s, b->rbuf, b->count, b->mtype, b->mop, b->comm,
	                                      &q), &q)
	            : MPI_Allreduce(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
	corrupt(b, b->rbuf);
	return rc;
}

static int scan_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(MPI_Iscan(s, b->rbuf, b->count, b->mtype, b->mop, b->comm, &q),
	                       &q)
	            : MPI_Scan(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
	corrupt(b, b->rbuf);
	return rc;
}

static int exscan_x(struct bench_buf *b, int nb)
{
	MPI_Request q;
	const void *s = b->in_place ? MPI_IN_PLACE : b->sbuf;
	int rc = nb ? wait_req(MPI_Iexscan(s, b->rbuf, b->count, b->mtype, b->mop, b->comm,
	                                   &q), &q)
	            : MPI_Exscan(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
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
		return wait_req(MPI_Igather(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
		                            b->root, b->comm, &q), &q);
	return MPI_Gather(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->root, b->comm);
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
		return wait_req(MPI_Iscatter(b->sbuf, b->count, MPI_BYTE, r, b->count, MPI_BYTE,
		                             b->root, b->comm, &q), &q);
	return MPI_Scatter(b->sbuf, b->count, MPI_BYTE, r, b->count, MPI_BYTE, b->root, b->comm);
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
		return wait_req(MPI_Iallgather(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
		                               b->comm, &q), &q);
	return MPI_Allgather(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->comm);
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
		return wait_req(MPI_Ialltoall(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE,
		                              b->comm, &q), &q);
	return MPI_Alltoall(s, b->count, MPI_BYTE, b->rbuf, b->count, MPI_BYTE, b->comm);
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
	int rc = nb ? wait_req(MPI_Ireduce_scatter_block(s, b->rbuf, b->count, b->mtype,
	                                                 b->mop, b->comm, &q), &q)
	            : MPI_Reduce_scatter_block(s, b->rbuf, b->count, b->mtype, b->mop, b->comm);
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

#define OPS(name, x, flags, sz, fl, ck)                                                    \
	{#name, flags, sz, call_##x, fl, ck},                                                  \
	{"i" #name, (flags) | OP_NONBLOCKING, sz, call_i##x, fl, ck}

static const struct bench_op ops[] = {
	OPS(barrier, barrier, OP_NOSIZE, sizes_none, fill_none, check_none),
	OPS(bcast, bcast, OP_ROOTED, sizes_bcast, fill_bcast, check_bcast),
	OPS(reduce, reduce, OP_ROOTED | OP_REDUCE | OP_INPLACE, sizes_reduce, fill_vec,
	    check_reduce),
	OPS(allreduce, allreduce, OP_REDUCE | OP_INPLACE, sizes_vec, fill_vec, check_allreduce),
	OPS(gather, gather, OP_ROOTED | OP_INPLACE, sizes_gather, fill_gather, check_gather),
	OPS(scatter, scatter, OP_ROOTED | OP_INPLACE, sizes_scatter, fill_scatter, check_scatter),
	OPS(allgather, allgather, OP_INPLACE, sizes_allgather, fill_allgather, check_allgather),
	OPS(alltoall, alltoall, OP_INPLACE, sizes_alltoall, fill_alltoall, check_alltoall),
	OPS(reduce_scatter_block, rsb, OP_REDUCE | OP_INPLACE, sizes_rsb, fill_rsb, check_rsb),
	OPS(scan, scan, OP_REDUCE | OP_INPLACE, sizes_vec, fill_vec, check_scan),
	OPS(exscan, exscan, OP_REDUCE | OP_INPLACE, sizes_vec, fill_vec, check_exscan),
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
	static char buf[512];
	return buf[0] ? buf : bench_op_names_where(0, 0, buf, sizeof(buf));
}

/* ---- buffers ------------------------------------------------------------------------ */

static void human(char *buf, size_t len, double bytes)
{
	const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	int k = 0;
	while (bytes >= 1024 && k < 6) {
		bytes /= 1024;
		k++;
	}
	snprintf(buf, len, "%.4g %s", bytes, u[k]);
}

/* The send and receive bytes of b at message size n: with a shifting root, the most of
 * being the root and not (b->root is left as it was). */
static void buf_bytes(struct bench_buf *b, size_t n, size_t *s, size_t *r)
{
	b->op->sizes(b, n, s, r);
	if (b->root_shift && (b->op->flags & OP_ROOTED) && b->nprocs > 1) {
		int root = b->root;
		size_t s2, r2;
		b->root = b->rank == root ? (root + 1) % b->nprocs : b->rank;
		b->op->sizes(b, n, &s2, &r2);
		b->root = root;
		*s = *s > s2 ? *s : s2;
		*r = *r > r2 ? *r : r2;
	}
}

size_t bench_cache_bytes(void)
{
	long c = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
	c = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (c <= 0)
		c = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
	size_t cap = (size_t)64 << 20; /* a VM may report the whole host's cache */
	return c > 0 && 2 * (size_t)c < cap ? 2 * (size_t)c : cap;
}

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* The layout of b's buffers under bo at its message size: strides and sets. */
static void layout(struct bench_buf *b, const struct bench_buf_opts *bo)
{
	size_t a = bo->align > 64 ? bo->align : 64; /* sets never share a cache line */
	buf_bytes(b, b->bytes, &b->sbytes, &b->rbytes);
	b->sstride = round_up(b->sbytes ? b->sbytes : 1, a);
	b->rstride = round_up(b->rbytes ? b->rbytes : 1, a);
	b->nsets = 1;
	if (bo->mode == BUF_ROTATE && b->sbytes + b->rbytes > 0) {
		size_t per = b->sstride + b->rstride, want = (bo->mode_bytes + per - 1) / per;
		b->nsets = want < 2 ? 2 : want > ((size_t)1 << 24) ? (size_t)1 << 24 : want;
	}
	b->flush_bytes = bo->mode == BUF_OFFCACHE ? bo->mode_bytes : 0;
}

int bench_buf_check(const struct bench_op *op, int nprocs, const struct bench_buf_opts *bo,
                    size_t bytes, size_t max_bytes)
{
	if (op->flags & OP_NOSIZE)
		return 0;
	const struct bench_dtype *t = bo->type ? bo->type : bench_dtype_find("int32");
	if ((op->flags & OP_REDUCE) && bytes % t->extent)
		return err_set(HCLOCK_EINVAL, "%s works on %s elements: size %zu is not a multiple "
		               "of %zu bytes", op->name, t->name, bytes, t->extent);
	/* the largest buffers are the root's: size them as if this rank were the root */
	struct bench_buf b = {.op = op, .rank = 0, .root = 0, .nprocs = nprocs,
	                      .in_place = bo->in_place && (op->flags & OP_INPLACE), .bytes = bytes,
	                      .root_shift = bo->root_shift && (op->flags & OP_ROOTED)};
	/* an upper bound first, before size_t could wrap */
	double need = 2.0 * (double)bytes * nprocs + 2.0 * (double)bo->mode_bytes;
	if (need < (double)max_bytes) {
		layout(&b, bo);
		need = (double)(b.sstride + b.rstride) * (double)b.nsets + (double)b.flush_bytes;
	}
	if (need > (double)max_bytes) {
		char hn[32], hm[32];
		human(hn, sizeof(hn), need);
		human(hm, sizeof(hm), (double)max_bytes);
		return err_set(HCLOCK_EINVAL, "size %zu of %s needs %s of buffers per process on %d "
		               "ranks, more than the %s of memory each process here can have", bytes,
		               op->name, hn, nprocs, hm);
	}
	size_t elems = (op->flags & OP_REDUCE) ? bytes / t->extent : bytes;
	if (elems > INT_MAX)
		return err_set(HCLOCK_EINVAL, "size %zu of %s is beyond MPI's int element count (%d "
		               "elements)", bytes, op->name, INT_MAX);
	return 0;
}

static void *alloc_aligned(size_t align, size_t n)
{
	void *p = NULL;
	if (align < sizeof(void *))
		return malloc(n);
	return posix_memalign(&p, align, n) ? NULL : p;
}

int bench_buf_init(struct bench_buf *b, const struct bench_op *op, MPI_Comm comm,
                   const struct bench_buf_opts *bo, size_t bytes)
{
	memset(b, 0, sizeof(*b));
	b->op = op;
	b->comm = comm;
	MPI_Comm_rank(comm, &b->rank);
	MPI_Comm_size(comm, &b->nprocs);
	b->root = bo->root;
	b->in_place = bo->in_place && (op->flags & OP_INPLACE);
	b->bytes = (op->flags & OP_NOSIZE) ? 0 : bytes;
	b->type = bo->type ? bo->type : bench_dtype_find("int32");
	b->rop = bo->rop;
	if (op->flags & OP_REDUCE) {
		b->mtype = bench_dtype_mpi(b->type);
		b->mop = bench_rop_mpi(b->type, b->rop);
	}
	b->count = (int)((op->flags & OP_REDUCE) ? b->bytes / b->type->extent : b->bytes);
	b->root_shift = bo->root_shift && (op->flags & OP_ROOTED);
	layout(b, bo);
	size_t a = bo->mode == BUF_CACHED ? bo->align : (bo->align > 64 ? bo->align : 64);
	/* every set at least one byte, so buffers are valid pointers; touch every page now */
	b->sbase = b->sbuf = alloc_aligned(a, b->sstride * b->nsets);
	b->rbase = b->rbuf = alloc_aligned(a, b->rstride * b->nsets);
	if (b->flush_bytes)
		b->flush = alloc_aligned(64, b->flush_bytes);
	if (!b->sbuf || !b->rbuf || (b->flush_bytes && !b->flush)) {
		bench_buf_free(b);
		return err_set(HCLOCK_ENOMEM, "out of memory for the buffers of %s at %zu bytes "
		               "(%zu sets of %zu + %zu bytes)", op->name, bytes, b->nsets, b->sbytes,
		               b->rbytes);
	}
	memset(b->sbase, 1, b->sstride * b->nsets);
	memset(b->rbase, 0, b->rstride * b->nsets);
	if (b->flush_bytes)
		memset(b->flush, 0, b->flush_bytes);
	return 0;
}

int bench_buf_prepare(struct bench_buf *b)
{
	/* ReproMPI's --clear-cache: write more than the caches hold, so that the operation's
	 * buffers (and the MPI library's) are evicted; then wait for the others, whose writes
	 * take different times, so that the next start is not late for the slowest */
	if (!b->flush_bytes)
		return 0;
	memset(b->flush, ++b->flush_val, b->flush_bytes);
	return comm_check(MPI_Barrier(b->comm), "MPI_Barrier (after --buffers offcache)");
}

void bench_buf_free(struct bench_buf *b)
{
	free(b->sbase);
	free(b->rbase);
	free(b->flush);
	b->sbase = b->rbase = b->sbuf = b->rbuf = NULL;
	b->flush = NULL;
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
