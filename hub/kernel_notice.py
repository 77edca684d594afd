"""In a student's kernel on the class hub: say why the previous kernel died when it went over the memory limit.

Loaded as an IPython extension by the hub's kernelspec (hub/jupyterhub_config.py writes it). The kernel's OOM
kill is a SIGKILL: the dying kernel cannot speak, and JupyterLab only says that the kernel "died" and restarts
it. So the NEXT kernel reads its cgroup's oom_kill counter at start; if it grew since the last notice, the first
cell the student runs prints what happened and what to do, in the notebook's language (notebooks/zh/ is
Chinese). Standard library only; it never raises into the student's kernel.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

TEXT = {
    "en": ("Your previous kernel was stopped: together with your other kernels it used more than your memory "
           "limit on the class server ({limit}). Its variables are gone. Make the large tensor smaller (a typo in "
           "a shape?), then restart the kernel and run the cells from the top (Kernel > Restart Kernel and Run All "
           "Cells). Kernels of other notebooks count toward the same limit: shut down those you no longer use "
           "(Kernel > Shut Down Kernel)."),
    "zh": ("你之前的内核被停止了：它和你的其他内核合起来用的内存超过了你在课堂服务器上的上限（{limit}），"
           "其中的变量都已丢失。请把过大的张量改小（是不是形状写错了？），然后重启内核，从头运行各单元格"
           "（Kernel > Restart Kernel and Run All Cells）。"
           "其他笔记本的内核也计入同一上限：不再用的请关掉（Kernel > Shut Down Kernel）。"),
}


def oom_kills() -> int | None:
    """How many processes of this student's cgroup the OOM killer has stopped, or None if unknown."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "memory":
                events = Path("/sys/fs/cgroup/memory", path.lstrip("/"), "memory.oom_control")
                break
            if controllers == "":
                events = Path("/sys/fs/cgroup", path.lstrip("/"), "memory.events")
        m = re.search(r"^oom_kill (\d+)", events.read_text(), re.M)
        return int(m.group(1)) if m else None
    except (OSError, ValueError, UnboundLocalError):
        return None


def message(limit: str, notebook: str) -> str:
    """The notice in the notebook's language."""
    lang = "zh" if "zh/" in notebook.replace(os.sep, "/") else "en"
    return TEXT[lang].format(limit=limit)


def load_ipython_extension(ip) -> None:
    """Remember the counter; if it grew since the last notice, print the notice before the next cell."""
    count = oom_kills()
    seen_file = Path(os.environ.get("JUPYTER_RUNTIME_DIR") or Path.home(), "oom_kills_seen")
    try:
        seen = int(seen_file.read_text())
    except (OSError, ValueError):
        seen = 0
    if count is None or count <= seen:
        return
    try:
        seen_file.write_text(str(count))
    except OSError:
        pass
    text = message(os.environ.get("HUB_MEM_LIMIT_TEXT", "?"), os.environ.get("JPY_SESSION_NAME", ""))

    def notice(*_args) -> None:
        import sys

        print(text, file=sys.stderr)
        ip.events.unregister("pre_run_cell", notice)

    ip.events.register("pre_run_cell", notice)
