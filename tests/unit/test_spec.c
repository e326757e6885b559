/* The sync spec parser: good strings and their canonical form, bad strings and the token
 * they name. */
#include <string.h>

#include "hclock.h"
#include "clock/clock.h"
#include "sync/sync.h"
#include "test.h"

static void good(const char *s, const char *canon)
{
	hclock_sync *sp = NULL;
	int rc = hclock_sync_create(s, &sp);
	TEST_CHECK(rc == 0, "'%s' refused: %s", s, hclock_last_error());
	if (rc)
		return;
	TEST_CHECK(!strcmp(hclock_sync_spec(sp), canon ? canon : s), "'%s' formats as '%s'", s,
	           hclock_sync_spec(sp));
	hclock_sync_free(sp);
}

static void bad(const char *s, const char *must_name)
{
	hclock_sync *sp = (hclock_sync *)1;
	int rc = hclock_sync_create(s, &sp);
	TEST_CHECK(rc == HCLOCK_EINVAL && sp == NULL, "'%s' accepted", s);
	TEST_CHECK(strstr(hclock_last_error(), must_name) != NULL, "'%s': message '%s' lacks '%s'", s,
	           hclock_last_error(), must_name);
	TEST_CHECK(strchr(hclock_last_error(), '\n') == NULL, "message has several lines");
}

/* The tables drive the error lines: an unknown name lists every member of its family. */
static void tables_drive_errors(void)
{
	hclock_sync *sp = NULL;
	hclock_clock *c = NULL;
	char line[512];
	hclock_sync_create("nosuchalg/1", &sp);
	snprintf(line, sizeof(line), "%s", hclock_last_error());
	for (size_t i = 0; sync_types[i]; i++)
		TEST_CHECK(strstr(line, sync_types[i]->name) != NULL, "'%s' missing from '%s'",
		           sync_types[i]->name, line);
	hclock_sync_create("hca3/10/nosuchoff/5", &sp);
	snprintf(line, sizeof(line), "%s", hclock_last_error());
	for (size_t i = 0; offset_types[i]; i++)
		TEST_CHECK(strstr(line, offset_types[i]->name) != NULL, "'%s' missing from '%s'",
		           offset_types[i]->name, line);
	TEST_CHECK(hclock_base_create("sundial", NULL, &c) == HCLOCK_EINVAL && !c, "sundial");
	snprintf(line, sizeof(line), "%s", hclock_last_error());
	for (size_t i = 0; clock_types[i]; i++)
		if (clock_types[i]->help && !clock_types[i]->emulation)
			TEST_CHECK(strstr(line, clock_types[i]->name) != NULL, "'%s' missing from '%s'",
			           clock_types[i]->name, line);
	/* every algorithm's usage parses once its placeholders are filled in */
	for (size_t i = 0; sync_types[i]; i++)
		TEST_CHECK(sync_types[i]->usage && sync_types[i]->help &&
		           !strncmp(sync_types[i]->usage, sync_types[i]->name,
		                    strlen(sync_types[i]->name)), "%s: usage/help", sync_types[i]->name);
}

int main(void)
{
	good("hca3/1000/skampi/100", NULL);
	good("jk/500/rtt/20", NULL);
	good("hca3/500/skampi/20/ri", NULL);
	good("hca2/10/min/5/span=0.3", NULL);
	good("hca/10/min/5/span=0.25/ri", "hca/10/min/5/ri/span=0.25");
	good("skampi/skampi/20", NULL);
	good("skampi/rtt/7", NULL);
	good("dunigan/1/20", NULL);
	good("dunigan/0.5/3", NULL);
	good("dunigan/500ms/3", "dunigan/0.5/3");
	good("hca3/10/skampi/5/span=300ms", "hca3/10/skampi/5/span=0.3");
	good("hca3/10/skampi/5/span=1m", "hca3/10/skampi/5/span=60");
	good("none", NULL);
	good("h2(hca3/500/skampi/20,prop)", NULL);
	good("h3(hca3/500/skampi/20,jk/200/skampi/10,prop)", NULL);
	good("h2(h2(hca3/10/skampi/5,hca2/10/skampi/5),prop)", NULL);
	good("h2(none,none)", NULL);

	bad("", "missing token");
	bad("hca4/100/skampi/10", "'hca4'");
	bad("hca3/100/skampy/10", "'skampy'");
	bad("hca3/1/skampi/10", "NFIT");
	bad("hca3/x/skampi/10", "'x'");
	bad("hca3/100/skampi/0", "NPINGPONGS");
	bad("hca3/100/skampi", "ends early");
	bad("hca3/100/skampi/10/rx", "'rx'");
	bad("hca3/100/skampi/10/ri/ri", "'ri'");
	bad("hca3/100/skampi/10/span=0", "span");
	bad("hca3/100/skampi/10/span=3x", "span");
	bad("dunigan/1/20/x", "after the end");
	bad("hca3/100/skampi/10 ", "'10 '");
	bad("skampi/20", "'20'");
	bad("dunigan/0/20", "'0'");
	bad("dunigan/1", "ends early");
	bad("none/5", "after the end");
	bad("prop", "lower level inside h2");
	bad("cont(prop)", "not prop (a lower level of h2/h3 only)");
	bad("cont(none)", "needs a one-shot sync inside");
	bad("cont(cont(hca3/10/skampi/5))", "not cont");
	bad("h2(hca3/10/skampi/5", "ends early");
	bad("h2(,prop)", "missing token");
	bad("h4(hca3/10/skampi/5,prop)", "'h4'");
	bad("h2(hca3/10/skampi/5,prop,prop)", "unexpected ','");
	bad("h3(hca3/10/skampi/5,prop)", "expected ','");
	bad("h2(hca3/10/skampi/5,prop))", "after the end");
	bad("h2(h2(h2(h2(h2(h2(h2(h2(h2(h2(none,none),none),none),none),none),none),none),none),none),none)",
	    "deeper");

	/* the public entry point refuses prop at the inter-node level */
	hclock_sync *s = NULL;
	TEST_CHECK(hclock_sync_create("h2(prop,prop)", &s) == HCLOCK_EINVAL && !s, "prop inter");
	TEST_CHECK(hclock_sync_create("hca3/10/skampi/5", &s) == 0, "%s", hclock_last_error());
	TEST_CHECK(s && !strcmp(hclock_sync_spec(s), "hca3/10/skampi/5"), "canonical spec");
	hclock_sync_free(s);
	tables_drive_errors();
	return test_end("test_spec");
}
