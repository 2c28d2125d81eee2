#!/usr/bin/env python3
"""The VM test tier (ctest -L vm): test cases on Debian 12's 6.1 kernel.

This machine's kernel lacks the dummy, vlan (8021q), ipvlan and vrf link types
and bridge VLAN filtering, and no physical NIC a test may move. This runner
boots Debian 12's cloud kernel under QEMU (KVM when /dev/kvm opens, else TCG),
with one virtio NIC (GUEST_NIC), and an initramfs it builds from:

  - busybox-static (the guest's /init is a busybox sh script, tests/vm/init),
  - the kernel's networking modules (the ones the tests need are loaded with
    busybox insmod in dependency order; the kernel autoloads any other through
    kmod's modprobe, and the guest reports which),
  - our plugins and the upstream Go plugins (/usr/lib/cni), both static,
  - the test binaries and the programs the tests and plugins run (ip, nft,
    iptables-nft, socat, ...), each with its shared libraries and the loader,
    at the paths they have on this machine.

The guest runs every test case that tests/vm/guest-tests selects, one process
per case, and prints one line per case and a final line on the serial console
(QEMU's stdout), which this runner parses. It fails on any failed case, on a
missing final line (guest crash, timeout) and on a count that does not match
the list it sent.

The kernel package (linux-image-6.1.0-<abi>-cloud-amd64, the newest that
apt-cache knows) is fetched with `apt-get download` into <work-dir>/kernel and
unpacked there with `dpkg -x`; it is never installed on the machine, and a
later run reuses it without downloading.
"""

import argparse
import os
import re
import select
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

# Modules loaded at boot, in this order after their dependencies: the link
# types and devices the tests create, nftables with NAT and conntrack
# (portmap, ipMasq, macspoofchk; nft_compat and xt_* for iptables-nft), and
# bandwidth's TBF + ingress + u32/mirred redirect to an ifb. "module args".
LOAD = [
    "dummy", "veth", "macvlan", "ipvlan", "vrf", "8021q", "bridge", "tun",
    "ifb numifbs=0",  # no default ifb0/ifb1: bandwidth tests make their own
    "nf_tables", "nf_conntrack", "nf_nat", "nf_conntrack_netlink",
    "nft_chain_nat", "nft_nat", "nft_masq", "nft_redir", "nft_ct", "nft_compat",
    "nft_fib_inet", "nft_fib_ipv4", "nft_fib_ipv6", "nft_reject_inet", "nft_limit",
    "xt_nat", "xt_MASQUERADE", "xt_addrtype", "xt_comment", "xt_conntrack", "xt_mark",
    "xt_multiport", "xt_tcpudp",
    "sch_tbf", "sch_ingress", "cls_u32", "cls_matchall", "act_mirred",
    # Bridged traffic through netfilter, as on this machine (CONFIG_BRIDGE_NETFILTER=y,
    # bridge-nf-call-iptables=1) and on most Kubernetes nodes. The portmap case
    # "TCP UDP and IPv6 mappings ..." needs it: with the nftables backend
    # (upstream's rules: only a container's own hairpin is masqueraded) another
    # container on the same bridge reaches a mapped host port only when the
    # bridged reply is un-NATed by conntrack.
    "br_netfilter",
    # The guest's one physical NIC (GUEST_NIC): host-device's case of a device
    # the kernel gives back when a namespace dies (it destroys virtual ones).
    "virtio_pci", "virtio_net",
]
# Every module under these directories of kernel/ (and what they depend on) is
# in the guest, for the kernel to autoload.
MODULE_DIRS = [
    "net/netfilter", "net/ipv4/netfilter", "net/ipv6/netfilter", "net/bridge",
    "net/sched", "net/8021q", "net/802", "net/llc", "drivers/net/ipvlan",
    "drivers/net/vxlan",
]
MODULE_FILES = [
    "drivers/net/dummy.ko", "drivers/net/veth.ko", "drivers/net/macvlan.ko",
    "drivers/net/macvtap.ko", "drivers/net/tap.ko", "drivers/net/vrf.ko",
    "drivers/net/ifb.ko", "drivers/net/tun.ko", "drivers/net/geneve.ko",
    "drivers/virtio/virtio_pci.ko", "drivers/net/virtio_net.ko",
]
# A virtio NIC on a hub of its own (it carries no traffic; QEMU warns "hub 0
# is not connected to host network"), with the MAC that
# tests/netns/host_device_test.cc looks it up by.
GUEST_NIC = ["-netdev", "hubport,id=nic0,hubid=0",
             "-device", "virtio-net-pci,netdev=nic0,mac=52:54:00:c0:ff:ee"]
