/*
 * input.c - from the inputs given (files, directories of them) to the list of trace files
 * and their one format, found through the table of formats (format.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "align/align_priv.h"
#include "align/format.h"

static int strv_add(struct strv *s, const char *p)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 16;
		char **nv = realloc(s->v, nc * sizeof(*nv));
		if (!nv)
			return HCLOCK_ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	if (!(s->v[s->n] = strdup(p)))
		return HCLOCK_ENOMEM;
	s->n++;
	return 0;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* path, of format f, joins paths; every input must be of the first one's format */
static int add_input(const char *path, const struct trace_format *f, struct strv *paths,
                     const struct trace_format **fmt)
{
	if (*fmt && f != *fmt)
		return err_set(HCLOCK_EINVAL, "%s: a %s trace among %s traces; give "
		               "inputs of one format", path, f->name, (*fmt)->name);
	*fmt = f;
	if (strv_add(paths, path))
		return err_set(HCLOCK_ENOMEM, "out of memory");
	return 0;
}

/* the files of directory dir that a format recognises (names starting with '.' skipped) */
static int list_dir(const char *dir, struct strv *files)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return err_set(HCLOCK_EIO, "%s: %s", dir, strerror(errno));
	while (!r && (de = readdir(d))) {
		char *p;
		if (de->d_name[0] == '.')
			continue;
		p = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!p) {
			r = HCLOCK_ENOMEM;
			break;
		}
		sprintf(p, "%s/%s", dir, de->d_name);
		if (trace_format_probe(p))
			r = strv_add(files, p);
		free(p);
	}
	closedir(d);
	return r ? err_set(r, "out of memory") : 0;
}

/* the recognised files of directory dir join paths, in name order */
static int add_dir(const char *dir, struct strv *paths, const struct trace_format **fmt)
{
	struct strv files = {0};
	char names[128];
	int r = list_dir(dir, &files);

	if (!r && !files.n)
		r = err_set(HCLOCK_EINVAL, "%s: no trace files in this directory "
		            "(formats: %s)", dir, trace_format_list(names, sizeof(names)));
	if (files.n)
		qsort(files.v, files.n, sizeof(*files.v), cmp_str);
	for (size_t k = 0; !r && k < files.n; k++)
		r = add_input(files.v[k], trace_format_probe(files.v[k]), paths, fmt);
	strv_free(&files);
	return r;
}

int align_inputs(const char *const *inputs, size_t n, struct strv *paths,
                 const struct trace_format **fmt)
{
	char names[128];

	*fmt = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct trace_format *f;
		struct stat st;
		int r;

		if (stat(inputs[i], &st))
			return err_set(HCLOCK_EIO, "%s: %s", inputs[i], strerror(errno));
		f = trace_format_probe(inputs[i]);
		if (!f && S_ISDIR(st.st_mode))
			r = add_dir(inputs[i], paths, fmt);
		else if (!f)
			r = err_set(HCLOCK_EINVAL, "%s: not a trace this tool reads "
			            "(formats: %s; native traces are named NODE.csv)", inputs[i],
			            trace_format_list(names, sizeof(names)));
		else
			r = add_input(inputs[i], f, paths, fmt);
		if (r)
			return r;
	}
	if (!paths->n)
		return err_set(HCLOCK_EINVAL, "no input traces given");
	return 0;
}
