"""Limits per student: memory, CPU and processes, in a cgroup per student written through the cgroup file system.

Each student's server and every kernel it starts run in `<the hub's own cgroup>/attnlib-hub/<system user>`, so a
student who allocates 20 GB loses only their own kernel (the kernel's OOM killer acts inside the group), a
training loop on every core gets `HUB_CPU_LIMIT` cores, and a fork loop stops at `HUB_PIDS_LIMIT` tasks.

Why the file system and not `systemd-run --scope`: the scope needs systemd as PID 1 (containers and many
teaching VMs have none), while the file system is there wherever cgroups are, v1 (one folder per controller,
as on our machines) or v2 (one unified tree). The groups go below the hub's own cgroup, so a hub that is itself
limited (a container, a systemd service) stays within its limits. Where no cgroup can be created, `Tree.reason`
says why; then only the process count is limited (RLIMIT_NPROC per system user) and the launcher says what is lost.
Standard library only.
"""
from __future__ import annotations

import dataclasses
import os
import re
import resource
from pathlib import Path

from roster_settings import RosterError

MOUNT = Path("/sys/fs/cgroup")
GROUP = "attnlib-hub"
PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "cpu", "cpuacct", "pids")  # cpuacct only measures (CPU time per student)


def parse_bytes(text: str, variable: str = "HUB_MEM_LIMIT") -> int:
    """Bytes from '1.5G', '1536M', '800m', '2g' or a plain number; RosterError naming the variable otherwise."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)[bB]?\s*", text or "")
    if not m:
        raise RosterError(f"{variable} must be a size such as 1.5G or 800M, got {text!r}")
    value = float(m.group(1)) * 1024 ** " KMG".index(m.group(2).upper() or " ")
    if value < 64 * 1024 ** 2:
        raise RosterError(f"{variable} must be at least 64M (a kernel with PyTorch needs about 300M), got {text!r}")
    return int(value)


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one student's server and kernels may use together."""

    mem_bytes: int = int(1.5 * 1024 ** 3)
    cpu_cores: float = 1.0
    max_tasks: int = 512  # processes and threads (a kernel with PyTorch has about 20)

    @classmethod
    def from_env(cls, env: dict | None = None) -> "Limits":
        """Limits from HUB_MEM_LIMIT (1.5G), HUB_CPU_LIMIT (1 core), HUB_PIDS_LIMIT (512)."""
        env = os.environ if env is None else env
        mem = parse_bytes(env["HUB_MEM_LIMIT"]) if env.get("HUB_MEM_LIMIT", "").strip() else cls.mem_bytes
        try:
            cpu = float(env.get("HUB_CPU_LIMIT", "").strip() or cls.cpu_cores)
            tasks = int(env.get("HUB_PIDS_LIMIT", "").strip() or cls.max_tasks)
        except ValueError:
            raise RosterError("HUB_CPU_LIMIT must be a number of cores (e.g. 1 or 0.5) and HUB_PIDS_LIMIT a "
                              "whole number") from None
        if not 0.05 <= cpu <= 1024 or tasks < 32:
            raise RosterError(f"HUB_CPU_LIMIT must be 0.05-1024 cores (got {cpu}) and HUB_PIDS_LIMIT at least 32 "
                              f"(got {tasks})")
        return cls(mem, cpu, tasks)

    @property
    def mem_text(self) -> str:
        """The memory limit as the student reads it, e.g. '1.5 GB'."""
        return f"{self.mem_bytes / 1024 ** 3:.3g} GB" if self.mem_bytes >= 1024 ** 3 else \
            f"{self.mem_bytes / 1024 ** 2:.0f} MB"

    def as_env(self) -> dict[str, str]:
        return {"HUB_MEM_LIMIT": str(self.mem_bytes), "HUB_CPU_LIMIT": f"{self.cpu_cores:g}",
                "HUB_PIDS_LIMIT": str(self.max_tasks)}


def _own_paths() -> dict[str, str]:
    """controller -> this process's cgroup path, from /proc/self/cgroup ('' is the v2 tree)."""
    found = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            found[c] = path
    return found


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


