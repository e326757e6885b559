/*
 * format.c - the table of trace formats, and the warning and information helpers of every
 * format.
 *
 * Adding a format: one file reader_NAME.c that defines
 *   const struct trace_format trace_format_NAME = { .name = "NAME", .usage = ..., ... };
 * and one line TRACE_FORMAT(NAME) in align/types.def. The table below declares and lists it;
 * hclock_align_format(), the tool's --help and the error lines that list the formats all
 * come from it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hclock_align.h"
#include "align/format.h"
#include "util/err.h"

/* The formats in probing order: an input belongs to the first whose probe accepts it. */
#define TRACE_FORMAT(n) REGISTRY_MEMBER(trace_format_##n)
#define REGISTRY_DEF "align/types.def"
#define REGISTRY_TYPE struct trace_format
#define REGISTRY_TABLE trace_formats
#include "util/registry.h"
#define NFORMATS (ARRAY_SIZE(trace_formats) - 1) /* the NULL at the end */

const struct trace_format *trace_format_probe(const char *path)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (trace_formats[i]->probe(path))
			return trace_formats[i];
	return NULL;
}

const struct trace_format *trace_format_find(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(trace_formats[i]->name, name))
			return trace_formats[i];
	return NULL;
}

const char *trace_format_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NFORMATS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
		                      trace_formats[i]->name);
	return buf;
}

const char *hclock_align_format(size_t i, const char **usage)
{
	if (usage)
		*usage = i < NFORMATS ? trace_formats[i]->usage : NULL;
	return i < NFORMATS ? trace_formats[i]->name : NULL;
}

/* one line of fmt through fn (warnings, information), dropped if fn is NULL */
static void __attribute__((format(printf, 3, 0)))
line_to(void (*fn)(void *, const char *), void *ctx, const char *fmt, va_list ap)
{
	char line[512];

	if (!fn)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fn(ctx, line);
}

void trace_warn(const struct trace_set *set, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line_to(set->warn, set->warn_ctx, fmt, ap);
	va_end(ap);
}

void trace_note(const struct trace_set *set, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line_to(set->note, set->warn_ctx, fmt, ap);
	va_end(ap);
}
