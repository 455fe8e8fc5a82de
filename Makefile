# alloctap: top-level Makefile. Quiet unless V=1.
#
#   make            build build/alloctapd, build/alloctap-munge, build/alloctap-replay,
#                   build/alloctap-report
#   make deps       install the Debian packages the build and tests need (skips what is there)
#   make check      deps, build, unit tests (plain and ASan+UBSan), command-line and
#                   integration tests; ends with "check: N passed, M failed, K skipped"
#   make stress     the concurrency stress test STRESS_RUNS (20) times in a row
#   make demo       the main job on a bundled workload
#   make bench      benchmarks, printed as comparison tables
#   make fuzz       each libFuzzer harness (tests/fuzz) for FUZZ_SECONDS (60) seconds
#   make install    PREFIX=/usr/local DESTDIR= (programs, and man pages under PREFIX/share/man)
#
# Layout rule: in lib/, munge/, replay/, report/ and daemon/ (with the daemon's rooms, its
# subfolders), every .c file but main.c goes into the folder's archive build/libat_FOLDER.a; main.c is the program, linked with its folder's archive
# and libat_lib.a. A unit test driver tests/unit/test_FOLDER_MODULE.c links the same two
# archives (a lib driver only libat_lib.a), so the linker takes only the code under test.
# The daemon's one module that touches the kernel is daemon/bpf.c (its skeleton, libbpf, the
# maps); the drivers named in FAKE_BPF_DRIVERS link tests/unit/fake_bpf.o (not a driver: its
# name is no test_*) before the archives instead. Being an object on the command line, the
# fake defines every function of daemon/bpf.h before the archive is searched, so the linker
# never takes daemon/bpf.o from libat_daemon.a (a function the fake lacked would pull it in and
# fail the link with duplicate symbols): those drivers run the daemon's core without root.
# Only the daemon needs clang and bpftool (for the BPF skeleton) and libbpf.

# The machine's architecture. What the daemon's C code knows of it is in daemon/arch/$(ARCH)/,
# behind daemon/arch/arch.h (argument registers, probe sites, direct calls, the address space);
# what the build knows is that folder's arch.mk (the BPF target, for the BPF program's register
# access; the multiarch tuple, AT_MULTIARCH in C, for the library paths of the daemon, of replay
# and of a fixture below); the BPF program's registers and unwind rules are bpf/'s. ARCH is what
# `uname -m` says; a machine without a folder is refused.
ARCH   := $(shell uname -m)
ARCHES := $(patsubst daemon/arch/%/arch.mk,%,$(wildcard daemon/arch/*/arch.mk))
ifneq ($(filter $(ARCH),$(ARCHES)),)
include daemon/arch/$(ARCH)/arch.mk
else ifneq ($(MAKECMDGOALS),clean)
$(error alloctap has no port to $(ARCH) (uname -m): it runs on $(ARCHES), the folders of daemon/arch/)
endif

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DESTDIR ?=
CC      ?= cc
CLANG   ?= clang
BPFTOOL ?= bpftool
CFLAGS  ?= -O2 -g

B        := build
WARN     := -Wall -Wextra -Werror
# The daemon's rooms (daemon/README.md): each folder's headers are found by name; of the
# architecture folders, only this machine's is built.
DAEMON_DIRS := daemon daemon/trace daemon/procs daemon/probes daemon/stacks daemon/python daemon/arch \
	       daemon/arch/$(ARCH)
CPPFLAGS += -D_GNU_SOURCE -I. -Ilib -Ibpf -I$(B) $(addprefix -I,$(DAEMON_DIRS)) \
	    -DAT_MULTIARCH='"$(ARCH_MULTIARCH)"'
BASE_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -MMD -MP
SAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDLIBS      := -llz4 -lm -lpthread
BPF_LDLIBS  := -lbpf -ldw -lelf -lz
# lib/symbolize.c (libdwfl): alloctap-report and the tests of the symbolizer and the report
DW_LDLIBS   := -ldw -lelf -lz -lstdc++

V ?= 0
ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2);
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:
.PHONY: all deps check stress unit-tests tests demo bench install uninstall clean

DEB_PACKAGES := gcc g++ make graphviz golang-go chromium heaptrack heaptrack-gui xvfb xdotool libbpf-dev bpftool clang llvm libelf-dev libdw-dev libdebuginfod-dev debuginfod zlib1g-dev \
	liblz4-dev libcmocka-dev bpftrace libc6-dbg libjemalloc2 libjemalloc-dev libtcmalloc-minimal4 \
	libmimalloc2.0 lz4 python3 procps sqlite3 git xz-utils bsdutils util-linux libllvm14 libllvm15 \
	gdb tmux

MODULES  := lib munge replay daemon report
mod_srcs  = $(filter-out $(1)/main.c,$(if $(filter daemon,$(1)),\
	$(foreach d,$(DAEMON_DIRS),$(wildcard $(d)/*.c)),$(wildcard $(1)/*.c)))
PROGRAMS := $(B)/alloctap-munge $(B)/alloctap-replay $(B)/alloctap-report
ifneq ($(wildcard daemon/main.c),)
PROGRAMS += $(B)/alloctapd
endif
# A unit driver of another architecture's module (daemon/arch/OTHER/MODULE.c) is not built here.
OTHER_ARCH_MODULES := $(basename $(notdir $(filter-out daemon/arch/$(ARCH)/%,\
			$(wildcard daemon/arch/*/*.c))))
