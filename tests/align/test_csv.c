/*
 * test_csv.c - the CSV inputs of hclock align against files that change under it, and the
 * error convention of the library (include/hclock_align.h):
 *  - a file truncated (or grown) between opening and reading: HCLOCK_EIO, one line saying it
 *    changed while read, also in hclock_last_error() (slurp.h, deterministically: the size
 *    is taken, the file cut, then read);
 *  - inputs truncated after hclock_align_open, before the run and the write: the corrected
 *    traces and bounds are those of the files as read (with a memory mapping the write died
 *    of SIGBUS here);
 *  - a write that fails part-way (a file size limit, as a full disk: the second node's file
 *    fails after the first is complete): HCLOCK_EIO naming the temporary file, and the output
 *    directory exactly as before (an old a.csv intact, no temporary file left); unlimited,
 *    the same write succeeds with the files alone in it;
 *  - each error code: a missing file HCLOCK_EIO, a bad trace HCLOCK_EINVAL, calls before a
 *    successful run HCLOCK_EINVAL, an unwritable output HCLOCK_EIO.
 * Usage: test_align_csv (no arguments).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hclock_align.h"
#include "align/slurp.h"

#include "test.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(2);
	}
}

/* the whole file, malloc'd ("" if missing) */
static char *slurp_text(const char *path)
{
	char *buf = NULL;
	size_t len;

	if (slurp_file(path, &buf, &len))
		return strdup("");
	return buf;
}

/* a.csv and b.csv: 200 round trips, b's clock 1 ms ahead */
static void make_traces(void)
{
	size_t cap = 200 * 80 + 64, na = 0, nb = 0;
	char *a = malloc(cap), *b = malloc(cap);
	long long t = 1700000000000000000LL;

	na += (size_t)sprintf(a + na, "event,id,peer,time_ns\n");
	nb += (size_t)sprintf(b + nb, "event,id,peer,time_ns\n");
	for (int i = 0; i < 200; i++) {
		na += (size_t)sprintf(a + na, "send,%d,b,%lld\n", i, t);
		nb += (size_t)sprintf(b + nb, "recv,%d,a,%lld\n", i, t + 1000000 + 5000 + i % 7 * 100);
		nb += (size_t)sprintf(b + nb, "send,%d,a,%lld\n", i, t + 1000000 + 20000);
		na += (size_t)sprintf(a + na, "recv,%d,b,%lld\n", i, t + 26000 + i % 5 * 100);
		t += 1000000;
	}
	put("a.csv", a);
	put("b.csv", b);
	free(a);
	free(b);
}

/* slurp_fd sees the size of the open file change before it reads */
static void test_changed_while_read(void)
{
	char path[128], *buf = NULL;
	struct stat st;
	size_t len = 0;
	int fd, r;

	snprintf(path, sizeof(path), "%s/a.csv", dir);
	fd = open(path, O_RDWR);
	TEST_CHECK(fd >= 0 && !fstat(fd, &st) && st.st_size > 100, "open %s", path);
	TEST_CHECK(!ftruncate(fd, st.st_size / 2), "truncate");
	r = slurp_fd(fd, path, (size_t)st.st_size, &buf, &len);
	TEST_CHECK(r == HCLOCK_EIO && strstr(hclock_last_error(), "a.csv: changed while being read") &&
	           !buf, "truncated while read: %d '%s'", r, hclock_last_error());
	lseek(fd, 0, SEEK_SET);
	r = slurp_fd(fd, path, (size_t)st.st_size / 4, &buf, &len);
	TEST_CHECK(r == HCLOCK_EIO && strstr(hclock_last_error(), "changed while being read") && !buf,
	           "grown while read: %d '%s'", r, hclock_last_error());
	lseek(fd, 0, SEEK_SET);
	r = slurp_fd(fd, path, (size_t)st.st_size / 2, &buf, &len);
	TEST_CHECK(!r && len == (size_t)st.st_size / 2 && buf && !buf[len], "unchanged: %d", r);
	free(buf);
	close(fd);
	printf("ok: a file cut between fstat and read: %s\n", hclock_last_error());
}

