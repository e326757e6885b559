/*
 * fcalls.c - the Fortran entry points libhclock_trace wraps by hand: the same calls as
 * calls.c's, making the same records (every other Fortran entry is generated: enter and
 * leave only; fortran.h says how a wrapper is exported and forwards).
 *
 * Exported only for the entries that bypass the C wrappers (gen_fortran.py decides per
 * function from the Fortran libraries' symbols): Open MPI's, which call the C PMPI_
 * functions directly; not MPICH's mpif.h entries, which call the C MPI_ functions the C
 * wrappers record (no call is recorded twice). fcalls_f08.c compiles this file once more for
 * the mpi_f08 entries that reach no other wrapper (f8w_NAME).
 *
 * Handles are read with MPI_*_f2c (the requests table is keyed by the C handle, so requests.c
 * follows a Fortran request like a C one); a status with MPI_Status_f2c. Where the program
 * passes MPI_STATUS(ES)_IGNORE and the record needs the status, the library is given the
 * tracer's own; everything else reaches the PMPI entry as the program passed it, and IERROR
 * is the library's.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/pmpi.h"

#include "trace/args.h"
#include "trace/fortran.h"
#include "trace/requests.h"
#include "trace/tracer.h"

/* ---- the library's entries and sentinels ------------------------------------------------- */

#ifndef FORTRAN_F08 /* once in the library */
static struct {
	pthread_once_t once;
	fortran_proc fwd[FP_COUNT];
	const void *status_ignore[5], *statuses_ignore[5], *in_place[5]; /* NULL: none */
	int f08_base; /* the base of the indices mpi_f08's Waitany family returns */
} F = {.once = PTHREAD_ONCE_INIT};

/* the addresses of a Fortran sentinel: the manglings of Open MPI's common block (its
 * OMPI_IS_FORTRAN_* macros compare the same four) and MPICH's mpi_f08 object (f08), in the
 * global scope, as the library's own references resolve them */
