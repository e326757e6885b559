/*
 * test_formats.c - the table of trace formats (src/align/types.def, format.c) drives what
 * users see: every format of the table, enumerated through hclock_align_format(), appears
 * with its usage line in `hclock align --help`, and by name in the error line for an input
 * no format recognises, from the library (err and hclock_last_error) and from the tool (one
 * line, exit 1). A format added to the table shows up in all of them with no other edit.
 * Usage: test_align_formats HCLOCK
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hclock_align.h"

#include "test.h"

/* the whole output of cmd (stdout, or stderr with 2>&1 in cmd), and its exit status */
static char *run(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0, cap = 1 << 16;
	char *out = calloc(cap, 1);

	if (!p || !out) {
		perror(cmd);
		exit(2);
	}
	n = fread(out, 1, cap - 1, p);
	out[n] = 0;
	*status = pclose(p);
	return out;
}

int main(int argc, char **argv)
{
	char cmd[512], dir[] = "/tmp/test-align-formats-XXXXXX", path[128], err[512];
	const char *in[1] = {path};
	const char *name, *usage;
	hclock_align *a;
	char *help, *tool_err;
	size_t n = 0;
	int st, r;

	if (argc != 2 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: test_align_formats HCLOCK\n");
		return 2;
	}
	snprintf(cmd, sizeof(cmd), "%s align --help", argv[1]);
	help = run(cmd, &st);
	TEST_CHECK(st == 0 && strstr(help, "usage: hclock align"), "--help: status %d", st);
	snprintf(path, sizeof(path), "%s/trace.txt", dir);
	fclose(fopen(path, "w"));
	r = hclock_align_open(in, 1, &a, err, sizeof(err));
	TEST_CHECK(r == HCLOCK_EINVAL && !a && strstr(err, "trace.txt: not a trace"),
	           "unknown format: %d '%s'", r, err);
	TEST_CHECK(!strcmp(err, hclock_last_error()), "last error '%s'", hclock_last_error());
	snprintf(cmd, sizeof(cmd), "%s align %s --out %s/out 2>&1", argv[1], path, dir);
	tool_err = run(cmd, &st);
	TEST_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1 && strchr(tool_err, '\n') ==
	           tool_err + strlen(tool_err) - 1, "tool: status %d, '%s'", st, tool_err);

	for (; (name = hclock_align_format(n, &usage)); n++) {
		char line[256], listed[64];
		snprintf(line, sizeof(line), "%s %s\n", name, usage);
		snprintf(listed, sizeof(listed), " %s", name);
		TEST_CHECK(usage && *usage && strlen(name) < 7, "format %zu: name '%s', usage", n, name);
		/* in --help: the name, then its usage line */
		TEST_CHECK(strstr(help, name) && strstr(strstr(help, name), usage),
		           "--help lacks format %s: %s", name, usage);
		/* in the error lines: the name as a word of the list */
		TEST_CHECK(strstr(err, listed) && strstr(tool_err, listed),
		           "error lines lack format %s: '%s' / '%s'", name, err, tool_err);
		printf("ok: format %s in --help and the error lines\n", name);
	}
	TEST_CHECK(n >= 3, "only %zu formats in the table", n);
	TEST_CHECK(!hclock_align_format(n, &usage) && !usage, "past the table");
	free(help);
	free(tool_err);
	unlink(path);
	rmdir(dir);
	return test_end("test_align_formats");
}
