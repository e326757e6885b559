/*
 * registry.h - a family's table, made from its .def file: sync algorithms, offset
 * estimators, base clocks, bench schemes, trace formats (no MPI). Not a header but a
 * template: the file that owns a family's table includes it once, after
 *   #define REGISTRY_DEF   "sync/types.def"    the family's .def file
 *   #define REGISTRY_TYPE  struct sync_type    a member, with its `const char *name`
 *   #define REGISTRY_TABLE sync_types          the table
 *   #define SYNC_TYPE(n)   REGISTRY_MEMBER(sync_type_##n)   the .def file's line: the
 *                                              member's variable (defined in its own file)
 * and, each only if wanted,
 *   #define REGISTRY_FIND  sync_type_find      the lookup by name, below
 *   #define REGISTRY_NAMES offset_type_names   every name in table order: "a, b or c"
 * It defines
 *   const REGISTRY_TYPE *const REGISTRY_TABLE[]: the members in .def order, then NULL;
 *   const REGISTRY_TYPE *REGISTRY_FIND(const char *name, size_t n): the member whose name
 *     is the n characters at name (a token of a longer string), or NULL;
 *   const char *REGISTRY_NAMES(void): the names for help texts and error lines, in a buffer
 *     of the calling thread's that the next call overwrites;
 * which the family's header declares, and undefines the REGISTRY_* settings (the line macro
 * is the family's own), so that no other family can take them for its own.
 */
#include <stddef.h>
#include <string.h>

#include "util/names.h"

#define REGISTRY_MEMBER(var) extern const REGISTRY_TYPE var;
#include REGISTRY_DEF
#undef REGISTRY_MEMBER

const REGISTRY_TYPE *const REGISTRY_TABLE[] = {
#define REGISTRY_MEMBER(var) &var,
#include REGISTRY_DEF
#undef REGISTRY_MEMBER
	NULL,
};

#ifdef REGISTRY_FIND
const REGISTRY_TYPE *REGISTRY_FIND(const char *name, size_t n)
{
	for (size_t i = 0; REGISTRY_TABLE[i]; i++) {
		const char *m = REGISTRY_TABLE[i]->name;
		if (strlen(m) == n && !strncmp(m, name, n))
			return REGISTRY_TABLE[i];
	}
	return NULL;
}
#undef REGISTRY_FIND
#endif

#ifdef REGISTRY_NAMES
const char *REGISTRY_NAMES(void)
{
	static _Thread_local char buf[256];
	const char *names[sizeof(REGISTRY_TABLE) / sizeof(REGISTRY_TABLE[0])];
	size_t n = 0;
	for (; REGISTRY_TABLE[n]; n++)
		names[n] = REGISTRY_TABLE[n]->name;
	return names_join(buf, sizeof(buf), names, n);
}
#undef REGISTRY_NAMES
#endif

#undef REGISTRY_DEF
#undef REGISTRY_TYPE
#undef REGISTRY_TABLE