@dataclasses.dataclass
class Tree:
    """The class's cgroups: `version` 1 or 2 and the base folder per controller, or `reason` why there are none."""

    version: int = 0
    bases: dict[str, Path] = dataclasses.field(default_factory=dict)  # controller ('' on v2) -> .../attnlib-hub
    reason: str = ""

    @classmethod
    def detect(cls, mount: Path = MOUNT) -> "Tree":
        """Create (or reuse) attnlib-hub below this process's cgroup; v1 if its controllers are mounted, else v2."""
        if os.geteuid() != 0:
            return cls(reason="the hub is not root, so it cannot create cgroups")
        try:
            own = _own_paths()
        except OSError as exc:
            return cls(reason=f"cannot read /proc/self/cgroup ({exc.strerror})")
        try:
            if all((mount / c / "cgroup.procs").exists() for c in ("memory", "cpu", "pids")):
                bases = {}
                for c in V1_CONTROLLERS:
                    if (mount / c).is_dir() and c in own:
                        bases[c] = mount / c / own[c].lstrip("/") / GROUP
                        bases[c].mkdir(exist_ok=True)
                return cls(version=1, bases=bases)
            if (mount / "cgroup.controllers").exists():
                missing = {"memory", "cpu", "pids"} - set((mount / "cgroup.controllers").read_text().split())
                if missing:
                    return cls(reason=f"the cgroup v2 tree has no {', '.join(sorted(missing))} controller")
                parent = mount / own.get("", "/").lstrip("/")
                base = parent / GROUP
                base.mkdir(exist_ok=True)
                # v2 lets a group hand controllers to its children only if it holds no process itself
                _write(parent / "cgroup.subtree_control", "+memory +cpu +pids")
                _write(base / "cgroup.subtree_control", "+memory +cpu +pids")
                return cls(version=2, bases={"": base})
        except OSError as exc:
            return cls(reason=f"cannot create the class's cgroups below {mount} ({exc.strerror}); on a systemd "
                              f"machine run the hub as a service with Delegate=yes")
        return cls(reason=f"no cgroup file system at {mount}")

    def describe(self, limits: Limits) -> str:
        """One line for the launcher's output: what each student gets, or what is lost and why."""
        if self.version:
            return (f"each student's server and kernels together: {limits.mem_text} of memory, "
                    f"{limits.cpu_cores:g} CPU core(s), {limits.max_tasks} processes and threads "
                    f"(cgroup v{self.version}; HUB_MEM_LIMIT, HUB_CPU_LIMIT, HUB_PIDS_LIMIT)")
        return (f"NO memory or CPU limit per student: {self.reason}. One student's kernel can take all the "
                f"server's memory (the OOM killer may then stop another student's kernel or the hub) or all its "
                f"cores; only processes are limited ({limits.max_tasks} per student, RLIMIT_NPROC)")

    def groups(self, user: str) -> dict[str, Path]:
        return {c: base / user for c, base in self.bases.items()}

    def prepare(self, user: str, limits: Limits) -> list[Path]:
        """Create `user`'s group and write its limits (as root, before the server starts); return its folders."""
        made = []
        for controller, group in self.groups(user).items():
            group.mkdir(exist_ok=True)
            made.append(group)
            if self.version == 2:
                _write(group / "memory.max", str(limits.mem_bytes))
                if (group / "memory.swap.max").exists():
                    _write(group / "memory.swap.max", "0")
                _write(group / "cpu.max", f"{int(limits.cpu_cores * PERIOD_US)} {PERIOD_US}")
                _write(group / "pids.max", str(limits.max_tasks))
            elif controller == "memory":
                _write(group / "memory.limit_in_bytes", str(limits.mem_bytes))
                if (group / "memory.memsw.limit_in_bytes").exists():  # no swapping past the limit either
                    _write(group / "memory.memsw.limit_in_bytes", str(limits.mem_bytes))
            elif controller == "cpu":
                _write(group / "cpu.cfs_period_us", str(PERIOD_US))
                _write(group / "cpu.cfs_quota_us", str(int(limits.cpu_cores * PERIOD_US)))
            elif controller == "pids":
                _write(group / "pids.max", str(limits.max_tasks))
        return made

    def remove(self, user: str) -> None:
        """Remove `user`'s groups (only empty groups can go; a running server keeps its own)."""
        for group in self.groups(user).values():
            try:
                group.rmdir()
            except OSError:
                pass

    def counters(self, user: str) -> dict[str, int]:
        """oom_kill (kernels killed over the limit), throttled (CPU periods cut short), cpu_ns, tasks of `user`."""
        out = {"oom_kill": 0, "throttled": 0, "cpu_ns": 0, "tasks": 0}
        g = self.groups(user)
        mem, cpu = g.get("memory", g.get("")), g.get("cpu", g.get(""))
        try:
            events = (mem / ("memory.events" if self.version == 2 else "memory.oom_control")).read_text()
            out["oom_kill"] = int(re.search(r"^oom_kill (\d+)", events, re.M).group(1))
            stat = (cpu / "cpu.stat").read_text()
            out["throttled"] = int(re.search(r"^nr_throttled (\d+)", stat, re.M).group(1))
            if self.version == 2:
                out["cpu_ns"] = 1000 * int(re.search(r"^usage_usec (\d+)", stat, re.M).group(1))
            elif "cpuacct" in g:
                out["cpu_ns"] = int((g["cpuacct"] / "cpuacct.usage").read_text())
            out["tasks"] = int((g.get("pids", g.get("")) / "pids.current").read_text())
        except (OSError, AttributeError, TypeError):
            pass
        return out


def preexec(tree: Tree, groups: list[Path], limits: Limits):
    """What runs in the server's process before it becomes the student: join the groups, or limit processes."""

    def join() -> None:
        pid = str(os.getpid())
        for group in groups:
            _write(group / "cgroup.procs", pid)
        if not groups:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_tasks, limits.max_tasks))

    return join


def write_kernelspec(share: Path, venv: Path) -> Path:
    """The students' python3 kernel, with hub/kernel_notice.py loaded; returns the folder for JUPYTER_PATH."""
    import json

    spec = share / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    for folder in (share.parent, share, share / "kernels", spec):
        os.chmod(folder, 0o755)
    kernel = {
        "argv": [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}",
                 "--IPKernelApp.extra_extensions=kernel_notice"],
        "display_name": "Python 3 (ipykernel)", "language": "python", "metadata": {"debugger": True},
        "env": {"PYTHONPATH": str(Path(__file__).resolve().parent)},
    }
    (spec / "kernel.json").write_text(json.dumps(kernel, indent=1))
    os.chmod(spec / "kernel.json", 0o644)
    return share
