/*
 * fuzz_raw.c - libFuzzer target for the tracer's raw files as align's format raw. The input is
 * rank 1's file of a run of 2; rank 0's is a small valid one made here (messages both ways on
 * one channel). Both go through hclock_align_open, and when they open, run and write (the
 * writer patches the input's records); errors are fine, crashes and leaks are not.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hclock_align.h"
#include "util/record.h"
#include "fuzz_input.h"

/* rank 0 of 2: MPI_Send, MPI_Recv; four exchanges with rank 1 on (comm 0, tag 0) */
static int put_rank0(const char *path)
{
	static const char names[24] = "MPI_Send\0MPI_Recv"; /* padded to 8 bytes */
	struct rec_header h = {.rank = 0, .size = 2, .nfuncs = 2, .names_bytes = sizeof(names)};
	unsigned char buf[sizeof(h) + sizeof(names) + 12 * sizeof(struct rec)];
	size_t n = 0;

	memcpy(h.magic, REC_MAGIC, 8);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), names, sizeof(names));
	n = sizeof(h) + sizeof(names);
	for (int i = 0; i < 4; i++) {
		int64_t t = 1000000 * (i + 1);
		struct rec r[3] = {
			{.kind = REC_SEND, .func = 0, .peer = 1, .t_l = t, .t_g = t},
			{.kind = REC_CALL, .func = 0, .peer = -1, .t_l = t - 10, .t2_l = t + 10},
			{.kind = REC_RECV, .func = 1, .peer = 1, .t_l = t + 5000, .t_g = t + 5000},
		};
		memcpy(buf + n, r, sizeof(r));
		n += sizeof(r);
	}
	return fuzz_put(path, buf, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/fuzz_raw.XXXXXX", p0[64], p1[64], out[64], o0[80], o1[80];
	const char *in[2] = {p0, p1};
	struct hclock_align_opts o;
	hclock_align *a;

	if (!mkdtemp(dir))
		return 0;
	snprintf(p0, sizeof(p0), "%s/rank.0", dir);
	snprintf(p1, sizeof(p1), "%s/rank.1", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(o0, sizeof(o0), "%s/rank.0", out);
	snprintf(o1, sizeof(o1), "%s/rank.1", out);
	if (put_rank0(p0) == 0 && fuzz_put(p1, data, size) == 0 &&
	    hclock_align_open(in, 2, &a, NULL, 0) == 0) {
		hclock_align_opts_init(&o);
		if (hclock_align_run(a, &o, NULL, 0) == 0)
			(void)hclock_align_write(a, out, NULL, 0);
		hclock_align_free(a);
	}
	unlink(o0);
	unlink(o1);
	rmdir(out);
	unlink(p0);
	unlink(p1);
	rmdir(dir);
	return 0;
}
