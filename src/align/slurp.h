/*
 * slurp.h - an input file read whole into memory, once. The trace formats parse it in place
 * and write their corrected copy from it, so another program that truncates or rewrites the
 * file meanwhile cannot crash the reader (as with a memory mapping: SIGBUS) nor mix two
 * versions into one output; a file that changes size while it is read is refused.
 */
#ifndef HCLOCK_ALIGN_SLURP_H
#define HCLOCK_ALIGN_SLURP_H

#include <stddef.h>

/*
 * Read the regular file at path into *buf (malloc'd, NUL-terminated after its *len bytes;
 * the caller frees it). Returns 0, or HCLOCK_EIO (cannot open or read it, not a regular
 * file, or its size changed while it was read) or HCLOCK_ENOMEM, with err_set's line.
 */
int slurp_file(const char *path, char **buf, size_t *len);

/*
 * The same from the open descriptor fd of path, whose size was size bytes when opened (by
 * fstat): fewer bytes than that, or more, is HCLOCK_EIO "changed while read".
 */
int slurp_fd(int fd, const char *path, size_t size, char **buf, size_t *len);

#endif
