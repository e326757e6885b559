/* types.c - the clock family's table (clock/types.def). */
#include <stdio.h>

#include "clock/clock.h"
#include "util/err.h"
#include "util/names.h"

#define CLOCK_TYPE(n) REGISTRY_MEMBER(clock_type_##n)
#define REGISTRY_DEF "clock/types.def"
#define REGISTRY_TYPE struct clock_type
#define REGISTRY_TABLE clock_types
#include "util/registry.h"

const char *clock_type_names(void)
{
	static _Thread_local char buf[256];
	const char *named[ARRAY_SIZE(clock_types)];
	size_t k = 0;
	for (size_t i = 0; clock_types[i]; i++)
		if (clock_types[i]->help && !clock_types[i]->emulation)
			named[k++] = clock_types[i]->name;
	return names_join(buf, sizeof(buf), named, k);
}
