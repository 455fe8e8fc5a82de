/* fuzz_convert.c: alloctap-munge's event path (munge/convert.c) over an arbitrary input.
 *
 * The first input byte chooses the run, as alloctap-munge's options would:
 *   bit 0  --keep-pointers (events kept as they are, not munged)
 *   bit 1  text output (else an .atz trace, the binary conversion)
 *   bit 2  --strict
 *   bit 3  --stats-every 3
 *   bit 4  --pid 1
 * The rest is the input, text or .atz as lib/source sniffs it. A raw text log munged to text
 * takes the line path in alloctap-munge (fuzz_munge.c), not this one, so it is passed over.
 * The run must end with 0 or 1; when it ends with 0 its output, read back by lib/source, must
 * hold the events the run counted as written (exactly; with --stats-every, the markers it
 * added besides), every one inside the event model, without an error. */
#include "display.h"
#include "fuzz_input.h"
#include "munge/convert.h"
#include "source.h"

/* Reads the output back: the number of events, each checked; aborts on a read error. */
static uint64_t read_back(const uint8_t *out, size_t n)
{
	int fd = fuzz_memfd(out, n);
	struct at_source s;
	struct at_event ev;
	uint64_t events = 0;
	int rc;

	FUZZ_CHECK(at_source_open_fd(&s, fd, "<output>") == 0);
	while ((rc = at_source_next(&s, &ev)) > 0) {
		FUZZ_CHECK(ev.func < AT_FUNC_COUNT);
		events++;
	}
	if (rc < 0)
		fprintf(stderr, "read back: %s\n",
			s.kind == AT_SOURCE_BINARY ? at_atz_reader_message(s.atz) : s.why);
	FUZZ_CHECK(rc == 0);
	at_source_close(&s);
	close(fd);
	return events;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	at_display_level = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0];
	struct at_munge_options mo = { .stats_every = mode & 8 ? 3 : 0,
				       .has_pid = !!(mode & 16), .pid_mag = 1,
				       .replayable_only = !!(mode & 4) };
	struct at_convert_options co = { .binary = !(mode & 2), .strict = !!(mode & 4) };
	struct at_munge m;
	struct at_source src = { .kind = AT_SOURCE_TEXT };
	struct at_sink sink = { .out = { .buf = NULL } };
	struct at_munge_counts c = { 0 };
	int in = fuzz_memfd(data + 1, size - 1), out = fuzz_memfd(NULL, 0);

	at_munge_init(&m, &mo);
	if (at_source_open_fd(&src, in, "<fuzz>") < 0) {
		at_source_close(&src);
		goto done;
	}
	if (src.kind == AT_SOURCE_TEXT && !co.binary && !(mode & 1)) {
		at_source_close(&src);
		goto done;
	}
	FUZZ_CHECK(at_sink_open_fd(&sink, out, "<output>") == 0);
	int rc = at_convert_run(&src, mode & 1 ? NULL : &m, &sink, &co, &c);
	FUZZ_CHECK(rc == 0 || rc == 1);
	FUZZ_CHECK(at_sink_close(&sink) == 0);
	at_source_close(&src);
	if (rc == 0) {
		size_t n;
		uint8_t *written = fuzz_memfd_contents(out, &n);
		uint64_t events = read_back(written, n);
		FUZZ_CHECK(mo.stats_every ? events >= c.written : events == c.written);
		free(written);
	}
done:
	at_munge_free(&m);
	close(in);
	close(out);
	return 0;
}
