/* buf.c - the buffers of one operation at one message size (bench/buf.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/buf.h"
#include "hclock_api.h"
#include "transport/comm.h"
#include "util/err.h"

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
	size_t elems = (op->flags & OP_REDUCE) ? bytes / t->extent : bytes;
	if ((op->flags & OP_V) && (double)elems * nprocs > INT_MAX)
		return err_set(HCLOCK_EINVAL, "size %zu of %s on %d ranks puts displacements beyond "
		               "MPI's int (%d elements in all)", bytes, op->name, nprocs, INT_MAX);
	/* the largest buffers are the root's, or (alltoallv, skewed) the last rank's: size
	 * them as if this rank were either */
	struct bench_buf b = {.op = op, .rank = 0, .root = 0, .nprocs = nprocs,
	                      .in_place = bo->in_place && (op->flags & OP_INPLACE), .bytes = bytes,
	                      .root_shift = bo->root_shift && (op->flags & OP_ROOTED), .type = t,
	                      .counts = bo->counts, .topology = bo->topology};
	/* an upper bound first, before size_t could wrap */
	double need = (2.0 + BENCH_MAX_DEGREE) * (double)bytes * nprocs +
	              2.0 * (double)bo->mode_bytes;
	if (need < (double)max_bytes) {
		need = 0;
		for (int k = 0; k < 2; k++, b.rank = nprocs - 1) {
			layout(&b, bo);
			double nk = (double)(b.sstride + b.rstride) * (double)b.nsets +
			            (double)b.flush_bytes;
			need = nk > need ? nk : need;
		}
	}
	if (need > (double)max_bytes) {
		char hn[32], hm[32];
		human(hn, sizeof(hn), need);
		human(hm, sizeof(hm), (double)max_bytes);
		return err_set(HCLOCK_EINVAL, "size %zu of %s needs %s of buffers per process on %d "
		               "ranks, more than the %s of memory each process here can have", bytes,
		               op->name, hn, nprocs, hm);
	}
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
	PMPI_Comm_rank(comm, &b->rank);
	PMPI_Comm_size(comm, &b->nprocs);
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
	b->counts = bo->counts;
	b->topology = bo->topology;
	b->ncomm = MPI_COMM_NULL;
	int rc = op->init ? op->init(b) : 0;
	if (rc) {
		bench_buf_free(b);
		return rc;
	}
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
	return comm_check(PMPI_Barrier(b->comm), "MPI_Barrier (after --buffers offcache)");
}

void bench_buf_free(struct bench_buf *b)
{
	free(b->sbase);
	free(b->rbase);
	free(b->flush);
	free(b->vc);
	b->sbase = b->rbase = b->sbuf = b->rbuf = NULL;
	b->flush = NULL;
	b->vc = b->vd = b->ac = b->ad = NULL;
	/* only a buffer that bench_buf_init made has a topology communicator (collective) */
	if (b->op && (b->op->flags & OP_NEIGHBOR) && b->ncomm != MPI_COMM_NULL)
		PMPI_Comm_free(&b->ncomm);
}