static void sentinels(const void *out[5], const char *name, const char *f08)
{
	char s[64], u[64];
	size_t n = strlen(name);
	for (size_t i = 0; i <= n; i++)
		u[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
	const char *forms[4] = {"%s", "%s_", "%s__", "%s"};
	for (int i = 0; i < 4; i++) {
		snprintf(s, sizeof(s), forms[i], i == 3 ? u : name);
		out[i] = dlsym(RTLD_DEFAULT, s);
	}
	out[4] = dlsym(RTLD_DEFAULT, f08);
}

static void resolve(void)
{
	for (int i = 0; i < FP_COUNT; i++)
		if (fortran_fwd_names[i][0])
			F.fwd[i] = (fortran_proc)dlsym(RTLD_DEFAULT, fortran_fwd_names[i]);
	sentinels(F.status_ignore, "mpi_fortran_status_ignore", "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
	sentinels(F.statuses_ignore, "mpi_fortran_statuses_ignore",
	          "MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
	sentinels(F.in_place, "mpi_fortran_in_place", "MPIR_F08_MPI_IN_PLACE");
	/* MPICH 4.0's mpi_f08 returns the indices of MPI_Waitany, MPI_Waitsome, ... 0-based
	 * (pmodels/mpich#6270; 1-based again from 4.1) */
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0, major = 0, minor = 0;
	F.f08_base = 1;
	if (PMPI_Get_library_version(v, &n) == MPI_SUCCESS && n > 0 && n < (int)sizeof(v)) {
		v[n] = 0;
		const char *s = strstr(v, "MPICH Version:");
		if (s && sscanf(s + strlen("MPICH Version:"), "%d.%d", &major, &minor) == 2 &&
		    major == 4 && minor == 0)
			F.f08_base = 0;
	}
}

int fortran_f08_index_base(void)
{
	pthread_once(&F.once, resolve);
	return F.f08_base;
}

fortran_proc fortran_fwd(enum fortran_fwd i)
{
	pthread_once(&F.once, resolve);
	if (!F.fwd[i]) {
		char line[160];
		int n = snprintf(line, sizeof(line), "hclock trace: %s is not in this process (the "
		                 "tracer was built for another MPI library)\n",
		                 fortran_fwd_names[i][0] ? fortran_fwd_names[i] : "a PMPI Fortran entry");
		if (write(2, line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : 0) < 0)
			abort();
		abort();
	}
	return F.fwd[i];
}

static int among(const void *const s[5], const void *p)
{
	pthread_once(&F.once, resolve);
	for (int i = 0; p && i < 5; i++)
		if (p == s[i])
			return 1;
	return 0;
}

int fortran_status_ignore(const void *p)
{
	return among(F.status_ignore, p);
}

int fortran_statuses_ignore(const void *p)
{
	return among(F.statuses_ignore, p);
}

int fortran_in_place(const void *p)
{
	return among(F.in_place, p);
}
#endif

/* ---- conversions ------------------------------------------------------------------------- */

#ifdef FORTRAN_F08
/* f8w_NAME, called by the generated f8_NAME (an mpi_f08 entry, IERROR never NULL) */
#define FWRAP(NAME) void f8w_##NAME
#define FEXPORT(NAME)
#define FPID(NAME) FP_##NAME##_f08
#else
#define FWRAP(NAME) void fw_##NAME
#define FEXPORT(NAME) FNAMES_##NAME(FALIAS, fw_##NAME)
#define FPID(NAME) FP_##NAME
#endif
#undef FWD
#define FWD(NAME) fortran_fwd(FPID(NAME))
#define C(h) PMPI_Comm_f2c(*(h))
#define T(h) PMPI_Type_f2c(*(h))
#define RQ(h) PMPI_Request_f2c(h)

/* a receive completed by call c with Fortran status st */
static void frecv(const struct trace_call *c, MPI_Comm comm, const MPI_Fint *st,
                  MPI_Datatype type)
{
	MPI_Status s;
	if (PMPI_Status_f2c(st, &s) == MPI_SUCCESS)
		trace_recv(c, comm, &s, type);
}

/* rq_done() with a Fortran status */
static void fdone(const struct trace_call *c, int rc, MPI_Request old, const MPI_Fint *st)
{
	MPI_Status s;
	if (PMPI_Status_f2c(st, &s) == MPI_SUCCESS)
		rq_done_st(c, rc, old, &s);
}

/* ---- init and finalize ------------------------------------------------------------------- */

FWRAP(init)(MPI_Fint *ierr)
{
	FWD(init)(ierr);
	if (*ierr == MPI_SUCCESS)
		trace_init();
}
FEXPORT(init)

FWRAP(init_thread)(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	FWD(init_thread)(required, provided, ierr);
	if (*ierr == MPI_SUCCESS)
		trace_init();
}
FEXPORT(init_thread)

static MPI_Fint *finalize_ierr; /* the Fortran shutdown's, for trace_shutdown */
static int finalize_f(void)
{
	FWD(finalize)(finalize_ierr);
	return (int)*finalize_ierr;
}

FWRAP(finalize)(MPI_Fint *ierr)
{
	trace_finalize();
	rq_clear();
	finalize_ierr = ierr;
	trace_shutdown(finalize_f);
}
FEXPORT(finalize)

FWRAP(abort)(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	struct trace_call c;
	trace_abort(trace_enter(TF_MPI_Abort, &c) ? &c : NULL, *errorcode);
	FWD(abort)(comm, errorcode, ierr);
}
FEXPORT(abort)

/* ---- sends ------------------------------------------------------------------------------- */

#define FSEND(NAME, ...)                                                                  \
	struct trace_call c;                                                                  \
	if (!trace_enter(FTF_##NAME, &c)) {                                                   \
		FWD(NAME)(__VA_ARGS__);                                                           \
		return;                                                                           \
	}                                                                                     \
	trace_send(&c, C(comm), *dest, *tag, *count, T(datatype));                            \
	FWD(NAME)(__VA_ARGS__);                                                               \
	trace_leave(&c);

#define SEND_ARGS                                                                         \
	void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *dest, MPI_Fint *tag,        \
	    MPI_Fint *comm
#define BLOCKING_SEND(NAME)                                                               \
	FWRAP(NAME)(SEND_ARGS, MPI_Fint *ierr)                                                \
	{                                                                                     \
		FSEND(NAME, buf, count, datatype, dest, tag, comm, ierr)                          \
	}                                                                                     \
	FEXPORT(NAME)
#define NB_SEND(NAME)                                                                     \
	FWRAP(NAME)(SEND_ARGS, MPI_Fint *request, MPI_Fint *ierr)                             \
	{                                                                                     \
		FSEND(NAME, buf, count, datatype, dest, tag, comm, request, ierr)                 \
	}                                                                                     \
	FEXPORT(NAME)
/* persistent: recorded at each start (rq_started) */
#define SEND_INIT(NAME)                                                                   \
	FWRAP(NAME)(SEND_ARGS, MPI_Fint *request, MPI_Fint *ierr)                             \
	{                                                                                     \
		struct trace_call c;                                                              \
		int on = trace_enter(FTF_##NAME, &c);                                             \
		FWD(NAME)(buf, count, datatype, dest, tag, comm, request, ierr);                  \
		if (!on)                                                                          \
			return;                                                                       \
		trace_leave(&c);                                                                  \
		if (*ierr == MPI_SUCCESS && *dest != MPI_PROC_NULL) {                             \
			struct rec r;                                                                 \
			trace_prepare(&r, REC_SEND, C(comm), *dest, *tag, nbytes(*count, T(datatype))); \
			rq_add(RQ(*request), RQ_PSEND, C(comm), T(datatype), &r);                     \
		}                                                                                 \
	}                                                                                     \
	FEXPORT(NAME)

BLOCKING_SEND(send)
BLOCKING_SEND(ssend)
BLOCKING_SEND(bsend)
BLOCKING_SEND(rsend)
NB_SEND(isend)
NB_SEND(issend)
NB_SEND(ibsend)
NB_SEND(irsend)
SEND_INIT(send_init)
SEND_INIT(ssend_init)
SEND_INIT(bsend_init)
SEND_INIT(rsend_init)

/* ---- receives ---------------------------------------------------------------------------- */

/* the status the library fills: the program's, or the tracer's own for MPI_STATUS_IGNORE */
#define OWN_STATUS(status) MPI_Fint own[FSTATUS], *st = fortran_status_ignore(status) ? own : (status)

FWRAP(recv)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *source, MPI_Fint *tag,
            MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_recv, &c)) {
		FWD(recv)(buf, count, datatype, source, tag, comm, status, ierr);
		return;
	}
	OWN_STATUS(status);
	FWD(recv)(buf, count, datatype, source, tag, comm, st, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS)
		frecv(&c, C(comm), st, T(datatype));
}
FEXPORT(recv)

FWRAP(sendrecv)(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, MPI_Fint *dest,
                MPI_Fint *sendtag, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
                MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm, MPI_Fint *status,
                MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_sendrecv, &c)) {
		FWD(sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
		              recvtype, source, recvtag, comm, status, ierr);
		return;
	}
	trace_send(&c, C(comm), *dest, *sendtag, *sendcount, T(sendtype));
	OWN_STATUS(status);
	FWD(sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
	              source, recvtag, comm, st, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS)
		frecv(&c, C(comm), st, T(recvtype));
}
FEXPORT(sendrecv)