# Programs the tests and plugins run (looked up in the tests' PATH), copied to
# the same paths in the guest with their libraries.
PROGRAMS = [
    "ip", "bridge", "tc", "nft", "ping", "socat", "iperf3", "strace",
    "iptables", "ip6tables", "iptables-save", "ip6tables-save",
    "iptables-restore", "ip6tables-restore",
    "iptables-nft", "ip6tables-nft", "iptables-nft-save", "ip6tables-nft-save",
    "iptables-nft-restore", "ip6tables-nft-restore",
    "nsenter", "unshare", "timeout", "env", "echo", "cat", "sleep", "true", "false",
    "sysctl", "sh", "dash", "kmod", "modprobe", "lsmod", "flock",
]
# Data files and directories the programs read.
DATA = [
    "/etc/iproute2", "/usr/share/iproute2", "/usr/lib/x86_64-linux-gnu/xtables",
    "/etc/protocols", "/etc/services", "/etc/ethertypes", "/etc/nsswitch.conf",
    "/etc/passwd", "/etc/group",
]
UPSTREAM_DIR = "/usr/lib/cni"
TOOL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
BUSYBOX = "/bin/busybox"
KERNEL_PACKAGE = re.compile(r"linux-image-6\.1\.0-(\d+)-cloud-amd64")


def log(msg):
    print(f"vm: {msg}", flush=True)


def run(argv, **kw):
    return subprocess.run(argv, check=True, text=True, capture_output=True, **kw).stdout


# ---- the kernel ---------------------------------------------------------------


def kernel_package():
    """The newest linux-image-6.1.0-<abi>-cloud-amd64 that apt-cache knows, or None."""
    try:
        names = run(["apt-cache", "pkgnames", "linux-image-6.1.0-"]).split()
    except (OSError, subprocess.CalledProcessError):
        return None
    found = [(int(m.group(1)), n) for n in names if (m := KERNEL_PACKAGE.fullmatch(n))]
    return max(found)[1] if found else None


def fetch_kernel(cache: Path):
    """Returns the unpacked kernel package's root, downloading it once."""
    cache.mkdir(parents=True, exist_ok=True)
    package = kernel_package()
    if package is None:
        cached = sorted((d for d in cache.iterdir() if (d / ".unpacked").exists()),
                        key=lambda d: int(KERNEL_PACKAGE.fullmatch(d.name).group(1)))
        if not cached:
            sys.exit("vm: apt-cache knows no linux-image-6.1.0-*-cloud-amd64 and none is cached "
                     f"in {cache} (Debian 12 apt sources needed: apt-get update)")
        log(f"apt-cache knows no 6.1 cloud kernel; using the cached {cached[-1].name}")
        return cached[-1]
    root = cache / package
    if (root / ".unpacked").exists():
        return root
    log(f"fetching {package} into {cache} (once)")
    shutil.rmtree(root, ignore_errors=True)
    for old in cache.glob("*.deb"):
        old.unlink()
    argv = ["apt-get", "download", "-q"]
    if os.geteuid() == 0:
        # apt drops to _apt for downloads, which cannot write into the build tree.
        argv += ["-o", "APT::Sandbox::User=root"]
    subprocess.run(argv + [package], check=True, cwd=cache)
    deb = next(cache.glob(f"{package}_*.deb"))
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    deb.unlink()
    subprocess.run(["depmod", "-b", str(root), kernel_version(root)], check=True)
    (root / ".unpacked").write_text(package + "\n")
    for other in cache.iterdir():  # an older ABI the archive has replaced
        if other.is_dir() and other != root:
            shutil.rmtree(other)
    return root


def kernel_version(root: Path):
    versions = [d.name for d in (root / "lib/modules").iterdir()]
    if len(versions) != 1:
        sys.exit(f"vm: expected one kernel version in {root}/lib/modules, found {versions}")
    return versions[0]


