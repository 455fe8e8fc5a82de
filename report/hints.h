/* hints.h: what would name a trace's unnamed frames, said once per object after a command's
 * output.
 *
 * An object read for names whose frames stayed unnamed (shown as "object+0xOFFSET") without a
 * debug file gets one warning: how many of its frames stayed unnamed, the path of the debug
 * file that would name them by its build-id (lib/symbolize.h's debug directory), the Debian
 * package that would install it when that can be told (below), and DEBUGINFOD_URLS when it
 * is unset; a fetch from debuginfod that failed is said in the same warning, naming the
 * build-id, the servers and the reason, and alone when the object's frames were all named.
 *
 * The package: `dpkg-query -S PATH` names the binary package that installed the object (with
 * /usr/ dropped when the path is under /usr/bin, /usr/lib... and dpkg knows it by its name
 * before Debian's merged /usr); Debian's automatic debug packages are named after it, PKG-dbgsym,
 * in the debian-debug archive; a few packages ship PKG-dbg instead, so the message says how
 * the name was derived. Nothing is said of a package when dpkg-query is missing, names none,
 * or names several; a path with a wildcard (dpkg-query's patterns) is not asked about. */
#ifndef ALLOCTAP_REPORT_HINTS_H
#define ALLOCTAP_REPORT_HINTS_H

#include <stddef.h>

#include "sites.h"
#include "symbolize.h"

/* The longest package name kept (Debian's names are far shorter). */
#define REP_PACKAGE_MAX 128

/* The one package that owns path in out, the output of `dpkg-query -S PATH` ("pkg[:arch]:
 * PATH" lines, "diversion by ..." lines passed over), into pkg (without its ":arch"): 1; 0
 * when path is empty, no line names it, several packages own it, or a name is not one of
 * Debian's ([a-z0-9][a-z0-9+.-]*, shorter than REP_PACKAGE_MAX). out need not end in NUL (len
 * bytes). */
int rep_dpkg_owner_parse(const char *out, size_t len, const char *path, char *pkg);

/* The warning for object o (without "PROGRAM: "), into buf (cut to size): its length, 0 when
 * there is nothing to say (all its frames named and no fetch failed). debug_dir as
 * lib/symbolize.h's; package: its owner (rep_dpkg_owner_parse) or NULL; urls: DEBUGINFOD_URLS
 * or NULL. */
size_t rep_hint_text(const struct at_object_outcome *o, const char *debug_dir,
		     const char *package, const char *urls, char *buf, size_t size);

/* Says the warning of each object of x's symbolizer (rep_hint_text, asking dpkg-query for
 * its package only when a debug file is wanted), at the warning level. */
void rep_hints_say(const struct rep_sites *x, const char *debug_dir);

#endif
