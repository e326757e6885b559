/* format.h - the table of trace formats (format.c), and the error and warning helpers every
 * format and the engine use: errors go through err_set (util/err.h: return 0 or a negative
 * HCLOCK_E*, one line for hclock_last_error()), warnings through trace_warn, information
 * through trace_note. */
#ifndef HCLOCK_ALIGN_FORMAT_H
#define HCLOCK_ALIGN_FORMAT_H

#include <stddef.h>

#include "hclock_api.h"
#include "align/trace.h"
#include "util/err.h"

/* The table, in align/types.def order (the probing order), NULL-terminated. */
extern const struct trace_format *const trace_formats[];

/* The first format in the table whose probe accepts path, or NULL. */
const struct trace_format *trace_format_probe(const char *path);

/* The format named name ("csv", "pcap", "otf2"), or NULL. */
const struct trace_format *trace_format_find(const char *name);

/* The names of the formats in table order, for error lines: "csv, pcap, otf2" into buf
 * (len bytes, truncated if short); returns buf. */
const char *trace_format_list(char *buf, size_t len);

/* One warning line through set->warn (dropped if none): what a format has to say that is
 * not an error, e.g. times clamped while writing. */
void trace_warn(const struct trace_set *set, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One information line through set->note (dropped if none): what a reader found that is
 * neither wrong nor doubtful, e.g. a trace's clock and its numbers of events. */
void trace_note(const struct trace_set *set, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