def stage_modules(kroot: Path, version: str, stage: Path):
    """Copies the modules the guest gets into stage/lib/modules/<version>
    (with modules.dep etc. from depmod) and returns the boot load list:
    "path/in/modules/dir.ko args" lines, dependencies first."""
    src = kroot / "lib/modules" / version
    deps = {}  # "kernel/x/y.ko" -> its dependencies, transitively
    for line in (src / "modules.dep").read_text().splitlines():
        mod, _, rest = line.partition(":")
        deps[mod] = rest.split()
    by_name = {Path(m).name[:-3].replace("-", "_"): m for m in deps}
    builtin = {Path(m).name[:-3].replace("-", "_")
               for m in (src / "modules.builtin").read_text().split()}

    wanted = set(f"kernel/{f}" for f in MODULE_FILES)
    for d in MODULE_DIRS:
        wanted |= {m for m in deps if m.startswith(f"kernel/{d}/")}
    missing = [m for m in wanted if m not in deps]
    if missing:
        sys.exit(f"vm: modules not in {package_name(kroot)}: {missing}")
    closure = set(wanted)
    for m in wanted:
        closure |= set(deps[m])

    out = stage / "lib/modules" / version
    shutil.rmtree(stage, ignore_errors=True)
    for m in closure:
        (out / m).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / m, out / m)
    for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        shutil.copyfile(src / f, out / f)
    subprocess.run(["depmod", "-b", str(stage), version], check=True)

    load, seen = [], set()
    for entry in LOAD:
        name, _, args = entry.partition(" ")
        key = name.replace("-", "_")
        if key in builtin:
            continue
        if key not in by_name:
            sys.exit(f"vm: module {name} is neither a module nor built into {version}")
        mod = by_name[key]
        # A module's transitive dependency list is longer than any of its
        # dependencies' lists, so ordering by its length loads deps first.
        for dep in sorted(deps[mod], key=lambda d: (len(deps[d]), d)) + [mod]:
            if dep not in seen:
                seen.add(dep)
                load.append(f"{dep} {args}".rstrip() if dep == mod else dep)
    return load


def package_name(kroot: Path):
    return (kroot / ".unpacked").read_text().strip()


# ---- the initramfs ------------------------------------------------------------


class Archive:
    """The guest's files: path in the guest -> ("dir",) | ("file", host path,
    mode) | ("symlink", target) | ("data", bytes, mode). Written as a newc
    cpio archive (what the kernel unpacks as an initramfs)."""

    def __init__(self):
        self.entries = {}

    def dir(self, path):
        path = path.rstrip("/") or "/"
        while path != "/":
            if path in self.entries:
                return
            self.entries[path] = ("dir",)
            path = os.path.dirname(path)

    def put(self, path, entry):
        self.dir(os.path.dirname(path))
        self.entries[path] = entry

    def file(self, path, host, mode=None):
        self.put(path, ("file", str(host), mode if mode is not None else os.stat(host).st_mode & 0o7777))

    def data(self, path, content: bytes, mode=0o644):
        self.put(path, ("data", content, mode))

    def host_path(self, path):
        """Adds a host path at the same place, following symlinks (each link
        is kept as a link, and its target added too)."""
        path = os.path.normpath(path)
        parent = os.path.realpath(os.path.dirname(path))
        real = os.path.join(parent, os.path.basename(path))
        if real in self.entries:
            return
        st = os.lstat(real)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(real)
            self.put(real, ("symlink", target))
            if os.path.exists(os.path.join(parent, target)):
                self.host_path(os.path.join(parent, target))
        elif stat.S_ISDIR(st.st_mode):
            self.dir(real)
            for name in sorted(os.listdir(real)):
                self.host_path(os.path.join(real, name))
        else:
            self.file(real, real)

    def program(self, path):
        """A host program at its own path, with its shared libraries and loader."""
        self.host_path(path)
        for lib in shared_libraries(os.path.realpath(path)):
            self.host_path(lib)

    def write(self, out: Path):
        ino = 1
        with open(out, "wb") as f:
            def header(name, mode, size, nlink=1):
                nonlocal ino
                b = name.encode()
                fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(b) + 1, 0]
                f.write(b"070701" + b"".join(b"%08x" % v for v in fields) + b + b"\0")
                f.write(b"\0" * (-(110 + len(b) + 1) % 4))
                ino += 1

            def body(data):
                f.write(data)
                f.write(b"\0" * (-len(data) % 4))

            for path in sorted(self.entries):
                name = path.lstrip("/")
                kind = self.entries[path]
                if kind[0] == "dir":
                    header(name, stat.S_IFDIR | 0o755, 0, 2)
                elif kind[0] == "symlink":
                    target = kind[1].encode()
                    header(name, stat.S_IFLNK | 0o777, len(target))
                    body(target)
                else:
                    data = Path(kind[1]).read_bytes() if kind[0] == "file" else kind[1]
                    header(name, stat.S_IFREG | kind[2], len(data))
                    body(data)
            header("TRAILER!!!", 0, 0, 1)
            f.write(b"\0" * (-f.tell() % 512))


