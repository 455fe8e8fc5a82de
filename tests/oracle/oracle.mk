# oracle.mk: the oracle test's programs (tests/oracle_cli.sh), included by the top-level
# Makefile. The tracer is an LD_PRELOAD object: position-independent, only its interposed
# functions exported, no builtin knowledge of malloc (it defines it).

ORACLE_PROGS := $(B)/oracle/preload_tracer.so $(B)/oracle/preload_exec $(B)/oracle/family_calls

$(B)/oracle/preload_tracer.so: tests/oracle/preload_tracer.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -g -fPIC -shared -fno-builtin -fvisibility=hidden \
		-pthread -o $@ $< -ldl

$(B)/oracle/preload_exec: tests/oracle/preload_exec.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -g -o $@ $<

$(B)/oracle/family_calls: tests/oracle/family_calls.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARN) -O1 -g -pthread -o $@ $<

tests: $(ORACLE_PROGS)

# The stack oracle (tests/oracle_stacks.sh, and the tests of alloctapd --stacks): libdw's own
# unwinder under ptrace, with the daemon's ELF reading and its rule for the allocator's own calls.
$(B)/oracle/stack_oracle: $(B)/obj/tests/oracle/stack_oracle.o $(B)/libat_daemon.a $(B)/libat_lib.a
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(BPF_LDLIBS) $(LDLIBS)

tests: $(B)/oracle/stack_oracle
