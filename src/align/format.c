/*
 * format.c - the table of trace formats. Adding a format: one reader_*.c defining a
 * struct trace_format, and one line here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "align/format.h"

static const struct trace_format *const formats[] = {
#ifdef HCLOCK_ALIGN_HAVE_OTF2
	&trace_format_otf2,
#endif
#ifdef HCLOCK_ALIGN_HAVE_PCAP
	&trace_format_pcap,
#endif
	&trace_format_csv,
	NULL,
};

const struct trace_format *trace_format_probe(const char *path)
{
	for (size_t i = 0; formats[i]; i++)
		if (formats[i]->probe && formats[i]->probe(path))
			return formats[i];
	return NULL;
}

const char *trace_format_names(void)
{
	return "csv"
#ifdef HCLOCK_ALIGN_HAVE_PCAP
	       ", pcap/pcapng"
#endif
#ifdef HCLOCK_ALIGN_HAVE_OTF2
	       ", otf2"
#endif
	       ;
}

int trace_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}
