/* cli.c: the options every alloctap program shares. */
#include <stdio.h>

#include "cli.h"
#include "display.h"

enum at_cli_result at_cli_option(int c, void (*usage)(void))
{
	switch (c) {
	case 'q':
		at_display_step(-1);
		return AT_CLI_GO_ON;
	case 'v':
		at_display_step(+1);
		return AT_CLI_GO_ON;
	case 'h':
		usage();
		return AT_CLI_EXIT_OK;
	case AT_OPT_VERSION:
		printf("%s %s\n", at_program_name, AT_VERSION);
		return AT_CLI_EXIT_OK;
	default:
		return AT_CLI_UNKNOWN;
	}
}