/* align a.csv and b.csv into OUT, with bounds; truncate the inputs first if cut */
static int align_into(const char *out, int cut, char *err, size_t errlen)
{
	char pa[128], pb[128], po[128], pbnd[160];
	const char *in[2] = {pa, pb};
	struct hclock_align_opts o;
	hclock_align *h;
	FILE *f;
	int r;

	snprintf(pa, sizeof(pa), "%s/a.csv", dir);
	snprintf(pb, sizeof(pb), "%s/b.csv", dir);
	snprintf(po, sizeof(po), "%s/%s", dir, out);
	snprintf(pbnd, sizeof(pbnd), "%s/%s.bounds", dir, out);
	if ((r = hclock_align_open(in, 2, &h, err, errlen)))
		return r;
	if (cut) { /* another program empties one input and halves the other */
		TEST_CHECK(!truncate(pa, 0) && !truncate(pb, 1000), "truncate the inputs");
	}
	hclock_align_opts_init(&o);
	r = hclock_align_run(h, &o, err, errlen);
	if (!r)
		r = hclock_align_write(h, po, err, errlen);
	if (!r && (f = fopen(pbnd, "w"))) {
		r = hclock_align_bounds_csv(h, f);
		fclose(f);
	}
	hclock_align_free(h);
	return r;
}

static void test_truncated_after_open(void)
{
	char err[256] = "", p1[160], p2[160];

	TEST_CHECK(!align_into("whole", 0, err, sizeof(err)), "reference run: %s", err);
	TEST_CHECK(!align_into("cut", 1, err, sizeof(err)), "inputs cut after open: %s", err);
	for (int k = 0; k < 3; k++) {
		const char *f = k == 0 ? "a.csv" : k == 1 ? "b.csv" : "";
		char *x, *y;
		if (*f) {
			snprintf(p1, sizeof(p1), "%s/whole/%s", dir, f);
			snprintf(p2, sizeof(p2), "%s/cut/%s", dir, f);
		} else {
			snprintf(p1, sizeof(p1), "%s/whole.bounds", dir);
			snprintf(p2, sizeof(p2), "%s/cut.bounds", dir);
		}
		x = slurp_text(p1);
		y = slurp_text(p2);
		TEST_CHECK(strlen(x) > 1000 && !strcmp(x, y), "%s differs after the inputs were cut",
		           p2);
		free(x);
		free(y);
	}
	make_traces(); /* restore */
	printf("ok: inputs cut after hclock_align_open: same corrected traces and bounds\n");
}

/* the names in DIR/SUB, sorted into one string "n1 n2 ..." (dot files too) */
static void list_dir(const char *sub, char *out, size_t len)
{
	char path[160], names[8][64];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	*out = 0;
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && n < 8)
			snprintf(names[n++], sizeof(names[0]), "%.63s", e->d_name);
	closedir(d);
	for (size_t i = 1; i < n; i++) /* insertion sort, a handful of names */
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char t[64];
			memcpy(t, names[j], sizeof(t));
			memcpy(names[j], names[j - 1], sizeof(t));
			memcpy(names[j - 1], t, sizeof(t));
		}
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", names[i]);
}

/* a write that runs into a file size limit (EFBIG, as ENOSPC on a full disk) on the second
 * node's file, after the first is complete under its temporary name */
static void test_full_disk(void)
{
	char err[256] = "", path[160], names[512], *old;
	long long t = 1700000000000000000LL + 201 * 1000000LL; /* after b's last event */
	struct rlimit lim, full;
	FILE *f;
	int r;

	/* b.csv grows by 3000 other events (about 100 kB corrected); a.csv stays about 12 kB */
	snprintf(path, sizeof(path), "%s/b.csv", dir);
	f = fopen(path, "a");
	for (int k = 0; f && k < 3000; k++)
		fprintf(f, "mark,%d,,%lld\n", k, t + k * 1000LL);
	TEST_CHECK(f && !fclose(f), "append to %s", path);
	snprintf(path, sizeof(path), "%s/full", dir);
	TEST_CHECK(!mkdir(path, 0777), "mkdir %s", path);
	put("full/a.csv", "old\n");

	signal(SIGXFSZ, SIG_IGN);
	TEST_CHECK(!getrlimit(RLIMIT_FSIZE, &full), "getrlimit");
	lim = full;
	lim.rlim_cur = 48 * 1024;
	TEST_CHECK(!setrlimit(RLIMIT_FSIZE, &lim), "setrlimit");
	r = align_into("full", 0, err, sizeof(err));
	TEST_CHECK(!setrlimit(RLIMIT_FSIZE, &full), "restore the file size limit");
	TEST_CHECK(r == HCLOCK_EIO && strstr(err, "/full/.b.csv.") && strstr(err, "write error"),
	           "write past the limit: %d '%s', expected HCLOCK_EIO and a write error in "
	           "full/.b.csv.XXXXXX", r, err);
	list_dir("full", names, sizeof(names));
	TEST_CHECK(!strcmp(names, "a.csv"), "after the failed write full/ holds '%s', expected "
	           "'a.csv' alone", names);
	snprintf(path, sizeof(path), "%s/full/a.csv", dir);
	old = slurp_text(path);
	TEST_CHECK(!strcmp(old, "old\n"), "full/a.csv replaced by a failed write: '%.40s'", old);
	free(old);

	r = align_into("full", 0, err, sizeof(err));
	TEST_CHECK(!r, "the same write without the limit: %s", err);
	list_dir("full", names, sizeof(names));
	TEST_CHECK(!strcmp(names, "a.csv b.csv"), "after the write full/ holds '%s', expected "
	           "'a.csv b.csv'", names);
	snprintf(path, sizeof(path), "%s/full/b.csv", dir);
	old = slurp_text(path);
	TEST_CHECK(strlen(old) > 48 * 1024, "full/b.csv has %zu bytes, expected more than the "
	           "limit of the failed write", strlen(old));
	free(old);
	make_traces(); /* restore */
	printf("ok: a write failed part-way (file size limit) left full/ as it was: %s\n", err);
}

