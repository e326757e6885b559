/*
 * outset.h - a format's output files, each written under a temporary name in the output
 * directory and all renamed into place at the end, so that a failed write leaves nothing
 * half-written behind.
 */
#ifndef HCLOCK_ALIGN_OUTSET_H
#define HCLOCK_ALIGN_OUTSET_H

#include <stddef.h>
#include <stdio.h>

struct outset {
	size_t n;
	struct outfile {
		char *tmp, *dst; /* temporary name (NULL once renamed), final name */
	} *f;
};

/* n files to come. Returns 0 or HCLOCK_ENOMEM (err_set). */
int outset_init(struct outset *o, size_t n);

/* File i: outdir/name, opened as a temporary file .name.XXXXXX in outdir; *fp for writing
 * (the caller closes it). Returns 0, HCLOCK_ENOMEM or HCLOCK_EIO (err_set). */
int outset_create(struct outset *o, size_t i, const char *outdir, const char *name, FILE **fp);

/* Rename every file into place. Returns 0 or HCLOCK_EIO (err_set). */
int outset_commit(struct outset *o);

/* Give fd (a file from mkstemp, mode 0600) the mode open(O_CREAT, 0666) would have given it
 * under the process's umask, or a directory from mkdtemp (dir nonzero) that of mkdir(0777): as
 * cp makes its copies. Returns 0 or HCLOCK_EIO (err_set, naming path). */
int outset_mode(int fd, const char *path, int dir);

/* A directory written under the temporary name tmp (in dst's directory) put in place as dst:
 * an earlier dst is first moved aside to old (a mkdtemp template, "DIR/.NAME.old.XXXXXX"),
 * put back if the rename fails, and removed once tmp is in place, so that a failure leaves
 * the earlier output as it was. Returns 0 or HCLOCK_EIO (err_set); tmp stays on failure. */
int outset_replace_dir(const char *tmp, const char *dst, char *old);

/* dir and everything below it removed (errors ignored: a leftover is no wrong output). */
void outset_rm_tree(const char *dir);

/* Remove the temporary files left (after a failure) and free o. */
void outset_free(struct outset *o);

#endif
