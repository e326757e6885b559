/* format.h - find the trace format of an input file or directory. */
#ifndef HCLOCK_ALIGN_FORMAT_H
#define HCLOCK_ALIGN_FORMAT_H

#include "align/trace.h"

/* The first format whose probe accepts path, or NULL. */
const struct trace_format *trace_format_probe(const char *path);
/* The formats compiled in, for error messages ("csv, pcap/pcapng, otf2"). */
const char *trace_format_names(void);

#endif
