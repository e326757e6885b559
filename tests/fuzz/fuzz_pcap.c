/*
 * fuzz_pcap.c - libFuzzer target for the pcap/pcapng reader. The input is split in two
 * captures (the first two bytes give the length of the first), written to temporary files,
 * and read as one trace set; errors are fine, crashes and leaks are not.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "align/format.h"
#include "align/trace.h"
#include "fuzz_input.h"

#define PCAP (trace_format_find("pcap")) /* the format under test, from the table */

static int put(char *path, const uint8_t *d, size_t n)
{
	int fd = mkstemps(path, 5);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, d, n) == (ssize_t)n;
	close(fd);
	return ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char a[] = "/tmp/fuzz_pcap_a.XXXXXX.pcap", b[] = "/tmp/fuzz_pcap_b.XXXXXX.pcap";
	const char *paths[2] = { a, b };
	struct trace_set set;
	long cut = fuzz_split(&data, &size);
	size_t split = (size_t)cut;

	if (cut < 0)
		return 0;
	if (put(a, data, split) == 0 && put(b, data + split, size - split) == 0) {
		(void)PCAP->probe(a);
		memset(&set, 0, sizeof(set));
		if (PCAP->read(paths, 2, &set) == 0)
			PCAP->release(&set);
	}
	unlink(a);
	unlink(b);
	return 0;
}
