/*
 * op.h - the MPI operations hclock bench measures: one table entry per collective, with its
 * buffer sizes and set-up, one call (nonblocking forms complete with MPI_Wait), and the
 * result check of --validate. The buffers themselves (layout, allocation): bench/buf.h.
 *
 * Message size: "size" is the bytes one process contributes to or receives from one other
 * process: the broadcast message, one block of gather/scatter/allgather/alltoall, the
 * reduced vector of reduce/allreduce/scan/exscan, the block each process receives from
 * reduce_scatter_block; for the v-variants (gatherv, scatterv, allgatherv, alltoallv,
 * reduce_scatter) the mean block: P blocks together hold P x size, split among the ranks by
 * --counts (enum bench_counts: equal blocks, or rank r's block proportional to r + 1); for
 * the neighborhood collectives the block sent to or received from one neighbor of
 * --topology (enum bench_topology), whose v-forms give the block to or from rank r rank
 * r's --counts share. Reductions work on elements of --datatype with --reduce-op
 * (bench/dtype.h; int32 and sum by default), so their sizes must be multiples of the type's
 * extent. barrier has no message; its size is reported as 0.
 *
 * Adding an operation: its hooks below and one OPS(...) line in the table of op.c; the help
 * texts, the error lines and the --root list are made from the table, and bench_buf_init
 * (bench/buf.h) sizes and sets up its buffers through its hooks.
 *
 * Errors: the functions here return 0 or a negative HCLOCK_E* with hclock_last_error()
 * naming what failed (the table's call hook alone returns the MPI code, which
 * bench_op_call turns into HCLOCK_EMPI).
 */
#ifndef HCLOCK_BENCH_OP_H
#define HCLOCK_BENCH_OP_H

#include <stddef.h>
#include <stdint.h>

#include "util/pmpi.h"

#include "bench/dtype.h"
#include "util/fault.h"

enum {
	OP_ROOTED = 1,      /* has a root (--root) */
	OP_REDUCE = 2,      /* reduction on elements of --datatype */
	OP_INPLACE = 4,     /* MPI_IN_PLACE applies */
	OP_NOSIZE = 8,      /* no message (barrier) */
	OP_NONBLOCKING = 16, /* i-form completed with MPI_Wait */
	OP_V = 32,          /* block sizes by --counts (gatherv, ..., reduce_scatter) */
	OP_NEIGHBOR = 64    /* neighborhood collective on the --topology communicator */
};

/* --counts: how the v-variants split P x size among the ranks (bench_vshare). */
enum bench_counts { COUNTS_REGULAR, COUNTS_SKEWED };
/* --topology of the neighborhood collectives: a periodic 2-D Cartesian grid of
 * MPI_Dims_create(P, 2) (4 neighbors: -1 and +1 in each dimension, MPI_Cart_shift's order),
 * or a ring with chords made with MPI_Dist_graph_create_adjacent (rank r sends to r + 1,
 * r - 1 and r + P/2 and receives from r - 1, r + 1 and r - P/2, mod P; 3 neighbors). */
enum bench_topology { TOPO_CART, TOPO_GRAPH };
#define BENCH_MAX_DEGREE 4 /* neighbors of a rank in either topology, at most */

/* The elements of rank r's block when n x P elements are split among P ranks: n
 * (regular), or skewed: C(r) - C(r - 1) with C(r) = floor(n (r + 1) (r + 2) / (P + 1)),
 * a share proportional to r + 1 rounded so that the blocks sum to exactly n x P. */
size_t bench_vshare(enum bench_counts mode, size_t n, int nprocs, int r);
const char *bench_counts_name(int mode);
const char *bench_topology_name(int topo);

struct bench_buf;

struct bench_op {
	const char *name; /* "allreduce", "iallreduce", ... */
	unsigned flags;
	/* Bytes of send and receive buffer this rank needs for message size bytes. Called by
	 * bench_buf_init after init, and by bench_buf_check without it (b zeroed but for op,
	 * rank, nprocs, root, root_shift, in_place, bytes, type, counts and topology), where
	 * an upper bound will do. */
	void (*sizes)(const struct bench_buf *b, size_t bytes, size_t *sbytes, size_t *rbytes);
	/* One call of the operation; returns an MPI error code (MPI_SUCCESS). The blocking
	 * and nonblocking entries of one OPS line share their hooks. */
	int (*call)(struct bench_buf *b);
	/* --validate: fill the inputs with a pattern known to every rank ... */
	void (*fill)(struct bench_buf *b);
	/* ... and after one call check this rank's result: 0, or -1 with a message in msg. */
	int (*check)(const struct bench_buf *b, char *msg, size_t len);
	/* Optional (NULL: nothing to set up): what the operation needs besides its buffers,
	 * made by bench_buf_init before it sizes and allocates them, with every argument of
	 * b already set (the v-variants' vc, vd, ac, ad; the neighborhood collectives' ncomm
	 * and neighbor lists). May be collective over b->comm. 0, or a negative HCLOCK_E*
	 * with hclock_last_error() naming what failed; bench_buf_init then calls
	 * bench_buf_free, which releases what an init may hold (vc, ncomm). */
	int (*init)(struct bench_buf *b);
};

