/*
 * dtype.h - the element types (--datatype) and reduction operations (--reduce-op) of the
 * reductions hclock bench measures, with the validation values of --validate.
 *
 * Types: int32, int64, float, double, and vec: MPI_Type_vector(2, 1, 2, MPI_DOUBLE) resized
 * to an extent of 32 bytes, i.e. one element is doubles 0 and 2 of 4, the others gaps left
 * alone. A message of size bytes holds size / extent elements; a size that is not a
 * multiple of the extent is refused.
 *
 * Operations: sum, max, min, prod, band (integer types only), and user: the user-defined
 * commutative op a + b + 1 (MPI_Op_create), whose result over n ranks is the sum plus n - 1.
 * On vec, sum, max, min and prod are user operations doing the same on its doubles.
 *
 * Validation values are small integers, exact in every type, so the expected result is
 * computed exactly in int64 (prod uses +-1, so it never overflows).
 */
#ifndef HCLOCK_BENCH_DTYPE_H
#define HCLOCK_BENCH_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "util/pmpi.h"

enum bench_base { BASE_I32, BASE_I64, BASE_F32, BASE_F64 };
enum bench_rop { ROP_SUM, ROP_MAX, ROP_MIN, ROP_PROD, ROP_BAND, ROP_USER };

struct bench_dtype {
	const char *name;   /* "int32", ... */
	enum bench_base base;
	int nvals;          /* values of the base type per element */
	size_t vstride;     /* bytes from one value of an element to the next */
	size_t extent;      /* bytes per element */
};

/* The type called name (int32 by default), or NULL. */
const struct bench_dtype *bench_dtype_find(const char *name);
/* The type names, ", " separated (static storage). */
const char *bench_dtype_names(void);
/* The operation called name, or -1; its name. */
int bench_rop_find(const char *name);
const char *bench_rop_name(int rop);
const char *bench_rop_names(void);
/* Whether rop applies to t (band: integer types only). */
int bench_rop_allowed(const struct bench_dtype *t, int rop);

/* After MPI_Init: the MPI datatype, and the MPI_Op of rop on t: the predefined one, except
 * for user and for the vec type, which get user operations (the standard defines the
 * predefined operations on predefined types only). The vec type and the user operations
 * are created on first use and live until MPI_Finalize. */
MPI_Datatype bench_dtype_mpi(const struct bench_dtype *t);
MPI_Op bench_rop_mpi(const struct bench_dtype *t, int rop);

/* The validation value of source rank r, block j, value i (i counts base values). */
int64_t bench_dtype_val(int rop, int r, int j, size_t i);
/* The expected reduction of bench_dtype_val over ranks r0 .. r1 - 1. */
int64_t bench_dtype_expect(int rop, int r0, int r1, int j, size_t i);
/* Store v as value i of buffer p / load value i as double. */
void bench_dtype_store(const struct bench_dtype *t, void *p, size_t i, int64_t v);
double bench_dtype_load(const struct bench_dtype *t, const void *p, size_t i);

#endif
