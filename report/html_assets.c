/* html_assets.c: the html page's style and script (report/html/page.css, page.js), embedded
 * as they are, each NUL-ended, as rep_html_css and rep_html_js (html.c writes them inline).
 * The Makefile makes this object depend on both files. */
__asm__(".section .rodata\n"
	".global rep_html_css\n"
	".type rep_html_css, @object\n"
	"rep_html_css:\n"
	".incbin \"report/html/page.css\"\n"
	".byte 0\n"
	".global rep_html_js\n"
	".type rep_html_js, @object\n"
	"rep_html_js:\n"
	".incbin \"report/html/page.js\"\n"
	".byte 0\n"
	".previous\n");
