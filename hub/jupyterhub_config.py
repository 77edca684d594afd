"""JupyterHub for a class on one server: `make hub` (hub/launch.py) starts jupyterhub with this file.

Every setting comes from an environment variable that hub/launch.py sets from the make variables:
HUB_IP, HUB_PORT (public address), HUB_INTERNAL_PORT, HUB_PROXY_API_PORT (loopback only),
HUB_IDLE_TIMEOUT (seconds before an idle server is stopped), HUB_SSL_CERT / HUB_SSL_KEY,
HUB_KERNEL_THREADS, hub/limits.py's HUB_MEM_LIMIT, HUB_CPU_LIMIT, HUB_PIDS_LIMIT, and hub/classroom.py's
HUB_STATE, HUB_HOME_BASE, HUB_USER_PREFIX, HUB_VENV.
"""
import asyncio
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import classroom  # noqa: E402
import homework  # noqa: E402
import limits  # noqa: E402
from jupyterhub.spawner import LocalProcessSpawner  # noqa: E402
from roster_auth import RosterAuthenticator  # noqa: E402

c = get_config()  # noqa: F821  (provided by jupyterhub when it loads this file)
settings = classroom.Settings.from_env()
env = os.environ
classroom.ensure_state_dir(settings)
student_limits = limits.Limits.from_env()
cgroups = limits.Tree.detect()  # the launcher printed what it means (limits.Tree.describe)
# nbgrader: on in the hub's servers only (the formgrader for teachers), off in the venv (hub/homework.py)
nbgrader_config = homework.write_config(settings, homework.ensure_exchange(homework.exchange_root()))


class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner that runs hub user `alice` as system user `jupyter-alice`, created on demand."""

    def system_user(self) -> str:
        return settings.system_user(self.user.name)

    def make_preexec_fn(self, name):
        # as root, before the server starts: the student's cgroup with its limits (hub/limits.py)
        groups = cgroups.prepare(self.system_user(), student_limits) if cgroups.version else []
        join = limits.preexec(cgroups, groups, student_limits)
        become_student = super().make_preexec_fn(self.system_user())

        def preexec():
            join()
            become_student()

        return preexec

    def user_env(self, env):
        import pwd

        entry = pwd.getpwnam(self.system_user())
        env.update(USER=entry.pw_name, LOGNAME=entry.pw_name, HOME=entry.pw_dir, SHELL=entry.pw_shell,
                   JUPYTER_RUNTIME_DIR=str(settings.runtime_dir(self.user.name)),
                   JUPYTER_CONFIG_PATH=str(nbgrader_config["teacher" if self.user.admin else "student"]))
        return env

    async def stop(self, now=False):
        await super().stop(now=now)
        cgroups.remove(self.system_user())  # an empty group goes; a new server makes a fresh one

    async def start(self):
        # as TLJH does: make sure the system user, its 0700 home and its notebooks exist before spawning
        await asyncio.get_running_loop().run_in_executor(None, classroom.prepare_home, settings, self.user.name)
        # a fresh cgroup counts OOM kills from 0: the kernel's notice (hub/kernel_notice.py) starts over too
        (settings.runtime_dir(self.user.name) / "oom_kills_seen").unlink(missing_ok=True)
        return await super().start()


# ---------------------------------------------------------------------------- network and state
c.JupyterHub.ip = env.get("HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(env.get("HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env.get("HUB_INTERNAL_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{int(env.get('HUB_PROXY_API_PORT', '8001'))}"
c.ConfigurableHTTPProxy.command = [str(HERE / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(settings.state / "jupyterhub-proxy.pid")
c.JupyterHub.pid_file = str(settings.state / "jupyterhub.pid")
c.JupyterHub.db_url = f"sqlite:///{settings.state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(settings.state / "jupyterhub_cookie_secret")
if env.get("HUB_SSL_CERT"):
    c.JupyterHub.ssl_cert = env["HUB_SSL_CERT"]
    c.JupyterHub.ssl_key = env.get("HUB_SSL_KEY", "")

# ---------------------------------------------------------------------------- accounts
c.JupyterHub.authenticator_class = RosterAuthenticator
roster = classroom.load_roster(settings)
# Listed up front so the admin page shows the whole class before anyone logs in; the authenticator
# re-reads the roster at each login, so students added later can log in without a restart.
c.Authenticator.allowed_users = {n for n, u in roster.items() if u.get("role") == "student"}
c.Authenticator.admin_users = {n for n, u in roster.items() if u.get("role") == "teacher"}
# RosterAuthenticator.check_allowed is the allow rule, even with no students yet
c.Authenticator.any_allow_config = True
c.JupyterHub.template_vars = {
    "announcement_login": "Log in with the name and password your teacher gave you.",
}

# ---------------------------------------------------------------------------- students' servers
c.JupyterHub.spawner_class = CourseSpawner
venv_bin = settings.venv / "bin"
c.Spawner.cmd = [str(venv_bin / "jupyterhub-singleuser")]
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = "/lab/tree/notebooks/01_introduction.ipynb"
# Kernels talk to their server over Unix sockets in the student's 0700 runtime folder, not TCP ports:
# twenty servers picking random loopback ports at the same moment collided (measured: "Address
# already in use", a kernel dead after 5 restarts), and no other user can even reach the sockets.
c.Spawner.args = ["--KernelManager.transport=ipc"]
threads = env.get("HUB_KERNEL_THREADS", "1")
kernel_share = limits.write_kernelspec(settings.runtime_base / "share", settings.venv)
c.Spawner.environment = {
    "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
    "VIRTUAL_ENV": str(settings.venv),
    # One thread per kernel by default: a class shares the cores, and spinning OpenMP threads of
    # many kernels slow each other down. The notebooks' outputs are checked with one thread too.
    "OMP_NUM_THREADS": threads,
    "MKL_NUM_THREADS": threads,
    "OMP_WAIT_POLICY": "PASSIVE",
    # the kernelspec below: python3 with hub/kernel_notice.py, which says why a kernel died over the limit
    "JUPYTER_PATH": str(kernel_share),
    "HUB_MEM_LIMIT_TEXT": student_limits.mem_text,
}
c.Spawner.start_timeout = 180  # 20 servers importing torch at once on 2 cores
c.Spawner.http_timeout = 180

# ---------------------------------------------------------------------------- classroom controls
idle_timeout = int(env.get("HUB_IDLE_TIMEOUT", "3600"))
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [
            sys.executable, "-m", "jupyterhub_idle_culler",
            f"--timeout={idle_timeout}",
            f"--cull-every={max(30, min(600, idle_timeout // 4))}",
        ],
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
