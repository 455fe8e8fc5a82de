/* cli.h: the options every alloctap program shares, parsed the same way everywhere.
 *
 * -q/--quiet lowers the message level by one, -v/--verbose raises it by one (lib/display.h),
 * -h/--help prints the program's usage on stdout, --version prints "PROGRAM VERSION". Each
 * program puts AT_CLI_LONGOPTS in its getopt_long table and "qvh" in its short options, and
 * hands every option its own switch does not know to at_cli_option(). */
#ifndef ALLOCTAP_CLI_H
#define ALLOCTAP_CLI_H

#include <getopt.h>

#define AT_VERSION "0.5.0"

enum { AT_OPT_VERSION = 0x1000 };

#define AT_CLI_LONGOPTS                                                                        \
	{ "quiet", no_argument, NULL, 'q' }, { "verbose", no_argument, NULL, 'v' },            \
		{ "help", no_argument, NULL, 'h' },                                            \
		{ "version", no_argument, NULL, AT_OPT_VERSION }

enum at_cli_result {
	AT_CLI_GO_ON = 0,   /* a common option, applied: parsing goes on */
	AT_CLI_EXIT_OK,     /* --help or --version printed: exit 0 */
	AT_CLI_UNKNOWN,     /* not a common option: the caller's usage error */
};

/* Applies the common option c (as getopt_long returned it); usage prints the program's help
 * on stdout. */
enum at_cli_result at_cli_option(int c, void (*usage)(void));

#endif
