/*
 * otf2_defs.h - the global definitions of an OTF2 archive that name its processes and resolve
 * the ranks of its MPI events: the clock, the strings, the groups, the communicators and the
 * location groups. What hclock align's reader (reader_otf2.c) and hclock waits
 * (trace/otf2_waits.c) both read, each adding the callbacks of its own (locations, regions);
 * with the processes' node names (so that hclock waits --align finds align's nodes by name),
 * the conversion of ticks to ns, and libotf2's error messages kept off stderr.
 *
 * Who owns what: the caller's state embeds struct otf2_defs as its first member and is the
 * user data of every global-definition callback (the ones here use that member); the arrays
 * are the defs', freed by otf2_defs_free. Not thread-safe (libotf2's error handler is
 * process-wide).
 */
#ifndef HCLOCK_ALIGN_OTF2_DEFS_H
#define HCLOCK_ALIGN_OTF2_DEFS_H

#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

struct otf2_str {
	uint32_t ref;
	char *s;
};

struct otf2_grp {
	uint32_t ref, type, paradigm, flags; /* OTF2_GroupType, OTF2_Paradigm, OTF2_GroupFlag */
	uint32_t n;
	uint64_t *m;                         /* its n members */
};

struct otf2_comm {
	uint32_t ref, group;
};

struct otf2_lgroup {
	uint32_t ref, name;
	size_t node;                         /* the caller's: its node or process, SIZE_MAX none */
};

struct otf2_defs {
	const char *anchor;     /* the archive's anchor file, for the error lines (the caller's) */
	uint64_t res;           /* ClockProperties: timer resolution, ticks per second */
	uint64_t goff;          /* ... global offset, ticks */
	uint64_t tlen;          /* ... trace length, ticks */
	uint64_t realtime;      /* ... realtime of goff, ns since the epoch
	                           (OTF2_UNDEFINED_TIMESTAMP if none) */
	int have_clock;
	struct otf2_str *strs;  /* sorted by ref once read */
	size_t nstrs, capstrs;
	struct otf2_grp *grps;  /* sorted by ref once read */
	size_t ngrps, capgrps;
	struct otf2_comm *comms;/* sorted by ref once read */
	size_t ncomms, capcomms;
	struct otf2_lgroup *lgs;/* in the order of their definitions */
	size_t nlgs, caplgs;
	int failed;             /* the HCLOCK_E* code of the first failure in a callback, or 0 */
};

/* Read the global definitions of rdr into d (zeroed but for d->anchor); more (may be NULL)
 * registers the caller's own callbacks on cb; user is the caller's state, whose first member
 * is d. Returns 0, HCLOCK_EINVAL (the definitions cannot be read, no ClockProperties, a
 * resolution of 0), HCLOCK_ENOMEM, or the failure a callback of the caller recorded
 * (d->failed); the line in hclock_last_error(). */
int otf2_defs_read(OTF2_Reader *rdr, struct otf2_defs *d,
                   void (*more)(OTF2_GlobalDefReaderCallbacks *cb), void *user);

/* A callback's failure, recorded if it is the first (out of memory; bad input, the line
 * "ANCHOR: what"), for callbacks to return: OTF2_CALLBACK_INTERRUPT. */
int otf2_defs_nomem(struct otf2_defs *d);
int otf2_defs_bad(struct otf2_defs *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The string ref (NULL: not defined); group ref; the group of communicator comm; the
 * COMM_LOCATIONS group of a paradigm (NULL: none). */
const char *otf2_defs_str(const struct otf2_defs *d, uint32_t ref);
const struct otf2_grp *otf2_defs_grp(const struct otf2_defs *d, uint32_t ref);
const struct otf2_grp *otf2_defs_comm_group(const struct otf2_defs *d, uint32_t comm);
const struct otf2_grp *otf2_defs_comm_locations(const struct otf2_defs *d, uint32_t paradigm);

/* The node name of location group lgs[g]: its name with every character outside
 * [A-Za-z0-9._-] replaced by '_' ("MPI Rank 3" -> "MPI_Rank_3"), "groupN" if it has none
 * (N its ref), "_N" appended if taken(ctx, name) says an earlier node has it. malloc'd, NULL
 * without memory. */
char *otf2_defs_node_name(const struct otf2_defs *d, size_t g,
                          int (*taken)(const void *ctx, const char *name), const void *ctx);

/* ticks (a difference of archive times) as ns, exactly: floor(ticks * 1e9 / res). Returns
 * 0, or -1 outside int64_t. */
int otf2_defs_ns(uint64_t res, __int128 ticks, int64_t *ns);

/* Keep libotf2's error messages off stderr from now on (the first one is kept for
 * otf2_why). Returns the callback that was registered, to be registered again when done:
 * OTF2_Error_RegisterCallback(prev, NULL). */
OTF2_ErrorCallback otf2_quiet(void);

/* Why an OTF2 call failed with e: the first message libotf2 reported since otf2_quiet, else
 * e's description ("record rejected" for OTF2_SUCCESS: a callback refused a record). */
const char *otf2_why(OTF2_ErrorCode e);

void otf2_defs_free(struct otf2_defs *d);

#endif