def shared_libraries(path):
    """The absolute paths of the libraries ldd lists for `path` (none when static)."""
    r = subprocess.run(["ldd", path], text=True, capture_output=True)
    if r.returncode != 0:
        return []  # "not a dynamic executable" (static, static-pie)
    libs = []
    for line in r.stdout.splitlines():
        m = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
        if m:
            libs.append(m.group(1))
        elif "not found" in line:
            sys.exit(f"vm: {path}: {line.strip()}")
    return libs


def which(name):
    found = shutil.which(name, path=TOOL_PATH)
    if not found:
        sys.exit(f"vm: {name} is not installed (scripts/bootstrap installs it)")
    return found


def escape_spec(name):
    """A Catch test spec that selects exactly the case `name`."""
    return re.sub(r"([\\,\[\]])", r"\\\1", name)


def list_cases(binary, specs):
    """Names of the cases of `binary` that any of `specs` selects, in order, once."""
    names = []
    for spec in specs:
        # Its exit status is the number of cases listed.
        r = subprocess.run([binary, spec, "--list-test-names-only"], text=True, capture_output=True)
        if r.returncode < 0 or r.stderr.strip():
            sys.exit(f"vm: {binary} {spec} --list-test-names-only: {r.stderr.strip() or r.returncode}")
        out = r.stdout
        for name in out.splitlines():
            if name.strip() and name not in names:
                names.append(name)
    return names


def build_initramfs(args, kroot, version, work: Path):
    a = Archive()
    for d in ("/proc", "/sys", "/dev", "/run", "/tmp", "/root", "/vm", "/var/lib", "/etc"):
        a.dir(d)
    # Merged /usr: /bin, /sbin, /lib, /lib64 are links as on this machine.
    for top in ("/bin", "/sbin", "/lib", "/lib64"):
        if os.path.islink(top):
            a.put(top, ("symlink", os.readlink(top)))
    a.file("/vm/busybox", BUSYBOX, 0o755)  # its applets go into /vm/bb at boot
    a.file("/init", args.init, 0o755)

    # Modules, staged with the depmod files that describe just them.
    stage = work / "modules"
    load = stage_modules(kroot, version, stage)
    moddir = stage / "lib/modules" / version
    for p in sorted(moddir.rglob("*")):
        if p.is_file():
            a.file(f"/usr/lib/modules/{version}/{p.relative_to(moddir)}", p, 0o644)
    a.data("/vm/modules.load", ("\n".join(load) + "\n").encode())

    for name in PROGRAMS:
        a.program(which(name))
    for path in DATA:
        if os.path.exists(path):
            a.host_path(path)
    for lib in Path("/usr/lib/x86_64-linux-gnu/xtables").glob("*.so"):
        for dep in shared_libraries(str(lib)):
            a.host_path(dep)
    # nft's library, which the tests' nft listings dlopen (tests/support/libnftables.cc).
    for lib in shared_libraries(which("nft")):
        a.host_path(lib)

    for plugin in args.plugin:
        for lib in shared_libraries(plugin):  # none for static PIEs (CNI_STATIC_PLUGINS)
            a.host_path(lib)
        a.file(f"/vm/plugins/{Path(plugin).name}", plugin, 0o755)
    if os.path.isdir(UPSTREAM_DIR):
        for p in sorted(Path(UPSTREAM_DIR).iterdir()):
            a.program(str(p))

    # The test binaries and the cases the guest runs.
    by_name = {Path(b).name: b for b in args.test_binary}
    specs = {}
    for line in Path(args.guest_tests).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        binary, _, spec = line.partition(" ")
        alone = spec.startswith("alone ")
        if alone:
            spec = spec[len("alone "):]
        if binary not in by_name:
            sys.exit(f"vm: {args.guest_tests}: {binary} is not a --test-binary")
        specs.setdefault((binary, alone), []).append(spec.strip())
    cases = {False: [], True: []}  # alone? -> "binary TAB spec TAB name" lines
    seen = set()
    # "alone" lines first: a case they select runs alone even when another line selects it too.
    for (binary, alone), binary_specs in sorted(specs.items(), key=lambda kv: not kv[0][1]):
        host = by_name[binary]
        if f"/vm/bin/{binary}" not in a.entries:
            for lib in shared_libraries(host):
                a.host_path(lib)
            a.file(f"/vm/bin/{binary}", host, 0o755)
        for name in list_cases(host, binary_specs):
            if (binary, name) in seen or (args.cases and not re.search(args.cases, name)):
                continue
            seen.add((binary, name))
            cases[alone].append(f"/vm/bin/{binary}\t{escape_spec(name)}\t{name}")
    # The host's netns run leaves [vm] cases out: every one must run here.
    for binary, host in by_name.items():
        left_out = [n for n in list_cases(host, ["[vm]"]) if (binary, n) not in seen]
        if left_out and not args.cases:
            sys.exit(f"vm: {args.guest_tests} leaves out [vm] cases of {binary}: {left_out}")
    count = len(cases[False]) + len(cases[True])
    if count == 0:
        sys.exit(f"vm: {args.guest_tests} selects no test case")
    for alone, name in ((False, "/vm/cases"), (True, "/vm/cases.alone")):
        a.data(name, "".join(line + "\n" for line in cases[alone]).encode())
    a.data("/vm/jobs", f"{args.jobs}\n".encode())

    if args.guest_script:
        a.file("/vm/guest-script", args.guest_script, 0o755)
    for program in args.program:  # e.g. the benchmark driver (scripts/bench.d/links)
        for lib in shared_libraries(program):
            a.host_path(lib)
        a.file(f"/vm/bin/{Path(program).name}", program, 0o755)

    out = work / "initramfs.cpio"
    a.write(out)
    return out, count, len(load)


