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
 * before Debian's merged /usr), `dpkg-query -W` its source package; Debian names debug
 * packages BIN-dbgsym (the automatic ones, in the debian-debug archive), SRC-dbg or BIN-dbg
 * (python3.11-dbg, libc6-dbg), so those are asked of `apt-cache policy` (once for every
 * object: it reads apt's lists whole, about a second), and the message names the first apt
 * knows, or says it knows none. Nothing is said of a package when dpkg-query is
 * missing, names none, or names several; a path with a wildcard (dpkg-query's patterns) is
 * not asked about. */
#ifndef ALLOCTAP_REPORT_HINTS_H
#define ALLOCTAP_REPORT_HINTS_H

#include <stddef.h>

#include "sites.h"
#include "symbolize.h"

/* The longest package name kept (Debian's names are far shorter). */
#define REP_PACKAGE_MAX 128

/* The longest debug package name: a package's and "-dbgsym". */
#define REP_DEBUG_MAX (REP_PACKAGE_MAX + 8)

/* The Debian package that installed an object, and its debug package. */
struct rep_package {
	char name[REP_PACKAGE_MAX];       /* the binary package (dpkg-query -S) */
	char tried[3 * REP_DEBUG_MAX];    /* the debug packages asked: "a-dbgsym, b-dbg" */
	char debug[REP_DEBUG_MAX];        /* the first of them apt knows; "": none */
};

/* The one package that owns path in out, the output of `dpkg-query -S PATH` ("pkg[:arch]:
 * PATH" lines, "diversion by ..." lines passed over), into pkg (without its ":arch"): 1; 0
 * when path is empty, no line names it, several packages own it, or a name is not one of
 * Debian's ([a-z0-9][a-z0-9+.-]*, shorter than REP_PACKAGE_MAX). out need not end in NUL (len
 * bytes). */
int rep_dpkg_owner_parse(const char *out, size_t len, const char *path, char *pkg);

/* Whether apt knows package name by the output of `apt-cache policy NAME...` (len bytes; a
 * "NAME:" line, then indented lines, one "  Candidate: VERSION" but "(none)"): 1 or 0. */
int rep_apt_policy_knows(const char *out, size_t len, const char *name);

/* The warning for object o (without "PROGRAM: "), into buf (cut to size): its length, 0 when
 * there is nothing to say (all its frames named and no fetch failed). debug_dir as
 * lib/symbolize.h's; package: the object's, or NULL; urls: DEBUGINFOD_URLS or NULL. */
size_t rep_hint_text(const struct at_object_outcome *o, const char *debug_dir,
		     const struct rep_package *package, const char *urls, char *buf, size_t size);

/* Says the warning of each object of x's symbolizer (rep_hint_text, asking dpkg-query and
 * apt-cache for its package only when a debug file is wanted), at the warning level. */
void rep_hints_say(const struct rep_sites *x, const char *debug_dir);

#endif
