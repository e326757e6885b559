/*
 * hclock_api.h - what hclock.h and hclock_align.h share, without MPI: the export macro and
 * the error codes.
 *
 * HCLOCK_API marks the functions libhclock and libhclock_align export. The library is built
 * with hidden visibility (-fvisibility=hidden): everything not marked stays internal, so
 * an application that loads hclock (or a tracer preloaded into it) sees only the
 * documented hclock_* entry points.
 */
#ifndef HCLOCK_API_H
#define HCLOCK_API_H

#if defined(__GNUC__) || defined(__clang__)
#define HCLOCK_API __attribute__((visibility("default")))
#else
#define HCLOCK_API
#endif

/* Every library call returns 0 or one of these (negative). */
enum hclock_error {
	HCLOCK_OK = 0,
	HCLOCK_EINVAL = -1,    /* bad argument, spec string, option, trace or buffer */
	HCLOCK_ENOMEM = -2,    /* out of memory */
	HCLOCK_EUNSUPP = -3,   /* not available on this machine (e.g. no invariant TSC) */
	HCLOCK_EMPI = -4,      /* an MPI call failed (seen through MPI_ERRORS_RETURN) */
	HCLOCK_ESHARE = -5,    /* processes do not share a time source (prop refused) */
	HCLOCK_EVERSION = -6,  /* serialized model of an unknown version */
	HCLOCK_EIO = -7,       /* a file could not be read or written (or changed while read) */
	HCLOCK_EMISMATCH = -8, /* the processes were given different specs or options */
	HCLOCK_EINJECTED = -9, /* a fault injected by the test hook HCLOCK_FAULT */
};

#ifdef __cplusplus
extern "C" {
#endif

/* A static description of error code err ("invalid argument", ...). Thread safe. */
HCLOCK_API const char *hclock_strerror(int err);
/* One line describing the last failure of an hclock call in the calling thread (never
 * NULL; thread-local, valid until this thread's next failing hclock call). */
HCLOCK_API const char *hclock_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