static void test_codes(void)
{
	char err[256], path[128];
	const char *in[1] = {path};
	hclock_align *h = (hclock_align *)1;
	int r;

	snprintf(path, sizeof(path), "%s/missing.csv", dir);
	r = hclock_align_open(in, 1, &h, err, sizeof(err));
	TEST_CHECK(r == HCLOCK_EIO && !h && strstr(err, "missing.csv"), "missing file: %d '%s'", r,
	           err);
	put("bad.csv", "event,id,time_ns\n");
	snprintf(path, sizeof(path), "%s/bad.csv", dir);
	r = hclock_align_open(in, 1, &h, err, sizeof(err));
	TEST_CHECK(r == HCLOCK_EINVAL && strstr(err, "bad.csv:1:"), "bad header: %d '%s'", r, err);
	TEST_CHECK(!strcmp(hclock_last_error(), err), "last error '%s'", hclock_last_error());
	r = hclock_align_open(in, 1, &h, NULL, 0);
	TEST_CHECK(r == HCLOCK_EINVAL && strstr(hclock_last_error(), "bad.csv:1:"),
	           "no err buffer: %d '%s'", r, hclock_last_error());
	unlink(path);

	snprintf(path, sizeof(path), "%s", dir);
	r = hclock_align_open(in, 1, &h, err, sizeof(err));
	TEST_CHECK(!r, "open %s: %s", dir, err);
	if (r)
		return;
	TEST_CHECK(hclock_align_convert(h, 0, 0, NULL, NULL, NULL) == HCLOCK_EINVAL,
	           "convert before run");
	TEST_CHECK(hclock_align_report(h, stdout, 0) == HCLOCK_EINVAL, "report before run");
	TEST_CHECK(hclock_align_write(h, dir, err, sizeof(err)) == HCLOCK_EINVAL, "write before run");
	{
		struct hclock_align_opts o;
		hclock_align_opts_init(&o);
		o.reference = "nosuchnode";
		r = hclock_align_run(h, &o, err, sizeof(err));
		TEST_CHECK(r == HCLOCK_EINVAL && strstr(err, "nosuchnode"), "bad reference: %d", r);
		o.reference = NULL;
		TEST_CHECK(!hclock_align_run(h, &o, err, sizeof(err)), "run: %s", err);
	}
	TEST_CHECK(hclock_align_convert(h, 5, 0, NULL, NULL, NULL) == HCLOCK_EINVAL, "bad node");
	snprintf(path, sizeof(path), "%s/a.csv/sub", dir);
	r = hclock_align_write(h, path, err, sizeof(err));
	TEST_CHECK(r == HCLOCK_EIO && strstr(err, "cannot create"), "unwritable output: %d '%s'", r,
	           err);
	hclock_align_free(h);
	printf("ok: error codes\n");
}

int main(void)
{
	strcpy(dir, "/tmp/test-align-csv-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	make_traces();
	test_changed_while_read();
	make_traces();
	test_truncated_after_open();
	test_full_disk();
	test_codes();
	if (!test_failures) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	} else {
		fprintf(stderr, "files kept in %s\n", dir);
	}
	return test_end("test_align_csv");
}
