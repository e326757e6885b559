/*
 * dtype.c - element types and reduction operations of hclock bench's reductions.
 */
#include <string.h>
#include <strings.h>

#include "bench/dtype.h"

static const struct bench_dtype types[] = {
	{"int32", BASE_I32, 1, 4, 4},
	{"int64", BASE_I64, 1, 8, 8},
	{"float", BASE_F32, 1, 4, 4},
	{"double", BASE_F64, 1, 8, 8},
	{"vec", BASE_F64, 2, 16, 32}, /* doubles 0 and 2 of every 4 */
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

static const char *const rops[] = {"sum", "max", "min", "prod", "band", "user"};
#define NROPS (sizeof(rops) / sizeof(rops[0]))

static MPI_Datatype vec_type = MPI_DATATYPE_NULL;
static MPI_Op user_op = MPI_OP_NULL;
static MPI_Op vec_ops[NROPS]; /* the vec type's operations, made on first use */
static int vec_made[NROPS];

const struct bench_dtype *bench_dtype_find(const char *name)
{
	for (size_t k = 0; k < NTYPES; k++)
		if (!strcasecmp(types[k].name, name))
			return &types[k];
	return NULL;
}

const char *bench_dtype_names(void)
{
	return "int32, int64, float, double, vec";
}

int bench_rop_find(const char *name)
{
	for (size_t k = 0; k < NROPS; k++)
		if (!strcasecmp(rops[k], name))
			return (int)k;
	return -1;
}

const char *bench_rop_name(int rop)
{
	return rop >= 0 && rop < (int)NROPS ? rops[rop] : "?";
}

const char *bench_rop_names(void)
{
	return "sum, max, min, prod, band, user";
}

int bench_rop_allowed(const struct bench_dtype *t, int rop)
{
	return rop != ROP_BAND || t->base == BASE_I32 || t->base == BASE_I64;
}

MPI_Datatype bench_dtype_mpi(const struct bench_dtype *t)
{
	switch (t->base) {
	case BASE_I32: return MPI_INT32_T;
	case BASE_I64: return MPI_INT64_T;
	case BASE_F32: return MPI_FLOAT;
	case BASE_F64: break;
	}
	if (t->nvals == 1)
		return MPI_DOUBLE;
	if (vec_type == MPI_DATATYPE_NULL) {
		MPI_Datatype v;
		PMPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v);
		PMPI_Type_create_resized(v, 0, (MPI_Aint)t->extent, &vec_type);
		PMPI_Type_commit(&vec_type);
		PMPI_Type_free(&v);
	}
	return vec_type;
}

/* a + b + 1 on every value; the vec type: its two doubles per element */
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int n = *len;
	if (*dt == MPI_INT32_T) {
		for (int i = 0; i < n; i++)
			((int32_t *)inout)[i] += ((int32_t *)in)[i] + 1;
	} else if (*dt == MPI_INT64_T) {
		for (int i = 0; i < n; i++)
			((int64_t *)inout)[i] += ((int64_t *)in)[i] + 1;
	} else if (*dt == MPI_FLOAT) {
		for (int i = 0; i < n; i++)
			((float *)inout)[i] += ((float *)in)[i] + 1;
	} else if (*dt == MPI_DOUBLE) {
		for (int i = 0; i < n; i++)
			((double *)inout)[i] += ((double *)in)[i] + 1;
	} else { /* vec: values at doubles 4e and 4e + 2 */
		for (int i = 0; i < 2 * n; i++)
			((double *)inout)[2 * i] += ((double *)in)[2 * i] + 1;
	}
}

/* The vec type under sum, max, min, prod (the standard defines the predefined operations
 * on the predefined types only, and Open MPI refuses them on derived ones): the same
 * operation on the two doubles of each element, as a user operation. */
#define VEC_FN(name, expr)                                                                  \
	static void vec_##name(void *in, void *inout, int *len, MPI_Datatype *dt)               \
	{                                                                                       \
		(void)dt;                                                                           \
		for (int i = 0; i < 2 * *len; i++) {                                                \
			double a = ((double *)in)[2 * i], b = ((double *)inout)[2 * i];                 \
			((double *)inout)[2 * i] = (expr);                                              \
		}                                                                                   \
	}
VEC_FN(sum, a + b)
VEC_FN(max, a > b ? a : b)
VEC_FN(min, a < b ? a : b)
VEC_FN(prod, a * b)

MPI_Op bench_rop_mpi(const struct bench_dtype *t, int rop)
{
	if (rop == ROP_USER) {
		if (user_op == MPI_OP_NULL)
			PMPI_Op_create(user_fn, 1, &user_op);
		return user_op;
	}
	if (t->nvals > 1 && rop >= 0 && rop < ROP_BAND) {
		static MPI_User_function *const fn[] = {vec_sum, vec_max, vec_min, vec_prod};
		if (!vec_made[rop]) {
			PMPI_Op_create(fn[rop], 1, &vec_ops[rop]);
			vec_made[rop] = 1;
		}
		return vec_ops[rop];
	}
	switch (rop) {
	case ROP_MAX: return MPI_MAX;
	case ROP_MIN: return MPI_MIN;
	case ROP_PROD: return MPI_PROD;
	case ROP_BAND: return MPI_BAND;
	}
	return MPI_SUM;
}

int64_t bench_dtype_val(int rop, int r, int j, size_t i)
{
	if (rop == ROP_PROD) /* +-1: exact and bounded on any number of ranks */
		return (r + (int)(i % 3) + j) % 3 == 0 ? -1 : 1;
	/* small, of both signs, not monotonic in r */
	return (int64_t)(((r + 1) * 7 + (int)(i % 11) * 3 + 5 * j) % 17) - 8;
}

int64_t bench_dtype_expect(int rop, int r0, int r1, int j, size_t i)
{
	int64_t a = bench_dtype_val(rop, r0, j, i);
	for (int r = r0 + 1; r < r1; r++) {
		int64_t v = bench_dtype_val(rop, r, j, i);
		switch (rop) {
		case ROP_SUM: a += v; break;
		case ROP_MAX: a = v > a ? v : a; break;
		case ROP_MIN: a = v < a ? v : a; break;
		case ROP_PROD: a *= v; break;
		case ROP_BAND: a &= v; break;
		case ROP_USER: a += v + 1; break;
		}
	}
	return a;
}

static void *at(const struct bench_dtype *t, const void *p, size_t i)
{
	size_t e = i / (size_t)t->nvals, k = i % (size_t)t->nvals;
	return (char *)p + e * t->extent + k * t->vstride;
}

void bench_dtype_store(const struct bench_dtype *t, void *p, size_t i, int64_t v)
{
	void *q = at(t, p, i);
	switch (t->base) {
	case BASE_I32: *(int32_t *)q = (int32_t)v; break;
	case BASE_I64: *(int64_t *)q = v; break;
	case BASE_F32: *(float *)q = (float)v; break;
	case BASE_F64: *(double *)q = (double)v; break;
	}
}

double bench_dtype_load(const struct bench_dtype *t, const void *p, size_t i)
{
	const void *q = at(t, p, i);
	switch (t->base) {
	case BASE_I32: return *(const int32_t *)q;
	case BASE_I64: return (double)*(const int64_t *)q;
	case BASE_F32: return *(const float *)q;
	case BASE_F64: break;
	}
	return *(const double *)q;
}
