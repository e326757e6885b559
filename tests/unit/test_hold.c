/* test_hold.c - util/hold.c: where held room starts, over random ends and sizes (seeds 1-5);
 * room held ahead of a file's end is allocated and leaves the file's size alone; a bad file
 * descriptor is refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "util/hold.h"
#include "util/rng.h"

static void starts(void)
{
	TEST_CHECK(hold_start(0, 4096) == 0, "nothing written: the room starts at 0");
	TEST_CHECK(hold_start(4095, 4096) == 0, "less than the room: 0");
	TEST_CHECK(hold_start(4096, 4096) == 0, "exactly the room: 0");
	TEST_CHECK(hold_start(10000, 4096) == 5904, "got %llu", (unsigned long long)hold_start(10000, 4096));
	TEST_CHECK(hold_start(77, 0) == 77, "no room held: at the end");
	for (test_seed = 1; test_seed <= 5; test_seed++) {
		struct rng r;
		rng_seed(&r, test_seed);
		for (int i = 0; i < 10000; i++) {
			uint64_t end = rng_u64(&r) >> (rng_u64(&r) % 64);
			uint64_t n = rng_u64(&r) >> (rng_u64(&r) % 64);
			uint64_t s = hold_start(end, n);
			int ok = end >= n ? s + n == end : s == 0;
			TEST_CHECK(ok, "hold_start(%llu, %llu) = %llu", (unsigned long long)end,
			           (unsigned long long)n, (unsigned long long)s);
			if (!ok)
				break;
		}
	}
	test_seed = 0;
}

static void ahead(void)
{
	char path[] = "/tmp/test_hold.XXXXXX";
	int fd = mkstemp(path);
	TEST_CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	unlink(path);
	char buf[100] = {0};
	TEST_CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "write");
	struct stat st;
	if (hold_ahead(fd, sizeof(buf), 8192)) {
		/* a file system that cannot allocate ahead: nothing held, nothing to check */
		TEST_CHECK(errno == EOPNOTSUPP, "hold_ahead failed: errno %d", errno);
	} else {
		TEST_CHECK(!fstat(fd, &st), "fstat");
		TEST_CHECK(st.st_size == (off_t)sizeof(buf), "the size stays: %lld",
		           (long long)st.st_size);
		TEST_CHECK((uint64_t)st.st_blocks * 512 >= sizeof(buf) + 8192,
		           "the room is the file's: %lld bytes allocated",
		           (long long)st.st_blocks * 512);
	}
	close(fd);
	/* the check bites: a closed descriptor holds nothing */
	errno = 0;
	TEST_CHECK(hold_ahead(fd, 0, 4096) == -1 && errno == EBADF, "a closed fd: errno %d", errno);
}

int main(void)
{
	starts();
	ahead();
	return test_end("test_hold");
}
