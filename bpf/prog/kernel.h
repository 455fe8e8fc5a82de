/* prog/kernel.h: the parts of the kernel's structures the BPF program reads, as CO-RE views (each
 * field's offset is relocated against the running kernel's BTF at load). Included by
 * alloctap.bpf.c only (clang's BPF target). */
#ifndef ALLOCTAP_BPF_KERNEL_H
#define ALLOCTAP_BPF_KERNEL_H

/* The parts of the kernel's structures the program reads (CO-RE: offsets from the running
 * kernel's BTF): a task's signal masks, its address space's sequence; a VMA's file and
 * place. */
struct at_sigset___at {
	unsigned long sig[1];
};
struct sigpending___at {
	struct at_sigset___at signal;
} __attribute__((preserve_access_index));
struct signal_struct___at {
	struct sigpending___at shared_pending;
} __attribute__((preserve_access_index));
struct task_struct___at {
	struct at_sigset___at blocked;
	struct sigpending___at pending;
	struct signal_struct___at *signal;
} __attribute__((preserve_access_index));
struct at_atomic___at {
	int counter;
};

struct seqcount___at {
	unsigned sequence;
};
struct mm_struct___at {
	struct seqcount___at mm_lock_seq;
} __attribute__((preserve_access_index));
struct task_struct___mm {
	struct mm_struct___at *mm;
} __attribute__((preserve_access_index));
struct inode___at {
	unsigned long i_ino;
} __attribute__((preserve_access_index));
struct file___at {
	struct inode___at *f_inode;
} __attribute__((preserve_access_index));
struct refcount___at {
	struct at_atomic___at refs;
} __attribute__((preserve_access_index));
struct vm_area_struct___at {
	unsigned long vm_start;
	unsigned long vm_end;
	struct mm_struct___at *vm_mm;
	unsigned long vm_pgoff;
	struct file___at *vm_file;
	struct refcount___at vm_refcnt; /* 6.15 on: 0 once out of the address space's tree */
} __attribute__((preserve_access_index));
/* Before 6.15, with per-VMA locks. */
struct vm_area_struct___detached {
	_Bool detached;
} __attribute__((preserve_access_index));

/* Just what allocator_lookup reads of a task, relocated against the kernel's BTF (CO-RE). */
struct task_struct___parent {
	struct task_struct___parent *real_parent;
	int tgid;
} __attribute__((preserve_access_index));

#endif
