/*
 * fuzz_otf2.c - libFuzzer target for the OTF2 reader. An OTF2 archive is a directory; the
 * fuzzer mutates one file of a small valid archive, chosen by the first input byte: the
 * anchor, the global definitions, or the events or local definitions of one location. The
 * archive is built once (two processes, a few messages) with the OTF2 writer API.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "align/format.h"
#include "align/trace.h"

#define OTF2 (trace_format_find("otf2")) /* the format under test, from the table */

static char dir[] = "/tmp/fuzz_otf2.XXXXXX";
static char *orig[6];
static size_t origlen[6];
static const char *files[6] = { "traces.otf2", "traces.def", "traces/0.evt", "traces/1.evt",
                                "traces/0.def", "traces/1.def" };

static OTF2_FlushType pre(void *u, OTF2_FileType t, OTF2_LocationRef l, void *c, bool f)
{
	(void)u, (void)t, (void)l, (void)c, (void)f;
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks fcb = { .otf2_pre_flush = pre, .otf2_post_flush = NULL };

static void build(void)
{
	char path[256];
	OTF2_Archive *a;
	OTF2_GlobalDefWriter *g;
	uint64_t m[2] = { 0, 1 };

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/a", dir);
	a = OTF2_Archive_Open(path, "traces", OTF2_FILEMODE_WRITE, 1 << 20, 1 << 22,
	                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	OTF2_Archive_SetFlushCallbacks(a, &fcb, NULL);
	OTF2_Archive_SetSerialCollectiveCallbacks(a);
	OTF2_Archive_OpenEvtFiles(a);
	for (uint64_t l = 0; l < 2; l++) {
		OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(a, l);

		for (uint64_t i = 0; i < 4; i++) {
			uint64_t t = 1000 + i * 100 + l * 7;

			if ((i + l) % 2)
				OTF2_EvtWriter_MpiSend(w, NULL, t, (uint32_t)!l, 0, 0, 8);
			else
				OTF2_EvtWriter_MpiRecv(w, NULL, t + 20, (uint32_t)!l, 0, 0, 8);
		}
		OTF2_Archive_CloseEvtWriter(a, w);
	}
	OTF2_Archive_CloseEvtFiles(a);
	OTF2_Archive_OpenDefFiles(a);
	for (uint64_t l = 0; l < 2; l++) {
		OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(a, l);

		OTF2_DefWriter_WriteClockOffset(d, 1000, 5, 1.0);
		OTF2_Archive_CloseDefWriter(a, d);
	}
	OTF2_Archive_CloseDefFiles(a);
	g = OTF2_Archive_GetGlobalDefWriter(a);
	OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 1000, 1000,
	                                          OTF2_UNDEFINED_TIMESTAMP);
	OTF2_GlobalDefWriter_WriteString(g, 0, "p0");
	OTF2_GlobalDefWriter_WriteString(g, 1, "p1");
	OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	for (uint32_t l = 0; l < 2; l++)
		OTF2_GlobalDefWriter_WriteLocationGroup(g, l, l, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
		                                        OTF2_UNDEFINED_LOCATION_GROUP);
	for (uint32_t l = 0; l < 2; l++)
		OTF2_GlobalDefWriter_WriteLocation(g, l, l, OTF2_LOCATION_TYPE_CPU_THREAD, 4, l);
	OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
	                                OTF2_GROUP_FLAG_NONE, 2, m);
	OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
	                                OTF2_GROUP_FLAG_NONE, 2, m);
	OTF2_GlobalDefWriter_WriteComm(g, 0, 0, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
	OTF2_Archive_Close(a);
	for (int i = 0; i < 6; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/a/%s", dir, files[i]);
		f = fopen(path, "rb");
		if (!f)
			abort();
		orig[i] = malloc(1 << 20);
		origlen[i] = fread(orig[i], 1, 1 << 20, f);
		fclose(f);
	}
}

static void put(int i, const uint8_t *d, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/a/%s", dir, files[i]);
	f = fopen(path, "wb");
	if (f) {
		fwrite(d, 1, n, f);
		fclose(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char anchor[256], out[256];
	const char *p = anchor;
	struct trace_set set;
	int which;

	if (!orig[0])
		build();
	if (size < 1)
		return 0;
	which = data[0] % 6;
	put(which, data + 1, size - 1);
	snprintf(anchor, sizeof(anchor), "%s/a/traces.otf2", dir);
	memset(&set, 0, sizeof(set));
	if (OTF2->read(&p, 1, &set) == 0)
		OTF2->release(&set);
	(void)out;
	put(which, (const uint8_t *)orig[which], origlen[which]);
	return 0;
}
