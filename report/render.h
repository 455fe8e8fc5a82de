/* render.h: what `peak --dot -o FILE` writes, told by FILE's extension.
 *
 * .dot, .gv or no extension: the DOT text itself. Any other extension names a format of
 * Graphviz's dot (`dot -T?` lists them: png, svg, pdf, jpg, ...), which dot renders from the
 * text into FILE (`dot -TEXT -o FILE`). An extension dot does not list, or no dot on PATH when
 * one is needed, is refused before the trace is read (alloctap-report's usage error, exit 2).
 * The extension is taken lowercased (p.PNG renders png). */
#ifndef ALLOCTAP_REPORT_RENDER_H
#define ALLOCTAP_REPORT_RENDER_H

#include <stddef.h>

#define REP_RENDER_FORMAT_MAX 32 /* bytes of a format name, its NUL included */

enum rep_render {
	REP_RENDER_TEXT,    /* the DOT text, as it is */
	REP_RENDER_DOT,     /* rendered by dot in the format the extension names */
	REP_RENDER_UNKNOWN, /* an extension dot does not list */
	REP_RENDER_NO_DOT,  /* a format to render, and no dot on PATH */
};

/* The extension of path's last component (after its last '.', a leading '.' not counted),
 * lowercased into ext (size bytes; "" when there is none). 0, or -1 when it does not fit. */
int rep_render_extension(const char *path, char *ext, size_t size);

/* Whether format is one of the words of list, dot's answer to -T? ("Format: "?" not
 * recognized. Use one of: bmp canon ... xlib"): only the words after "Use one of:" count. */
int rep_render_listed(const char *list, const char *format);

/* Runs `dot -T?` and puts what it says (on stderr) into buf (size bytes, NUL-ended). 0, or -1
 * with errno (ENOENT: no dot on PATH). */
int rep_render_formats(char *buf, size_t size);

/* What -o path is with --dot; format (REP_RENDER_FORMAT_MAX bytes) gets the extension.
 * REP_RENDER_NO_DOT leaves errno as the start of dot failed (ENOENT: not on PATH). */
enum rep_render rep_render_of(const char *path, char *format);

#endif