FWRAP(sendrecv_replace)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *dest,
                        MPI_Fint *sendtag, MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm,
                        MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_sendrecv_replace, &c)) {
		FWD(sendrecv_replace)(buf, count, datatype, dest, sendtag, source, recvtag, comm,
		                      status, ierr);
		return;
	}
	trace_send(&c, C(comm), *dest, *sendtag, *count, T(datatype));
	OWN_STATUS(status);
	FWD(sendrecv_replace)(buf, count, datatype, dest, sendtag, source, recvtag, comm, st, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS)
		frecv(&c, C(comm), st, T(datatype));
}
FEXPORT(sendrecv_replace)

/* MPI_Irecv (a receive recorded where it completes) and MPI_Recv_init (at each completion of
 * a start) */
#define RECV_START(NAME, KIND)                                                            \
	FWRAP(NAME)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *source,         \
	            MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)         \
	{                                                                                     \
		struct trace_call c;                                                              \
		int on = trace_enter(FTF_##NAME, &c);                                             \
		FWD(NAME)(buf, count, datatype, source, tag, comm, request, ierr);                \
		if (!on)                                                                          \
			return;                                                                       \
		trace_leave(&c);                                                                  \
		if (*ierr == MPI_SUCCESS && *source != MPI_PROC_NULL)                             \
			rq_add(RQ(*request), KIND, C(comm), T(datatype), NULL);                       \
	}                                                                                     \
	FEXPORT(NAME)

RECV_START(irecv, RQ_RECV)
RECV_START(recv_init, RQ_PRECV)

/* matched probes: the message remembers its communicator */
FWRAP(mprobe)(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *message,
              MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	int on = trace_enter(FTF_mprobe, &c);
	FWD(mprobe)(source, tag, comm, message, status, ierr);
	if (!on)
		return;
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS)
		rq_msg_add(PMPI_Message_f2c(*message), C(comm));
}
FEXPORT(mprobe)

FWRAP(improbe)(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag,
               MPI_Fint *message, MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	int on = trace_enter(FTF_improbe, &c);
	FWD(improbe)(source, tag, comm, flag, message, status, ierr);
	if (!on)
		return;
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS && *flag)
		rq_msg_add(PMPI_Message_f2c(*message), C(comm));
}
FEXPORT(improbe)

