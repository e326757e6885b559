/* cmd.h - the subcommands of the hclock tool. Each takes argv[0] = its own name. */
#ifndef HCLOCK_TOOLS_CMD_H
#define HCLOCK_TOOLS_CMD_H

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

int cmd_check(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_imbalance(int argc, char **argv);

#endif
