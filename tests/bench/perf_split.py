#!/usr/bin/env python3
"""Where a plugin process's time goes, next to a no-op's (scripts/bench.d/floor's
CNI_BENCH_SPLIT=1).

Reads `perf script -F comm,pid,ip,sym,dso` of a `perf record -a -g` run and gives
each sample to one category: a sample in the kernel by the system call or
exception it came in by (a page fault taken while parsing JSON is a page fault),
one in user space by the function it is in. Prints, per category, microseconds
per process for each command name given (samples / processes / frequency), then
the second name's excess over the first.

    perf script ... | perf_split.py --freq HZ [--processes N] NOOP_COMM PLUGIN_COMM

perf's sampling itself slows every process down, the no-op's too: the numbers say
how a process's time divides, and the excess's split, not what a call costs (the
floor rows time that without perf).
"""
import argparse
import collections
import re
import sys

# A sample in the kernel goes by how the kernel was entered: the system call
# (the first frame under the syscall entry code, whose wrappers are often
# inlined, hence the loose patterns) or the exception. The kernel's unwinder
# gives full chains.
SYSCALL_ENTRY = {"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "x64_sys_call"}
SYSCALLS = [
    ("kernel: exec", r"execve|bprm_execve"),
    ("kernel: process exit", r"exit_group"),
    ("kernel: thread start and end", r"^__x64_sys_exit$|clone|futex"),
    ("kernel: mmap, brk", r"mmap|munmap|mprotect|brk|madvise"),
    ("kernel: netlink", r"^__(x64_)?sys_(sendto|recvfrom|sendmsg|recvmsg|socket|bind|getsockname)|sockopt"),
    ("kernel: setns", r"setns"),
    ("kernel: files, /proc, pipes", r"open|read|write|close|stat|rename|unlink|mkdir|chmod|readlink|ioctl|flock|getdents|lseek"),
]
ENTRY_EXIT = "kernel: system call entry and exit"
EXCEPTIONS = [
    ("kernel: page faults", r"^(asm_exc_page_fault|exc_page_fault)$"),
    ("kernel: thread start and end", r"^(ret_from_fork_asm|ret_from_fork)$"),
]
# A sample in user space goes by the function it is in (the plugins are built
# without frame pointers, so their call chains cannot be trusted).
USER = [
    ("user: glibc's CPU probing", r"^(init_cpu_features|update_active|dl_init_cacheinfo|init_cacheinfo|handle_intel|handle_amd|intel_check_word|get_common_cache_info|get_common_indices|get_extended_indices)"),
    ("user: static-PIE relocation", r"^_dl_relocate_static_pie$"),
    ("user: libstdc++'s locale and streams set-up", r"^(std::(locale|ios_base|ctype|__timepunct|moneypunct|numpunct|messages|collate|codecvt|time_get|time_put|money_get|money_put|num_get|num_put|__facet_shims|__cxx11::(moneypunct|numpunct|messages|collate|time_get))|btowc|wctob|__ctype_init)"),
    ("user: malloc and free", r"^(malloc|free|calloc|realloc|_int_malloc|_int_free|_int_realloc|sysmalloc|malloc_consolidate|unlink_chunk|tcache_init|operator new|operator delete|cfree)"),
    ("user: JSON (nlohmann)", r"nlohmann::"),
]
LOADER = "user: dynamic loader (ld.so)"
OTHER_KERNEL = "kernel: other (interrupts, scheduling, ...)"
OTHER_USER = "user: the rest (the plugin's own code, libc, Abseil, libnl)"
SYSCALL_RX = [(name, re.compile(rx)) for name, rx in SYSCALLS]
EXCEPTION_RX = [(name, re.compile(rx)) for name, rx in EXCEPTIONS]
USER_RX = [(name, re.compile(rx)) for name, rx in USER]
# The order of the printed rows (kernel first; a name listed twice prints once).
ORDER = list(dict.fromkeys([n for n, _ in SYSCALLS + EXCEPTIONS] + [ENTRY_EXIT, OTHER_KERNEL] +
                           [n for n, _ in USER] + [LOADER, OTHER_USER]))


def category(frames):
    """frames: innermost first, (symbol, dso)."""
    sym, dso = frames[0]
    if "kernel" in dso:
        kernel = [s for s, d in reversed(frames) if "kernel" in d]  # outermost first
        if kernel and kernel[0] in SYSCALL_ENTRY:
            handler = next((s for s in kernel if s not in SYSCALL_ENTRY), None)
            if handler is None:
                return ENTRY_EXIT
            return next((name for name, rx in SYSCALL_RX if rx.search(handler)), OTHER_KERNEL)
        for s in kernel:
            for name, rx in EXCEPTION_RX:
                if rx.search(s):
                    return name
        return OTHER_KERNEL
    for name, rx in USER_RX:
        if rx.search(sym):
            return name
    return LOADER if "ld-linux" in dso else OTHER_USER


def read_samples(stream, wanted):
    per = {c: collections.Counter() for c in wanted}
    pids = {c: set() for c in wanted}
    comm = pid = None
    frames = []

    def flush():
        if comm in per and frames:
            per[comm][category(frames)] += 1
            pids[comm].add(pid)

    for line in stream:
        if not line.strip():
            flush()
            comm, frames = None, []
        elif line[0] not in " \t":
            parts = line.split()
            comm, pid, frames = parts[0], parts[1], []
        else:
            parts = line.split(None, 2)
            if len(parts) >= 2:
                frames.append((parts[1].split("+")[0], parts[2] if len(parts) > 2 else ""))
    flush()
    return per, pids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--freq", type=float, required=True)
    # How many processes of each name ran. Counting the names' process IDs
    # would also count the plugin's children between fork and exec (they
    # carry its name until exec: an IPAM plugin's), whose samples do belong
    # to the call.
    ap.add_argument("--processes", type=int, default=0)
    ap.add_argument("base")
    ap.add_argument("plugin")
    a = ap.parse_args()
    per, pids = read_samples(sys.stdin, [a.base, a.plugin])
    us = {}
    for comm in (a.base, a.plugin):
        n = a.processes or max(len(pids[comm]), 1)
        us[comm] = {k: v / n / a.freq * 1e6 for k, v in per[comm].items()}
    names = [n for n in ORDER if any(n in us[c] for c in us)]
    print(f"    {'us per process':44s} {'no-op':>7s} {'plugin':>7s} {'above':>7s}")
    totals = collections.Counter()
    for n in names:
        b, p = us[a.base].get(n, 0.0), us[a.plugin].get(n, 0.0)
        side = n.split(":")[0]
        totals[side + " b"] += b
        totals[side + " p"] += p
        print(f"    {n:44s} {b:7.0f} {p:7.0f} {p - b:+7.0f}")
    for side in ("kernel", "user"):
        b, p = totals[side + " b"], totals[side + " p"]
        print(f"    {side + ', all':44s} {b:7.0f} {p:7.0f} {p - b:+7.0f}")
    print(f"    (process IDs seen: {len(pids[a.base])} no-op, {len(pids[a.plugin])} plugin;"
          f" processes run: {a.processes or 'as many'})")


if __name__ == "__main__":
    main()