FWRAP(mrecv)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *message,
             MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_mrecv, &c)) {
		FWD(mrecv)(buf, count, datatype, message, status, ierr);
		return;
	}
	MPI_Comm comm = rq_msg_take(PMPI_Message_f2c(*message)); /* before: the call frees it */
	OWN_STATUS(status);
	FWD(mrecv)(buf, count, datatype, message, st, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS && comm != MPI_COMM_NULL)
		frecv(&c, comm, st, T(datatype));
}
FEXPORT(mrecv)

FWRAP(imrecv)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *message,
              MPI_Fint *request, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_imrecv, &c)) {
		FWD(imrecv)(buf, count, datatype, message, request, ierr);
		return;
	}
	MPI_Comm comm = rq_msg_take(PMPI_Message_f2c(*message));
	FWD(imrecv)(buf, count, datatype, message, request, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS && comm != MPI_COMM_NULL)
		rq_add(RQ(*request), RQ_RECV, comm, T(datatype), NULL);
}
FEXPORT(imrecv)

/* ---- persistent starts, frees ------------------------------------------------------------ */

FWRAP(start)(MPI_Fint *request, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_start, &c)) {
		FWD(start)(request, ierr);
		return;
	}
	FWD(start)(request, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS)
		rq_started(&c, RQ(*request)); /* a persistent request's handle stays */
}
FEXPORT(start)

FWRAP(startall)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_startall, &c)) {
		FWD(startall)(count, requests, ierr);
		return;
	}
	FWD(startall)(count, requests, ierr);
	trace_leave(&c);
	for (int i = 0; *ierr == MPI_SUCCESS && i < *count; i++)
		rq_started(&c, RQ(requests[i]));
}
FEXPORT(startall)

FWRAP(request_free)(MPI_Fint *request, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_request_free, &c)) {
		FWD(request_free)(request, ierr);
		return;
	}
	rq_forget(RQ(*request)); /* before: once freed, MPI may hand the handle out again */
	FWD(request_free)(request, ierr);
	trace_leave(&c);
}
FEXPORT(request_free)

/* ---- completion -------------------------------------------------------------------------- */

/* The C handles before the call and the statuses the tracer reads (the program's, or its own
 * for MPI_STATUSES_IGNORE): small arrays on the stack. */
#define SMALL 32
struct fdone_ctx {
	MPI_Request old_s[SMALL], *old;
	MPI_Fint st_s[SMALL * FSTATUS], *st; /* FSTATUS each */
	int own_st;
};

static void fdone_end(struct fdone_ctx *d)
{
	if (d->old != d->old_s)
		free(d->old);
	if (d->own_st && d->st != d->st_s)
		free(d->st);
}

static int fdone_begin(struct fdone_ctx *d, int n, const MPI_Fint *reqs, MPI_Fint *statuses)
{
	size_t m = n > 0 ? (size_t)n : 0, fs = (size_t)FSTATUS;
	d->old = m <= SMALL ? d->old_s : malloc(m * sizeof(MPI_Request));
	d->own_st = statuses && fortran_statuses_ignore(statuses);
	d->st = !d->own_st ? statuses
	                   : m <= SMALL ? d->st_s : malloc(m * fs * sizeof(MPI_Fint));
	if (!d->old || (d->own_st && !d->st)) {
		fdone_end(d);
		return 0;
	}
	for (size_t i = 0; i < m; i++)
		d->old[i] = RQ(reqs[i]);
	return 1;
}

FWRAP(wait)(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_wait, &c)) {
		FWD(wait)(request, status, ierr);
		return;
	}
	if (!rq_pending()) {
		FWD(wait)(request, status, ierr);
		trace_leave(&c);
		return;
	}
	MPI_Request old = RQ(*request);
	OWN_STATUS(status);
	FWD(wait)(request, st, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS)
		fdone(&c, MPI_SUCCESS, old, st);
}
FEXPORT(wait)

FWRAP(test)(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	if (!trace_enter(FTF_test, &c)) {
		FWD(test)(request, flag, status, ierr);
		return;
	}
	if (!rq_pending()) {
		FWD(test)(request, flag, status, ierr);
		trace_leave(&c);
		return;
	}
	MPI_Request old = RQ(*request);
	OWN_STATUS(status);
	FWD(test)(request, flag, st, ierr);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS && *flag)
		fdone(&c, MPI_SUCCESS, old, st);
}
FEXPORT(test)

