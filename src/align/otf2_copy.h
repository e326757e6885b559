/*
 * otf2_copy.h - forward every OTF2 event and definition record read from one archive to the
 * writers of another (generated: otf2_copy.c from otf2_copy_gen.py). Used by the OTF2 trace
 * format to write a corrected archive (writer_otf2.c) and, writing nothing, to see every event
 * of a first read (reader_otf2.c).
 */
#ifndef HCLOCK_ALIGN_OTF2_COPY_H
#define HCLOCK_ALIGN_OTF2_COPY_H

#include <stdint.h>

#include <otf2/otf2.h>

struct otf2_copy {
	OTF2_EvtWriter *evt;        /* target of the events of the location being read */
	OTF2_DefWriter *def;        /* target of its local definitions */
	OTF2_GlobalDefWriter *gdef; /* target of the global definitions */
	/* Convert a timestamp of location loc in place, ticks. is_event: the record's own time
	 * (kept monotonic per location) rather than a time argument. Returns 0 to write the
	 * record, > 0 to skip it and go on, < 0 to stop. */
	int (*stamp)(struct otf2_copy *c, OTF2_LocationRef loc, OTF2_TimeStamp *t, int is_event);
	void *user;                 /* the caller's state */
	OTF2_ErrorCode status;      /* first writer error, OTF2_SUCCESS if none */
	uint64_t unknown;           /* records of a type this OTF2 cannot write: copy stopped */
	uint64_t clock_offsets;     /* ClockOffset definitions dropped */
	uint64_t events;            /* events written */
	uint64_t position;          /* eventPosition of the event being copied (1-based) */
};

/* Set callbacks (userData: struct otf2_copy) for every event type. */
void otf2_copy_evt_callbacks(OTF2_EvtReaderCallbacks *cb);
/* ... every local definition type; ClockOffset is dropped and counted, not copied. */
void otf2_copy_def_callbacks(OTF2_DefReaderCallbacks *cb);
/* ... every global definition type except ClockProperties and Location (left to the caller). */
void otf2_copy_global_def_callbacks(OTF2_GlobalDefReaderCallbacks *cb);

#endif
