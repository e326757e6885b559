/* format.h - find the trace format of an input file or directory. */
#ifndef HCLOCK_ALIGN_FORMAT_H
#define HCLOCK_ALIGN_FORMAT_H

#include "align/trace.h"

/* The first format whose probe accepts path, or NULL. */
const struct trace_format *trace_format_probe(const char *path);
/* Write one error line into err (if err and errlen) and return code: the error convention of
 * every trace format and of the engine. */
int trace_fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The formats compiled in, for error messages ("csv, pcap/pcapng, otf2"). */
const char *trace_format_names(void);

#endif
