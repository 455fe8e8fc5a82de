/* frames.h: the frames of a trace's stacks as records, each kept once.
 *
 * Three tables, filled as stack records are symbolized (report/stacks.h):
 *   - frames: a function at a line (function, file, line, whether it was inlined into its
 *     caller, the stack frame's kind; an unnamed frame also its object and address in it);
 *   - locations: one stack frame's value in one process under one mapping (a pc, or another
 *     kind's value) with its frames, innermost first (the functions inlined there, then the
 *     function holding them), as pprof's Location is;
 *   - mappings: the mapping (lib/stack.h) each native location is in.
 * Ids are indexes from 0, in order of first appearance; strings are the symbolizer's, valid as
 * long as it is (the caller keeps it alive as long as the tables). Memory grows with the
 * distinct locations of the trace's stacks, never with the events.
 *
 * A frame's word (rep_frame_word) is what the folded export shows, its function; its located
 * word adds where: "function (file:line)", the file's base name; an unnamed frame is
 * "object+0xaddress" either way. Each location keeps its frames' words, caller first, as the
 * piece of a stack's text it makes. */
#ifndef ALLOCTAP_REPORT_FRAMES_H
#define ALLOCTAP_REPORT_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "folded.h"
#include "stack.h"
#include "symbolize.h"

struct rep_frame {
	const char *function; /* NULL: no name (object and object_address say where) */
	const char *file;     /* the source file as DWARF names it; NULL: no line information */
	uint32_t line;        /* 0: unknown */
	uint32_t decl_line;   /* the line the function is declared at; 0: unknown */
	uint8_t inlined;      /* 1: inlined into the next frame of its location */
	uint8_t kind;         /* enum at_frame_kind */
	const char *object;   /* the object's base name; NULL: in no mapping */
	uint64_t object_address;
};

struct rep_location {
	uint32_t pid;
	uint32_t mapping;      /* 1 + its mapping's id; 0: none (in no mapping, or not native) */
	uint8_t kind;          /* enum at_frame_kind */
	uint64_t value;        /* the stack frame's value: a native frame's pc */
	uint32_t first, count; /* its frames: rep_frames_line(t, first .. first + count - 1),
				* innermost first */
	char *text[2];         /* its frames' words, caller first, ';' between them: folded
				* (functions) and located (rep_frame_word), each word's ';' and
				* control bytes as '_' */
	uint32_t text_len[2];
};

struct rep_frames {
	struct rep_folded *frame_keys, *location_keys, *mapping_keys;
	struct rep_frame *frames;
	size_t nframes, frames_cap;
	struct rep_location *locations;
	size_t nlocations, locations_cap;
	uint32_t *lines; /* frame ids of the locations, each location's in a row */
	size_t nlines, lines_cap;
	struct at_mapping *mappings;
	size_t nmappings, mappings_cap;
};

/* Empty tables: 0, or -1 with errno (ENOMEM). */
int rep_frames_init(struct rep_frames *t);
void rep_frames_free(struct rep_frames *t);

/* The location of one stack frame of process pid (kind and value as in struct at_stack; a
 * return address when return_address is 1), symbolized by z with the mappings it holds now:
 * its id, or -1 with errno (ENOMEM). A value under a mapping that replaced an earlier one is
 * another location than the same value before. */
int64_t rep_frames_locate(struct rep_frames *t, struct at_symbolizer *z, uint32_t pid,
			  unsigned kind, uint64_t value, int return_address);

/* Record by id (valid ids only); pointers valid until the tables change. */
static inline const struct rep_location *rep_frames_location(const struct rep_frames *t,
							     uint32_t id)
{
	return &t->locations[id];
}

/* Frame i (0: the innermost) of location l. */
static inline const struct rep_frame *rep_frames_line(const struct rep_frames *t,
						      const struct rep_location *l, uint32_t i)
{
	return &t->frames[t->lines[l->first + i]];
}

/* The id of frame i of location l, as rep_frames_line. */
static inline uint32_t rep_frames_line_id(const struct rep_frames *t,
					  const struct rep_location *l, uint32_t i)
{
	return t->lines[l->first + i];
}

/* The longest word of a frame kept in a location's text; a longer one is cut. */
#define REP_FRAME_WORD_MAX 1024

/* The word of frame f into buf (NUL-terminated, cut to size): its function, else
 * "OBJECT+0xADDRESS", else "[unknown]"; located 1 adds " (FILE:LINE)" to a named frame with
 * a line, FILE the base name. The length it wanted, as snprintf. */
int rep_frame_word(const struct rep_frame *f, int located, char *buf, size_t size);

/* The base name of a path (after its last '/'). */
const char *rep_base_name(const char *path);

#endif