# ---- the boot ----------------------------------------------------------------


def kvm_opens():
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
        return True
    except OSError:
        return False


class Guest:
    """One boot: QEMU's serial console parsed line by line."""

    def __init__(self, accel):
        self.accel = accel
        self.boot_s = None  # host seconds from QEMU's start to the guest's /init
        self.wall_s = 0.0
        self.results = {"PASS": [], "FAIL": []}
        self.final = None
        self.module_failures = []
        self.timed_out = False


def run_guest(args, kroot, version, initramfs, accel, boot_deadline):
    """Boots once; gives up when the guest has not reached /init after
    `boot_deadline` seconds or not finished after args.timeout."""
    if accel == "kvm":
        # arch-capabilities off: nested KVM refuses to set that MSR.
        cpu = ["-accel", "kvm", "-cpu", "host,-arch-capabilities", "-smp", "2"]
    else:
        cpu = ["-accel", "tcg", "-smp", "1"]
    argv = ["qemu-system-x86_64", *cpu, "-m", str(args.memory), "-nodefaults", "-no-user-config",
            "-display", "none", "-serial", "stdio", "-no-reboot", *GUEST_NIC,
            "-kernel", str(kroot / "boot" / f"vmlinuz-{version}"), "-initrd", str(initramfs),
            "-append", "console=ttyS0 quiet panic=-1"]
    g = Guest(accel)
    serial_log = Path(args.work_dir) / "serial.log"
    start = time.monotonic()
    with open(serial_log, "w") as slog, subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as qemu:
        buf = b""
        while True:
            elapsed = time.monotonic() - start
            left = (boot_deadline if g.boot_s is None else args.timeout) - elapsed
            if left <= 0:
                g.timed_out = True
                qemu.kill()
                break
            ready, _, _ = select.select([qemu.stdout], [], [], min(left, 5))
            if not ready:
                continue
            chunk = os.read(qemu.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace").rstrip("\r")
                slog.write(line + "\n")
                print(line, flush=True)
                if line.startswith("VM-BOOT ") and g.boot_s is None:
                    g.boot_s = time.monotonic() - start
                elif line.startswith("VM-TEST "):
                    parts = line.split(" ", 3)
                    if len(parts) == 4 and parts[1] in g.results:
                        g.results[parts[1]].append(parts[3])
                elif line.startswith("VM-MODULE-FAIL "):
                    g.module_failures.append(line)
                elif line.startswith("VM-RESULT "):
                    g.final = line
        qemu.wait()
    if buf:
        print(buf.decode(errors="replace"), flush=True)
    g.wall_s = time.monotonic() - start
    return g


def boot(args, kroot, version, initramfs, expected):
    """Boots with KVM when /dev/kvm opens and the guest reaches /init in
    args.kvm_boot_timeout seconds (nested KVM can open and still crawl), else
    with TCG; CNI_VM_ACCEL=kvm|tcg forces one. Returns True when every case passed."""
    forced = os.environ.get("CNI_VM_ACCEL", "")
    if forced not in ("", "kvm", "tcg"):
        sys.exit(f"vm: CNI_VM_ACCEL={forced}: kvm or tcg")
    accels = [forced] if forced else (["kvm", "tcg"] if kvm_opens() else ["tcg"])
    for accel in accels:
        log(f"booting {version} with {accel.upper()} "
            f"({'2 vCPUs' if accel == 'kvm' else '1 vCPU'}, {args.memory} MiB) for {expected} test cases")
        fallback = accel == "kvm" and not forced
        g = run_guest(args, kroot, version, initramfs, accel,
                      args.kvm_boot_timeout if fallback else args.timeout)
        if g.boot_s is None and fallback:
            log(f"KVM: /dev/kvm opens but the guest did not reach /init in {args.kvm_boot_timeout} s "
                "(nested virtualization without usable acceleration?): booting with TCG instead")
            continue
        break
    serial_log = Path(args.work_dir) / "serial.log"

    ok = True
    passed, failed = len(g.results["PASS"]), len(g.results["FAIL"])
    if g.boot_s is not None:
        log(f"accel {g.accel}; /init reached {g.boot_s:.1f} s after QEMU started; guest ran {g.wall_s:.1f} s")
    else:
        log(f"accel {g.accel}; the guest never reached /init ({g.wall_s:.1f} s)")
    if g.timed_out:
        log(f"FAILED: timed out (serial log: {serial_log})")
        ok = False
    if g.final is None:
        log(f"FAILED: no final VM-RESULT line: the guest crashed or stopped (serial log: {serial_log})")
        ok = False
    elif g.final != f"VM-RESULT passed={passed} failed={failed}":
        log(f"FAILED: final line '{g.final}' does not match the {passed + failed} VM-TEST lines")
        ok = False
    if passed + failed != expected:
        log(f"FAILED: {expected} test cases sent, {passed + failed} reported")
        ok = False
    if g.module_failures:
        log(f"FAILED: {len(g.module_failures)} modules did not load")
        ok = False
    if failed:
        log(f"FAILED in the guest ({failed}): " + "; ".join(g.results["FAIL"]))
        ok = False
    log(f"{passed} passed, {failed} failed of {expected}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work-dir", required=True, help="build tree directory for the kernel cache and the initramfs")
    p.add_argument("--guest-tests", required=True, help="the cases to run: '<binary> <Catch spec>' lines")
    p.add_argument("--init", required=True, help="the guest's /init")
    p.add_argument("--test-binary", action="append", default=[], help="a Catch test binary (repeatable)")
    p.add_argument("--plugin", action="append", default=[], help="a built plugin binary (repeatable)")
    p.add_argument("--memory", type=int, default=2048, help="guest memory in MiB")
    p.add_argument("--timeout", type=int, default=900, help="seconds for the whole boot and run")
    p.add_argument("--kvm-boot-timeout", type=int, default=10,
                   help="seconds for a KVM guest to reach /init before TCG is used instead")
    p.add_argument("--jobs", type=int, default=2, help="cases the guest runs side by side")
    p.add_argument("--cases", default="", help="only the selected cases whose name matches this regex")
    p.add_argument("--guest-script", help="a sh script the guest runs before the cases (debugging, benchmarks)")
    p.add_argument("--program", action="append", default=[],
                   help="another program the guest script needs, put in /vm/bin (repeatable)")
    p.add_argument("--fetch-only", action="store_true", help="fetch and unpack the kernel, then stop")
    args = p.parse_args()

    start = time.monotonic()
    work = Path(args.work_dir)
    kroot = fetch_kernel(work / "kernel")
    version = kernel_version(kroot)
    if args.fetch_only:
        log(f"kernel {version} in {kroot}")
        return 0
    for path in [*args.plugin, *args.test_binary, BUSYBOX]:
        if not os.access(path, os.X_OK):
            sys.exit(f"vm: {path} is missing: build first (ninja -C build), install busybox-static")
    if shutil.which("qemu-system-x86_64") is None:
        sys.exit("vm: qemu-system-x86_64 is not installed (scripts/bootstrap installs qemu-system-x86)")
    initramfs, expected, modules = build_initramfs(args, kroot, version, work)
    log(f"initramfs {initramfs.stat().st_size >> 20} MiB, {modules} modules to load, "
        f"built in {time.monotonic() - start:.1f} s")
    ok = boot(args, kroot, version, initramfs, expected)
    log(f"tier {'passed' if ok else 'FAILED'} in {time.monotonic() - start:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
