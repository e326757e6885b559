/* names.c - "a, b or c", and names safe for a node (names.h). */
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

char *names_sanitize(char *s)
{
	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '-' || *p == '_'))
			*p = '_';
	return s;
}
