/*
 * otf2_set.h - the OTF2 trace format's state of a trace set (struct otf2_set, the set's
 * priv), shared by its reader (reader_otf2.c) and its writer (writer_otf2.c), and the helpers
 * both use (otf2_set.c): the archive's clock, its locations (libotf2's error messages:
 * otf2_defs.h).
 * Private to these three files.
 *
 * Who owns what: the reader allocates the struct otf2_set, its strings and its locs[] in
 * read, fills them from the archive's global definitions, and frees them all in release
 * (otf2_release). The writer reads them and changes only what is marked as the writer's: the
 * per-location state of the copy and the counts of the last write.
 */
#ifndef HCLOCK_ALIGN_OTF2_SET_H
#define HCLOCK_ALIGN_OTF2_SET_H

#include <stdint.h>

#include <otf2/otf2.h>

#include "align/otf2_defs.h" /* otf2_quiet, otf2_why */
#include "align/trace.h"

#define NS_PER_S 1000000000LL

extern const struct trace_format trace_format_otf2; /* reader_otf2.c */

/* one location (a thread of a process) of the archive */
struct loc {
	uint64_t ref;
	uint32_t group;  /* location group */
	uint64_t nev;    /* events announced by the definition */
	size_t node;
	long proc;       /* the location its process's messages are matched at: the process's
	                    member of the COMM_LOCATIONS group (its other threads' ones too);
	                    -1 not looked up yet */
	/* writer state */
	uint64_t last;   /* last event time written, ticks */
	int started;
	uint64_t written;
};

struct otf2_set {
	char *anchor;   /* path of the anchor file */
	char *dirname;  /* name of the directory holding it: the output directory's name */
	char *name;     /* archive name: anchor file name without .otf2 */
	uint64_t res;   /* ClockProperties: timer resolution, ticks per second */
	uint64_t goff;  /* ... global offset, ticks (time 0 of the ns the set's events are in) */
	uint64_t tlen;  /* ... trace length, ticks */
	uint64_t realtime; /* ... realtime of goff, ns since the epoch (OTF2_UNDEFINED_TIMESTAMP
	                      if none) */
	int have_clock;
	struct loc *locs; /* sorted by ref once the reader has made the nodes */
	size_t nlocs;
	/* the last write's counts (writer) */
	uint64_t clamps, clock_offsets;
};

/* Archive time t (ticks) as ns since the global offset, exactly:
 * floor((t - goff) * 1e9 / res). Returns 0, or -1 out of int64_t's range. */
int otf2_ticks_to_ns(const struct otf2_set *o, uint64_t t, int64_t *ns);

/* ns since the global offset as archive ticks, rounded half away from zero (so that
 * otf2_ticks_to_ns(otf2_ns_to_ticks(x)) == x when res <= 1 GHz). Returns 0, or -1 when no
 * valid OTF2 timestamp holds it. */
int otf2_ns_to_ticks(const struct otf2_set *o, int64_t ns, uint64_t *t);

/* Index into o->locs of the location ref (locs sorted), or -1. */
long otf2_find_loc(const struct otf2_set *o, uint64_t ref);

/* Select every location of the archive and open its event files (and its local definition
 * files, if any: *defs says whether they opened). */
OTF2_ErrorCode otf2_open_locations(OTF2_Reader *rdr, const struct otf2_set *o, int *defs);

/* The format's write (struct trace_format, writer_otf2.c). */
int otf2_write(const struct trace_set *set, trace_convert_fn conv, void *ctx,
               const char *outdir);

#endif