/* Buffers and arguments of one operation at one message size on one rank. */
struct bench_buf {
	const struct bench_op *op;
	MPI_Comm comm;
	int rank, nprocs;
	int root;      /* root of rooted operations */
	int root_shift; /* 1: the root moves on to the next rank after every call (rooted ops) */
	/* --buffers: nsets buffer sets at sbase + k sstride and rbase + k rstride, the next one
	 * used after every call (rotate; 1 set: cached); flush_bytes of flush are written
	 * before every repetition (offcache, bench_buf_prepare) */
	void *sbase, *rbase;
	size_t sstride, rstride;
	size_t nsets, set;
	unsigned char *flush;
	size_t flush_bytes;
	unsigned char flush_val;
	int in_place;  /* use MPI_IN_PLACE where the operation allows it */
	size_t bytes;  /* message size, bytes (see above) */
	int count;     /* elements per block: bytes for MPI_BYTE, bytes / extent for reductions */
	const struct bench_dtype *type; /* reductions: the element type and operation */
	int rop;
	MPI_Datatype mtype;
	MPI_Op mop;
	void *sbuf, *rbuf;
	size_t sbytes, rbytes; /* allocated sizes, bytes */
	/* v-variants: vc[r] elements of rank r's block at displacement vd[r] (elements; the
	 * --counts split of count x nprocs), and alltoallv's receive side: ac[r] = vc[rank]
	 * from every rank r at ad[r] = r x vc[rank] */
	enum bench_counts counts;
	int *vc, *vd, *ac, *ad;
	/* neighborhood collectives: the --topology communicator made from comm, and its
	 * neighbors in the order of the receive (srcs) and send (dsts) blocks */
	enum bench_topology topology;
	MPI_Comm ncomm;
	int nsrc, ndst;
	int srcs[BENCH_MAX_DEGREE], dsts[BENCH_MAX_DEGREE];
	/* their v-forms (elements): receive block k of nrc[k] at nrd[k] (neighbor_allgatherv:
	 * srcs[k]'s share; neighbor_alltoallv: this rank's), send block k of nsc[k] at nsd[k]
	 * (neighbor_alltoallv: dsts[k]'s share) */
	int nrc[BENCH_MAX_DEGREE], nrd[BENCH_MAX_DEGREE];
	int nsc[BENCH_MAX_DEGREE], nsd[BENCH_MAX_DEGREE];
	/* --overlap: iterations of the compute phase between a nonblocking form's start and
	 * its MPI_Wait (0: none; bench/overlap.h), and the phases' durations on this rank's
	 * local clock, ns: the last compute_cap of ncompute (the caller's array) */
	uint64_t compute_iters;
	int64_t *compute_ns;
	size_t compute_cap, ncompute;
};

/* The operation called name, or NULL. */
const struct bench_op *bench_op_find(const char *name);
/* The same as a library call: 0, or HCLOCK_EINVAL with hclock_last_error() naming the
 * unknown name and listing the valid ones. */
int bench_op_lookup(const char *name, const struct bench_op **out);
/* All operation names in table order, separated by ", " (static storage). */
const char *bench_op_names(void);
/* The names of the operations that have every flag of all_of and none of none_of, in buf. */
const char *bench_op_names_where(unsigned all_of, unsigned none_of, char *buf, size_t len);
/* The table: entry i (0 <= i < bench_op_count()). */
size_t bench_op_count(void);
const struct bench_op *bench_op_at(size_t i);

/* Collective: fill the inputs with the validation pattern, call once, check this rank's
 * result. 0; HCLOCK_EMPI when the call failed or its result is wrong (the line names the
 * operation, size, element, value and expected value). */
int bench_op_validate(struct bench_buf *b);

/* The operation's call failed with mpi_rc: HCLOCK_EMPI naming its MPI function (as
 * comm_check of transport/comm.h does for other calls). */
int bench_op_error(const struct bench_buf *b, int mpi_rc);

/* Call the operation once: 0 or HCLOCK_EMPI. */
static inline int bench_op_call(struct bench_buf *b)
{
	int rc = b->op->call(b);
	if (b->root_shift) /* IMB's -root_shift: every rank makes the same calls */
		b->root = (b->root + 1) % b->nprocs;
	if (b->nsets > 1) {
		b->set = b->set + 1 < b->nsets ? b->set + 1 : 0;
		b->sbuf = (char *)b->sbase + b->set * b->sstride;
		b->rbuf = (char *)b->rbase + b->set * b->rstride;
	}
	if (fault_hit(FAULT_OP)) /* the test hook HCLOCK_FAULT=rank=R,at=op */
		rc = MPI_ERR_OTHER;
	return rc == MPI_SUCCESS ? 0 : bench_op_error(b, rc);
}

#endif