UNIT_SRCS  := $(filter-out $(patsubst %,tests/unit/test_daemon_%.c,$(OTHER_ARCH_MODULES)),\
		$(wildcard tests/unit/test_*.c))
UNIT_MISNAMED := $(filter-out $(foreach m,$(MODULES),tests/unit/test_$(m)_%.c),$(UNIT_SRCS))
ifneq ($(UNIT_MISNAMED),)
$(error $(UNIT_MISNAMED): a unit test driver is named tests/unit/test_FOLDER_MODULE.c, \
	FOLDER one of $(MODULES))
endif
FAKE_BPF_DRIVERS := test_daemon_window test_daemon_targets test_daemon_session test_daemon_stacks
UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS)) \
	      $(patsubst tests/unit/%.c,$(B)/asan/tests/%,$(UNIT_SRCS))
FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURES     := $(patsubst tests/fixtures/%.c,$(B)/fixtures/%,$(FIXTURE_SRCS))
FIXTURES     += $(patsubst tests/fixtures/%.cc,$(B)/fixtures/%,$(wildcard tests/fixtures/*.cc))
FIXTURES     += $(B)/fixtures/alloc_sequence_jemalloc $(B)/fixtures/alloc_sequence_tcmalloc
BENCH_SRCS   := $(wildcard bench/*.c)
BENCH_PROGS  := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))

all: $(PROGRAMS)

# --- the BPF program and its skeleton ------------------------------------------------------
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(B)/%.skel.h,$(BPF_SRCS))

$(B)/%.bpf.o: bpf/%.bpf.c $(shell find bpf -name '*.h') lib/functions.h lib/frames.h
	$(call say,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH_BPF_TARGET) -Wall -Werror \
		-I/usr/include/$(shell $(CC) -dumpmachine) -Ibpf -c $< -o $@

$(B)/%.skel.h: $(B)/%.bpf.o
	$(call say,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $* > $@

# --- objects, archives, programs, tests: one template per build variant ---------------------
# $(1): output folder, $(2): extra compiler and linker flags
define VARIANT
$(1)/obj/%.o: %.c
	$$(call say,CC,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$$(CC) $$(CPPFLAGS) $$(BASE_CFLAGS) $(2) -c $$< -o $$@

# only the daemon's objects wait for the skeleton (-MMD records who includes it)
$(patsubst %.c,$(1)/obj/%.o,$(call mod_srcs,daemon) daemon/main.c $(wildcard tests/unit/test_daemon_*.c)): | $(BPF_SKELS)

$(foreach m,$(MODULES),
$(1)/libat_$(m).a: $$(patsubst %.c,$(1)/obj/%.o,$$(call mod_srcs,$(m))) $(1)/obj/empty.o
	$$(call say,AR,$$@)
	$(Q)rm -f $$@
	$(Q)ar rcs $$@ $$^
)

$(1)/tests/test_lib_%: $(1)/obj/tests/unit/test_lib_%.o $(1)/libat_lib.a
	$$(call say,LD,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$$(CC) $(2) $$(LDFLAGS) -o $$@ $$^ -lcmocka $$(LDLIBS)

$(foreach m,munge replay daemon report,
$(1)/tests/test_$(m)_%: $(1)/obj/tests/unit/test_$(m)_%.o $(1)/libat_$(m).a $(1)/libat_lib.a
	$$(call say,LD,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$$(CC) $(2) $$(LDFLAGS) -o $$@ $$^ -lcmocka $(if $(filter daemon,$(m)),$$(BPF_LDLIBS)) $(if $(filter report,$(m)),$$(DW_LDLIBS)) $$(LDLIBS)
)

$(addprefix $(1)/tests/,$(FAKE_BPF_DRIVERS)): $(1)/tests/%: $(1)/obj/tests/unit/%.o \
		$(1)/obj/tests/unit/fake_bpf.o $(1)/libat_daemon.a $(1)/libat_lib.a
	$$(call say,LD,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$$(CC) $(2) $$(LDFLAGS) -o $$@ $$^ -lcmocka $$(BPF_LDLIBS) $$(LDLIBS)

$(1)/tests/test_lib_symbolize: LDLIBS += $$(DW_LDLIBS)
# a record copy made to fail (test_record_copy_fails)
$(1)/tests/test_lib_sink: LDFLAGS += -Wl,--wrap=at_sink_record_copy
endef

$(eval $(call VARIANT,$(B),))
$(eval $(call VARIANT,$(B)/asan,$(SAN_FLAGS)))

$(B)/obj/empty.o $(B)/asan/obj/empty.o:
	$(Q)mkdir -p $(@D)
	$(Q)echo 'typedef int at_empty_unit;' | $(CC) -x c -c - -o $@

$(B)/alloctap-%: $(B)/obj/%/main.o $(B)/libat_%.a $(B)/libat_lib.a
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/alloctap-report: LDLIBS += $(DW_LDLIBS)
# The html page's style and script, embedded by html_assets.c (.incbin: not seen by -MMD).
$(B)/obj/report/html_assets.o $(B)/asan/obj/report/html_assets.o: report/html/page.css report/html/page.js

$(B)/alloctapd: $(B)/obj/daemon/main.o $(B)/libat_daemon.a $(B)/libat_lib.a
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(BPF_LDLIBS) $(LDLIBS)

# Fixtures: built without optimisation surprises and, for *_static.c, statically linked.
$(B)/fixtures/%: tests/fixtures/%.c $(wildcard tests/fixtures/*.h)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARN) -O1 -g -pthread -Itests/fixtures \
		$(if $(filter %_static,$*),-static) -o $@ $< $(if $(filter %_static,$*),,-ldl)

# The sequence in programs linked against another allocator (not preloaded): the loader finds
# its malloc before the C library's.
$(B)/fixtures/alloc_sequence_jemalloc: tests/fixtures/alloc_sequence.c $(wildcard tests/fixtures/*.h)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARN) -O1 -g -pthread -Itests/fixtures -o $@ $< -ljemalloc

$(B)/fixtures/alloc_sequence_tcmalloc: tests/fixtures/alloc_sequence.c $(wildcard tests/fixtures/*.h)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARN) -O1 -g -pthread -Itests/fixtures -o $@ $< \
		/usr/lib/$(ARCH_MULTIARCH)/libtcmalloc_minimal.so.4

# C++ fixtures: statically linked, so that every object of a stack (libstdc++, the C library)
# has its symbols for the symbolizer's tests.
$(B)/fixtures/%: tests/fixtures/%.cc
	$(call say,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -std=gnu++17 $(WARN) -O1 -g -static -o $@ $<

# Unwinding fixtures: -O2 without frame pointers, as distributions build. unwind_chain calls
# through unwind_chain_lib.so, the library half of the same file.
UNWIND_FIXTURE_CFLAGS := -std=gnu11 $(WARN) -O2 -fomit-frame-pointer -g -pthread

$(B)/fixtures/unwind_%: tests/fixtures/unwind_%.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) $(if $(filter static %_static,$*),-static) -o $@ $<

$(B)/fixtures/unwind_chain_lib.so: tests/fixtures/unwind_chain.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -DUNWIND_CHAIN_LIBRARY -shared -fPIC \
		-Wl,-soname,unwind_chain_lib.so -o $@ $<

$(B)/fixtures/unwind_chain: tests/fixtures/unwind_chain.c $(B)/fixtures/unwind_chain_lib.so
	$(call say,CC,$@)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -o $@ $< $(B)/fixtures/unwind_chain_lib.so \
		-Wl,-rpath,'$$ORIGIN'

# unwind_ctor is linked with unwind_ctor_lib.so, whose constructor allocates.
$(B)/fixtures/unwind_ctor_lib.so: tests/fixtures/unwind_ctor.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -DUNWIND_CTOR_LIBRARY -shared -fPIC \
		-Wl,-soname,unwind_ctor_lib.so -o $@ $<

$(B)/fixtures/unwind_ctor: tests/fixtures/unwind_ctor.c $(B)/fixtures/unwind_ctor_lib.so
	$(call say,CC,$@)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -o $@ $< $(B)/fixtures/unwind_ctor_lib.so \
		-Wl,-rpath,'$$ORIGIN'

# unwind_gold is linked by GNU gold (binutils' ld.gold).
$(B)/fixtures/unwind_gold: tests/fixtures/unwind_gold.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -fuse-ld=gold -o $@ $<

# unwind_dlopen opens unwind_dlopen_lib.so, the library half of the same file, at run time.
$(B)/fixtures/unwind_dlopen_lib.so: tests/fixtures/unwind_dlopen.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -DUNWIND_DLOPEN_LIBRARY -shared -fPIC \
		-Wl,-soname,unwind_dlopen_lib.so -o $@ $<

$(B)/fixtures/unwind_dlopen: tests/fixtures/unwind_dlopen.c $(B)/fixtures/unwind_dlopen_lib.so
	$(call say,CC,$@)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -o $@ $< -ldl

$(B)/bench/%: bench/%.c $(B)/libat_lib.a
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -std=gnu11 $(WARN) -O2 -g -pthread -MMD -MP -o $@ $< $(B)/libat_lib.a $(LDLIBS)

# unwind_tables builds the daemon's unwind tables: the daemon's library too.
$(B)/bench/unwind_tables: bench/unwind_tables.c $(B)/libat_daemon.a $(B)/libat_lib.a
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -std=gnu11 $(WARN) -O2 -g -pthread -MMD -MP -o $@ $< $(B)/libat_daemon.a $(B)/libat_lib.a $(BPF_LDLIBS) $(LDLIBS)

unit-tests: $(UNIT_TESTS)
tests: all unit-tests $(FIXTURES) $(B)/bench/atz_tool
include tests/oracle/oracle.mk

# --- the jobs ---------------------------------------------------------------------------------
# $(call install_missing,PACKAGES): apt-get installs those of the Debian packages not installed.
define install_missing
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
			|| echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "  DEPS    apt-get install" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PACKAGES))

check: deps
	@$(MAKE) --no-print-directory tests
	@tests/run.sh $(UNIT_TESTS) $(sort $(filter-out tests/run.sh,$(wildcard tests/*.sh)))

# The concurrency stress test, STRESS_RUNS times in a row (real BPF).
STRESS_RUNS ?= 20
stress: deps
	@$(MAKE) --no-print-directory tests
	@tests/run.sh $(foreach i,$(shell seq $(STRESS_RUNS)),tests/daemon_stress.sh)

demo: deps
	@$(MAKE) --no-print-directory all
	@demo/run.sh

bench: deps
	@$(MAKE) --no-print-directory all $(FIXTURES) $(BENCH_PROGS)
	@bench/run.sh

MANDIR  ?= $(PREFIX)/share/man
MAN1    := $(wildcard doc/man/*.1)
MAN8    := $(wildcard doc/man/*.8)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(PROGRAMS) $(DESTDIR)$(BINDIR)
	install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8

uninstall:
	rm -f $(patsubst $(B)/%,$(DESTDIR)$(BINDIR)/%,$(PROGRAMS))
	rm -f $(patsubst doc/man/%,$(DESTDIR)$(MANDIR)/man1/%,$(MAN1))
	rm -f $(patsubst doc/man/%,$(DESTDIR)$(MANDIR)/man8/%,$(MAN8))

clean:
	rm -rf $(B)

include tests/fuzz/fuzz.mk

-include $(shell find $(B) -name '*.d' 2>/dev/null)