/* Waitall and Testall (flag NULL: Waitall) */
static void fall(enum fortran_fwd fp, enum trace_func tf, MPI_Fint *count, MPI_Fint *requests,
                 MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierr)
{
	struct trace_call c;
	struct fdone_ctx d;
	fortran_proc f = fortran_fwd(fp);
#define CALL(st) (flag ? f(count, requests, flag, st, ierr) : f(count, requests, st, ierr))
	if (!trace_enter(tf, &c)) {
		CALL(statuses);
		return;
	}
	if (!rq_pending() || !fdone_begin(&d, *count, requests, statuses)) {
		CALL(statuses);
		trace_leave(&c);
		return;
	}
	CALL(d.st);
	trace_leave(&c);
	int rc = *ierr;
	if ((rc == MPI_SUCCESS && (!flag || *flag)) || rc == MPI_ERR_IN_STATUS)
		for (int i = 0; i < *count; i++)
			fdone(&c, rc, d.old[i], &d.st[(size_t)i * FSTATUS]);
	fdone_end(&d);
#undef CALL
}

FWRAP(waitall)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
	fall(FPID(waitall), FTF_waitall, count, requests, NULL, statuses, ierr);
}
FEXPORT(waitall)

FWRAP(testall)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
               MPI_Fint *ierr)
{
	fall(FPID(testall), FTF_testall, count, requests, flag, statuses, ierr);
}
FEXPORT(testall)

/* The base of the indices n completed requests have among count: 1, as the standard says,
 * but for mpi_f08 the library's (fortran_f08_index_base); told by the requests where they
 * can tell it (a completed non-persistent request is MPI_REQUEST_NULL) */
static int ibase(const MPI_Fint *idx, int n, const MPI_Fint *reqs, int count)
{
	MPI_Fint null = PMPI_Request_c2f(MPI_REQUEST_NULL);
	int one = 1, zero = 1;
	for (int i = 0; i < n; i++) {
		one &= idx[i] >= 1 && idx[i] <= count && reqs[idx[i] - 1] == null;
		zero &= idx[i] >= 0 && idx[i] < count && reqs[idx[i]] == null;
	}
#ifdef FORTRAN_F08
	int base = fortran_f08_index_base();
#else
	int base = 1;
#endif
	return one && !zero ? 1 : zero && !one ? 0 : base;
}

/* Waitany and Testany (flag NULL: Waitany) */
static void fany(enum fortran_fwd fp, enum trace_func tf, MPI_Fint *count, MPI_Fint *requests,
                 MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	struct trace_call c;
	struct fdone_ctx d;
	fortran_proc f = fortran_fwd(fp);
#define CALL(st)                                                                          \
	(flag ? f(count, requests, index, flag, st, ierr) : f(count, requests, index, st, ierr))
	if (!trace_enter(tf, &c)) {
		CALL(status);
		return;
	}
	if (!rq_pending() || !fdone_begin(&d, *count, requests, NULL)) {
		CALL(status);
		trace_leave(&c);
		return;
	}
	OWN_STATUS(status);
	CALL(st);
	trace_leave(&c);
	if (*ierr == MPI_SUCCESS && (!flag || *flag) && *index != MPI_UNDEFINED) {
		int k = *index - ibase(index, 1, requests, *count);
		if (k >= 0 && k < *count)
			fdone(&c, MPI_SUCCESS, d.old[k], st);
	}
	fdone_end(&d);
#undef CALL
}

FWRAP(waitany)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
               MPI_Fint *ierr)
{
	fany(FPID(waitany), FTF_waitany, count, requests, index, NULL, status, ierr);
}
FEXPORT(waitany)

FWRAP(testany)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
               MPI_Fint *status, MPI_Fint *ierr)
{
	fany(FPID(testany), FTF_testany, count, requests, index, flag, status, ierr);
}
FEXPORT(testany)

/* Waitsome and Testsome: the same arguments */
static void fsome(enum fortran_fwd fp, enum trace_func tf, MPI_Fint *incount,
                  MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                  MPI_Fint *statuses, MPI_Fint *ierr)
{
	struct trace_call c;
	struct fdone_ctx d;
	fortran_proc f = fortran_fwd(fp);
	if (!trace_enter(tf, &c)) {
		f(incount, requests, outcount, indices, statuses, ierr);
		return;
	}
	if (!rq_pending() || !fdone_begin(&d, *incount, requests, statuses)) {
		f(incount, requests, outcount, indices, statuses, ierr);
		trace_leave(&c);
		return;
	}
	f(incount, requests, outcount, indices, d.st, ierr);
	trace_leave(&c);
	int rc = *ierr;
	if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED) {
		int b = ibase(indices, *outcount, requests, *incount);
		for (int i = 0; i < *outcount; i++)
			if (indices[i] - b >= 0 && indices[i] - b < *incount)
				fdone(&c, rc, d.old[indices[i] - b], &d.st[(size_t)i * FSTATUS]);
	}
	fdone_end(&d);
}

