/* usage.h: alloctap-report's --help text. */
#ifndef ALLOCTAP_REPORT_USAGE_H
#define ALLOCTAP_REPORT_USAGE_H

/* Prints the help on standard output. */
void rep_usage(void);

#endif
