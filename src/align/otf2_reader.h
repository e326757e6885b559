/*
 * otf2_reader.h - what the OTF2 trace format (reader_otf2.c, writer_otf2.c) reports beyond
 * struct trace_format: counts from its last write, and where it put the archive.
 */
#ifndef HCLOCK_ALIGN_OTF2_READER_H
#define HCLOCK_ALIGN_OTF2_READER_H

#include <stdint.h>

#include "align/trace.h"

/* Event times the last write clamped to the previous time of their location because the
 * conversion would have stepped back (0 for a monotonic conversion, or another format). */
uint64_t trace_otf2_clamps(const struct trace_set *set);

/* ClockOffset definitions the last write dropped (their correction is in the times). */
uint64_t trace_otf2_clock_offsets_dropped(const struct trace_set *set);

/* Name of the directory the write creates in outdir (the input archive's directory name);
 * the corrected anchor file is outdir/NAME/ARCHIVE.otf2. NULL for another format. */
const char *trace_otf2_output_dir(const struct trace_set *set);

#endif
