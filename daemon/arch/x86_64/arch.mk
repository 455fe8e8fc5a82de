# daemon/arch/x86_64/arch.mk: what the build needs to know of x86-64 (included by the Makefile
# when `uname -m` says x86_64).
#
#   ARCH_BPF_TARGET  libbpf's name of the architecture (__TARGET_ARCH_x86: bpf_tracing.h's
#                    register access for the BPF program)
#   ARCH_MULTIARCH   Debian's multiarch tuple: libraries are in /lib/TUPLE and /usr/lib/TUPLE
#                    (the daemon's library search, replay's allocators; C code sees it as
#                    AT_MULTIARCH)
ARCH_BPF_TARGET := x86
ARCH_MULTIARCH  := x86_64-linux-gnu
