# tests/fuzz/fuzz.mk: libFuzzer harnesses, included by the top-level Makefile.
#
#   make fuzz           install what fuzzing needs (missing packages only), build the
#                       harnesses, replay tests/fuzz/regressions, then run each harness
#                       FUZZ_SECONDS (60); fails naming the reproducer of any finding
#   make fuzz-build     build the harnesses and their seed corpus in build/fuzz/
#   make fuzz-regress   replay the regression inputs and the seeds once (a few seconds)
#   FUZZ_TARGETS=...    a subset of: source text munge atz elfsym x86 convert replay report hints
#                       unwind eh_frame table_cache python
#
# A finding, once fixed, leaves its minimised input in tests/fuzz/regressions/NAME/, which
# both targets replay before anything else. The corpus grows in build/fuzz/corpus/NAME.
#
# The library sources are compiled again with clang and the sanitizers (into build/fuzz/obj),
# not taken from the plain archives, so that libFuzzer sees their coverage.

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

FZ := $(B)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 $(WARN) -O1 -g $(FUZZ_SAN) -MMD -MP
FUZZ_LDLIBS  := -ldw -lelf -lz -llz4 -lm -lpthread -lstdc++
FUZZ_SRCS    := $(wildcard lib/*.c) $(filter-out munge/main.c,$(wildcard munge/*.c)) \
		$(filter-out report/main.c,$(wildcard report/*.c)) \
		$(filter-out replay/main.c,$(wildcard replay/*.c)) \
		daemon/probes/elfsym.c daemon/probes/probe_site.c $(wildcard daemon/arch/$(ARCH)/*.c) daemon/stacks/unwind_table.c \
		daemon/stacks/unwind_walk.c daemon/stacks/eh_frame.c daemon/stacks/table_cache.c \
		$(wildcard daemon/python/*.c)
FUZZ_BINS    := $(patsubst %,$(FZ)/fuzz_%,$(FUZZ_TARGETS))

# clang's libFuzzer runtime (libclang_rt.fuzzer) is in libclang-rt-N-dev on Debian 12.
FUZZ_CLANG_MAJOR = $(or $(firstword $(subst ., ,$(shell $(CLANG) -dumpversion 2>/dev/null))),14)
FUZZ_DEB_PACKAGES = clang libclang-rt-$(FUZZ_CLANG_MAJOR)-dev gcc libelf-dev libdw-dev libdebuginfod-dev liblz4-dev lz4 \
	zlib1g-dev python3

.PHONY: fuzz fuzz-deps fuzz-build fuzz-regress

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build
	@tests/fuzz/run.sh $(FZ) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-regress: fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build
	@tests/fuzz/run.sh $(FZ) 0 $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_BINS) $(FZ)/seeds/.built
	@:

fuzz-deps:
	$(call install_missing,$(FUZZ_DEB_PACKAGES))

# Library objects: coverage instrumentation without libFuzzer's main.
$(FZ)/obj/%.o: %.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FZ)/libat_fuzz.a: $(patsubst %.c,$(FZ)/obj/%.o,$(FUZZ_SRCS))
	$(call say,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(FZ)/fuzz_%: $(FZ)/obj/tests/fuzz/fuzz_%.o $(FZ)/libat_fuzz.a
	$(call say,LD,$@)
	$(Q)$(CLANG) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LDLIBS)

$(FZ)/seeds/.built: tests/fuzz/seeds.sh $(wildcard tests/data/*/*) tests/unit/test_daemon_x86_insn.c \
		$(B)/alloctap-munge
	$(Q)tests/fuzz/seeds.sh $(FZ)/seeds $(B)/alloctap-munge >/dev/null
	$(Q)touch $@
