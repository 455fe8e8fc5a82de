/* display.h: every message an alloctap program prints on stderr.
 *
 * Each message is formatted in a buffer on the stack and goes out in one write(2): no stdio
 * and no allocation, so alloctap-replay can report while the allocator under test is loaded,
 * and lines from several threads never interleave. A message longer than AT_DISPLAY_MAX bytes
 * is cut and ends with "...".
 *
 * Levels, the same in every program: 0 silent, 1 errors, 2 (the default) adds warnings and
 * summaries, 3 adds progress and detail, 4 adds debugging. Each -q lowers the level by one,
 * each -v raises it by one.
 *
 * Conventions every module follows (doc/DESIGN.md, decision 10):
 *  - a function that can fail returns 0, or -1 with errno set (or, where errno cannot say
 *    it, a reason in a `why` out-parameter or in the object);
 *  - a function that hands out items one at a time returns 1 (an item), 0 (the end) or -1
 *    (an error, as above);
 *  - a module that computes reports nothing itself: the program that called it prints the
 *    message, naming the file and, for text input, the line; the modules that are a
 *    program's run speak as things happen (decision 10 lists them), only through this
 *    header, naming the program by at_program_name, never in their text;
 *  - exit statuses: 0 success, 1 runtime, input or output error, 2 usage error; a program
 *    whose reader went away (`| head`) ends killed by SIGPIPE, as cat and sort do
 *    (at_write_error, at_exit_status). */
#ifndef ALLOCTAP_DISPLAY_H
#define ALLOCTAP_DISPLAY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define AT_DISPLAY_MAX 4096

enum at_exit_status {
	AT_EXIT_OK = 0,
	AT_EXIT_FAILURE = 1,
	AT_EXIT_USAGE = 2,
};

extern int at_display_level;
/* Set while a progress line (lib/progress.h) stands unfinished on the terminal: the next
 * message erases it first. */
extern int at_display_line_open;
extern const char *at_program_name;

/* Every message goes out with its control characters escaped as "\xHH" (ESC as "\x1b"; C1
 * controls too, byte by byte): a path or a name taken from a trace, a process or a file may
 * hold terminal escapes, and none reaches the terminal raw. Tabs stay; newlines stay in text
 * written as it is (at_display, at_message_append), and are escaped inside the message of an
 * at_say line (at_error, at_warn...), which ends with the one newline at_say adds. */

/* The text as it is (escaped as above), at level l: no program name, no newline added. */
void at_display(int l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void at_vdisplay(int l, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define DISPLAY(...) at_display(0, __VA_ARGS__)
#define DISPLAYLEVEL(l, ...)                                                                   \
	do {                                                                                   \
		if (at_display_level >= (l))                                                   \
			at_display((l), __VA_ARGS__);                                          \
	} while (0)

/* A progress line at level 0: a carriage return, then the text, no newline; the next message
 * erases it first (at_display_line_open). */
void at_display_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "PROGRAM: [FILE:LINE: ]MESSAGE\n" at level l (file NULL: no place). */
void at_say(int l, const char *file, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "PROGRAM: MESSAGE" at level 1; at_error_at adds "FILE:LINE: " before the message. */
#define at_error(...) at_say(1, NULL, 0, __VA_ARGS__)
#define at_error_at(file, line, ...) at_say(1, (file), (line), __VA_ARGS__)
/* "PROGRAM: MESSAGE" at level 2 (warnings) and 3 (-v). */
#define at_warn(...) at_say(2, NULL, 0, __VA_ARGS__)
#define at_verbose(...) at_say(3, NULL, 0, __VA_ARGS__)
/* "PROGRAM: MESSAGE\nTry 'PROGRAM --help'.\n" at level 1; returns AT_EXIT_USAGE. */
int at_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A message built in parts, then written at once (at_message_emit): for lines assembled in
 * loops. Text past AT_DISPLAY_MAX bytes is cut with "...". */
struct at_message {
	char buf[AT_DISPLAY_MAX];
	size_t len;
};

void at_message_append(struct at_message *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Writes m at level l (nothing added: end it with '\n'). */
void at_message_emit(int l, const struct at_message *m);

/* Reports that writing to the output name ("<stdout>" or a path) failed with err, the one way
 * every program says it. Every program ignores SIGPIPE, so a reader that goes away (`| head`
 * has what it wanted) shows as EPIPE: that is no error, nothing is said (one line at -v), the
 * program stops writing and at_exit_status() ends it. Any other error is said at level 1:
 * "PROGRAM: NAME: write error: ERROR". Returns 1 for a reader gone, 0 for an error said. */
int at_write_error(const char *name, int err);

/* Whether at_write_error has seen a reader go away. */
int at_reader_gone(void);

/* The program's exit, its last call (main returns what it returns, after every clean-up):
 * status, or, after at_write_error saw the reader go, the end cat and sort have when their
 * reader goes: killed by SIGPIPE (its default action restored, unblocked and raised; a shell
 * shows 141). Returns only when no reader went away (or the signal could not end the
 * process: then 128 + SIGPIPE). */
int at_exit_status(int status);

/* Applies -q (step -1) or -v (step +1) to the level, which stays within 0 to 4. */
void at_display_step(int step);

#endif