FWRAP(waitsome)(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                MPI_Fint *statuses, MPI_Fint *ierr)
{
	fsome(FPID(waitsome), FTF_waitsome, incount, requests, outcount, indices, statuses, ierr);
}
FEXPORT(waitsome)

FWRAP(testsome)(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                MPI_Fint *statuses, MPI_Fint *ierr)
{
	fsome(FPID(testsome), FTF_testsome, incount, requests, outcount, indices, statuses, ierr);
}
FEXPORT(testsome)

/* ---- collectives ------------------------------------------------------------------------- */

/* ROOT, COUNT, TYPE: C values read from the Fortran arguments */
#define FCOLL(NAME, ROOT, COUNT, TYPE, ...)                                               \
	struct trace_call c;                                                                  \
	if (!trace_enter(FTF_##NAME, &c)) {                                                   \
		FWD(NAME)(__VA_ARGS__);                                                           \
		return;                                                                           \
	}                                                                                     \
	FWD(NAME)(__VA_ARGS__);                                                               \
	trace_coll(&c, C(comm), ROOT, COUNT, TYPE);

#define IP(buf) fortran_in_place(buf)
#define REDUCE_ARGS                                                                       \
	void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,      \
	    MPI_Fint *comm
#define GATHER_ARGS                                                                       \
	void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,                \
	    MPI_Fint *recvcount, MPI_Fint *recvtype
#define GATHERV_ARGS                                                                      \
	void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,                \
	    MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype
#define SCATTERV_ARGS                                                                     \
	void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *displs, MPI_Fint *sendtype,            \
	    void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype
#define ALLTOALLV_ARGS                                                                    \
	void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtype,           \
	    void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtype
#define RS_ARGS                                                                           \
	void *sendbuf, void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *datatype, MPI_Fint *op, \
	    MPI_Fint *comm
#define RSB_ARGS                                                                          \
	void *sendbuf, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *datatype, MPI_Fint *op,  \
	    MPI_Fint *comm

/* what this process contributes (calls.c's choices: the send side unless MPI_IN_PLACE makes
 * it not significant) */
#define G_COUNT (IP(sendbuf) ? *recvcount : *sendcount)
#define G_TYPE (IP(sendbuf) ? T(recvtype) : T(sendtype))
#define S_COUNT (IP(recvbuf) ? *sendcount : *recvcount)
#define S_TYPE (IP(recvbuf) ? T(sendtype) : T(recvtype))
#define GV_COUNT (IP(sendbuf) ? 0 : *sendcount)
#define GV_TYPE (IP(sendbuf) ? MPI_DATATYPE_NULL : T(sendtype))
#define SV_COUNT (IP(recvbuf) ? 0 : *recvcount)
#define SV_TYPE (IP(recvbuf) ? MPI_DATATYPE_NULL : T(recvtype))
#define AV_COUNT clamp(sum(IP(sendbuf) ? recvcounts : sendcounts, peers(C(comm))))
#define AV_TYPE (IP(sendbuf) ? T(recvtype) : T(sendtype))
#define RS_COUNT recvcounts[my_rank(C(comm))]

FWRAP(barrier)(MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(barrier, -1, 0, MPI_DATATYPE_NULL, comm, ierr)
}
FEXPORT(barrier)

FWRAP(bcast)(void *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root, MPI_Fint *comm,
             MPI_Fint *ierr)
{
	FCOLL(bcast, *root, *count, T(datatype), buffer, count, datatype, root, comm, ierr)
}
FEXPORT(bcast)

FWRAP(reduce)(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
              MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(reduce, *root, *count, T(datatype), sendbuf, recvbuf, count, datatype, op, root, comm,
	      ierr)
}
FEXPORT(reduce)

#define REDUCE_LIKE(NAME)                                                                 \
	FWRAP(NAME)(REDUCE_ARGS, MPI_Fint *ierr)                                              \
	{                                                                                     \
		FCOLL(NAME, -1, *count, T(datatype), sendbuf, recvbuf, count, datatype, op, comm, \
		      ierr)                                                                       \
	}                                                                                     \
	FEXPORT(NAME)
REDUCE_LIKE(allreduce)
REDUCE_LIKE(scan)
REDUCE_LIKE(exscan)

FWRAP(gather)(GATHER_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(gather, *root, G_COUNT, G_TYPE, sendbuf, sendcount, sendtype, recvbuf, recvcount,
	      recvtype, root, comm, ierr)
}
FEXPORT(gather)

FWRAP(gatherv)(GATHERV_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(gatherv, *root, GV_COUNT, GV_TYPE, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
	      displs, recvtype, root, comm, ierr)
}
FEXPORT(gatherv)

FWRAP(scatter)(GATHER_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(scatter, *root, S_COUNT, S_TYPE, sendbuf, sendcount, sendtype, recvbuf, recvcount,
	      recvtype, root, comm, ierr)
}
FEXPORT(scatter)

FWRAP(scatterv)(SCATTERV_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(scatterv, *root, SV_COUNT, SV_TYPE, sendbuf, sendcounts, displs, sendtype, recvbuf,
	      recvcount, recvtype, root, comm, ierr)
}
FEXPORT(scatterv)

FWRAP(allgather)(GATHER_ARGS, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(allgather, -1, G_COUNT, G_TYPE, sendbuf, sendcount, sendtype, recvbuf, recvcount,
	      recvtype, comm, ierr)
}
FEXPORT(allgather)

FWRAP(allgatherv)(GATHERV_ARGS, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(allgatherv, -1, GV_COUNT, GV_TYPE, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
	      displs, recvtype, comm, ierr)
}
FEXPORT(allgatherv)

FWRAP(alltoall)(GATHER_ARGS, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(alltoall, -1, G_COUNT, G_TYPE, sendbuf, sendcount, sendtype, recvbuf, recvcount,
	      recvtype, comm, ierr)
}
FEXPORT(alltoall)

FWRAP(alltoallv)(ALLTOALLV_ARGS, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCOLL(alltoallv, -1, AV_COUNT, AV_TYPE, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
	      recvcounts, rdispls, recvtype, comm, ierr)
}
FEXPORT(alltoallv)

FWRAP(reduce_scatter_block)(RSB_ARGS, MPI_Fint *ierr)
{
	FCOLL(reduce_scatter_block, -1, *recvcount, T(datatype), sendbuf, recvbuf, recvcount,
	      datatype, op, comm, ierr)
}
FEXPORT(reduce_scatter_block)

FWRAP(reduce_scatter)(RS_ARGS, MPI_Fint *ierr)
{
	FCOLL(reduce_scatter, -1, RS_COUNT, T(datatype), sendbuf, recvbuf, recvcounts, datatype, op,
	      comm, ierr)
}
FEXPORT(reduce_scatter)

/* ---- nonblocking collectives ------------------------------------------------------------- */

/* recorded where the request completes, as calls.c's ICOLL (BYTES read before the call) */
#define FICOLL(NAME, ROOT, BYTES, ...)                                                    \
	struct trace_call c;                                                                  \
	if (!trace_enter(FTF_##NAME, &c)) {                                                   \
		FWD(NAME)(__VA_ARGS__);                                                           \
		return;                                                                           \
	}                                                                                     \
	uint64_t bytes = (BYTES);                                                             \
	FWD(NAME)(__VA_ARGS__);                                                               \
	trace_leave(&c);                                                                      \
	if (*ierr == MPI_SUCCESS && c.func == FTF_##NAME)                                     \
		rq_coll_started(&c, RQ(*request), C(comm), ROOT, bytes);

FWRAP(ibarrier)(MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(ibarrier, -1, 0, comm, request, ierr)
}
FEXPORT(ibarrier)

FWRAP(ibcast)(void *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root,
              MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(ibcast, *root, nbytes(*count, T(datatype)), buffer, count, datatype, root, comm,
	       request, ierr)
}
FEXPORT(ibcast)

FWRAP(ireduce)(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
               MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(ireduce, *root, nbytes(*count, T(datatype)), sendbuf, recvbuf, count, datatype, op,
	       root, comm, request, ierr)
}
FEXPORT(ireduce)

#define IREDUCE_LIKE(NAME)                                                                \
	FWRAP(NAME)(REDUCE_ARGS, MPI_Fint *request, MPI_Fint *ierr)                           \
	{                                                                                     \
		FICOLL(NAME, -1, nbytes(*count, T(datatype)), sendbuf, recvbuf, count, datatype,  \
		       op, comm, request, ierr)                                                   \
	}                                                                                     \
	FEXPORT(NAME)
IREDUCE_LIKE(iallreduce)
IREDUCE_LIKE(iscan)
IREDUCE_LIKE(iexscan)

FWRAP(igather)(GATHER_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(igather, *root, nbytes(G_COUNT, G_TYPE), sendbuf, sendcount, sendtype, recvbuf,
	       recvcount, recvtype, root, comm, request, ierr)
}
FEXPORT(igather)

FWRAP(igatherv)(GATHERV_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request,
                MPI_Fint *ierr)
{
	FICOLL(igatherv, *root, nbytes(GV_COUNT, GV_TYPE), sendbuf, sendcount, sendtype, recvbuf,
	       recvcounts, displs, recvtype, root, comm, request, ierr)
}
FEXPORT(igatherv)

FWRAP(iscatter)(GATHER_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(iscatter, *root, nbytes(S_COUNT, S_TYPE), sendbuf, sendcount, sendtype, recvbuf,
	       recvcount, recvtype, root, comm, request, ierr)
}
FEXPORT(iscatter)

FWRAP(iscatterv)(SCATTERV_ARGS, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request,
                 MPI_Fint *ierr)
{
	FICOLL(iscatterv, *root, nbytes(SV_COUNT, SV_TYPE), sendbuf, sendcounts, displs, sendtype,
	       recvbuf, recvcount, recvtype, root, comm, request, ierr)
}
FEXPORT(iscatterv)

FWRAP(iallgather)(GATHER_ARGS, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(iallgather, -1, nbytes(G_COUNT, G_TYPE), sendbuf, sendcount, sendtype, recvbuf,
	       recvcount, recvtype, comm, request, ierr)
}
FEXPORT(iallgather)

FWRAP(iallgatherv)(GATHERV_ARGS, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(iallgatherv, -1, nbytes(GV_COUNT, GV_TYPE), sendbuf, sendcount, sendtype, recvbuf,
	       recvcounts, displs, recvtype, comm, request, ierr)
}
FEXPORT(iallgatherv)

FWRAP(ialltoall)(GATHER_ARGS, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(ialltoall, -1, nbytes(G_COUNT, G_TYPE), sendbuf, sendcount, sendtype, recvbuf,
	       recvcount, recvtype, comm, request, ierr)
}
FEXPORT(ialltoall)

FWRAP(ialltoallv)(ALLTOALLV_ARGS, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(ialltoallv, -1, (uint64_t)AV_COUNT * type_size(AV_TYPE), sendbuf, sendcounts,
	       sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request, ierr)
}
FEXPORT(ialltoallv)

FWRAP(ireduce_scatter)(RS_ARGS, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(ireduce_scatter, -1, nbytes(RS_COUNT, T(datatype)), sendbuf, recvbuf, recvcounts,
	       datatype, op, comm, request, ierr)
}
FEXPORT(ireduce_scatter)

FWRAP(ireduce_scatter_block)(RSB_ARGS, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(ireduce_scatter_block, -1, nbytes(*recvcount, T(datatype)), sendbuf, recvbuf,
	       recvcount, datatype, op, comm, request, ierr)
}
FEXPORT(ireduce_scatter_block)

/* ---- communicators ----------------------------------------------------------------------- */

#define FCREATE(NAME, PARENT, NEWCOMM, ...)                                               \
	struct trace_call c;                                                                  \
	if (!trace_enter(FTF_##NAME, &c)) {                                                   \
		FWD(NAME)(__VA_ARGS__);                                                           \
		return;                                                                           \
	}                                                                                     \
	FWD(NAME)(__VA_ARGS__);                                                               \
	trace_leave(&c);                                                                      \
	trace_comm_created(C(PARENT), *ierr == MPI_SUCCESS ? C(NEWCOMM) : MPI_COMM_NULL);

FWRAP(comm_dup)(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCREATE(comm_dup, comm, newcomm, comm, newcomm, ierr)
}
FEXPORT(comm_dup)

FWRAP(comm_split)(MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm,
                  MPI_Fint *ierr)
{
	FCREATE(comm_split, comm, newcomm, comm, color, key, newcomm, ierr)
}
FEXPORT(comm_split)

FWRAP(comm_split_type)(MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info,
                       MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCREATE(comm_split_type, comm, newcomm, comm, split_type, key, info, newcomm, ierr)
}
FEXPORT(comm_split_type)

FWRAP(comm_create)(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCREATE(comm_create, comm, newcomm, comm, group, newcomm, ierr)
}
FEXPORT(comm_create)

FWRAP(cart_create)(MPI_Fint *comm_old, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
                   MPI_Fint *reorder, MPI_Fint *comm_cart, MPI_Fint *ierr)
{
	FCREATE(cart_create, comm_old, comm_cart, comm_old, ndims, dims, periods, reorder,
	        comm_cart, ierr)
}
FEXPORT(cart_create)

FWRAP(cart_sub)(MPI_Fint *comm, MPI_Fint *remain_dims, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCREATE(cart_sub, comm, newcomm, comm, remain_dims, newcomm, ierr)
}
FEXPORT(cart_sub)
