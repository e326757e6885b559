/*
 * fuzz_ctf.c - libFuzzer target for the CTF (LTTng) reader. The input is split in a trace's
 * metadata and one stream file (the first two bytes give the metadata's length), written as
 * DIR/host/kernel/{metadata,chan_0} and read as one trace set through libbabeltrace2; errors
 * are fine, crashes and leaks are not. Seed: corpus/fuzz_ctf (from tests/align/gen_ctf.py).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "align/format.h"
#include "align/trace.h"
#include "fuzz_input.h"

#define CTF (trace_format_find("ctf")) /* the format under test, from the table */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/fuzz_ctf.XXXXXX", k[64], m[80], s[80];
	const char *paths[1] = { dir };
	struct trace_set set;
	long cut = fuzz_split(&data, &size);
	size_t split = (size_t)cut;

	if (cut < 0 || !mkdtemp(dir))
		return 0;
	snprintf(k, sizeof(k), "%s/host", dir);
	mkdir(k, 0700);
	snprintf(k, sizeof(k), "%s/host/kernel", dir);
	mkdir(k, 0700);
	snprintf(m, sizeof(m), "%s/metadata", k);
	snprintf(s, sizeof(s), "%s/chan_0", k);
	if (fuzz_put(m, data, split) == 0 && fuzz_put(s, data + split, size - split) == 0 &&
	    CTF->probe(dir)) {
		memset(&set, 0, sizeof(set));
		if (CTF->read(paths, 1, &set) == 0)
			CTF->release(&set);
	}
	unlink(m);
	unlink(s);
	rmdir(k);
	snprintf(k, sizeof(k), "%s/host", dir);
	rmdir(k);
	rmdir(dir);
	return 0;
}
