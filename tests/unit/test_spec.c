/* The sync spec parser: good strings and their canonical form, bad strings and the token
 * they name. */
#include <string.h>

#include "hclock.h"
#include "sync/spec.h"
#include "test.h"

static void good(const char *s, const char *canon)
{
	struct sync_spec *sp;
	char buf[256];
	int rc = sync_spec_parse(s, &sp);
	TEST_CHECK(rc == 0, "'%s' refused: %s", s, hclock_last_error());
	if (rc)
		return;
	sync_spec_format(sp, buf, sizeof(buf));
	TEST_CHECK(!strcmp(buf, canon ? canon : s), "'%s' formats as '%s'", s, buf);
	sync_spec_free(sp);
}

static void bad(const char *s, const char *must_name)
{
	struct sync_spec *sp = (struct sync_spec *)1;
	int rc = sync_spec_parse(s, &sp);
	TEST_CHECK(rc == HCLOCK_EINVAL && sp == NULL, "'%s' accepted", s);
	TEST_CHECK(strstr(hclock_last_error(), must_name) != NULL, "'%s': message '%s' lacks '%s'", s,
	           hclock_last_error(), must_name);
	TEST_CHECK(strchr(hclock_last_error(), '\n') == NULL, "message has several lines");
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
	good("none", NULL);
	good("h2(hca3/500/skampi/20,prop)", NULL);
	good("h3(hca3/500/skampi/20,jk/200/skampi/10,prop)", NULL);
	good("h2(h2(hca3/10/skampi/5,hca2/10/skampi/5),prop)", NULL);
	good("h2(none,none)", NULL);

	bad("", "missing token");
	bad("hca4/100/skampi/10", "'hca4'");
	bad("hca3/100/skampy/10", "'skampy'");
	bad("hca3/1/skampi/10", "NFITPOINTS");
	bad("hca3/x/skampi/10", "'x'");
	bad("hca3/100/skampi/0", "NPINGPONGS");
	bad("hca3/100/skampi", "ends early");
	bad("hca3/100/skampi/10/rx", "'rx'");
	bad("hca3/100/skampi/10/ri/ri", "'ri'");
	bad("hca3/100/skampi/10/span=0", "span");
	bad("hca3/100/skampi/10 ", "'10 '");
	bad("skampi/20", "'20'");
	bad("dunigan/0/20", "'0'");
	bad("dunigan/1", "ends early");
	bad("none/5", "after the end");
	bad("prop", "only inside h2");
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
	return test_end("test_spec");
}
