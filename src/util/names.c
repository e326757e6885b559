/* names.c - "a, b or c" (names.h). */
#include <stdio.h>

#include "util/names.h"

const char *names_join(char *buf, size_t len, const char *const *names, size_t n)
{
	size_t pos = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	for (size_t i = 0; i < n && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", names[i],
		                        i + 2 < n ? ", " : i + 1 < n ? " or " : "");
	return buf;
}
