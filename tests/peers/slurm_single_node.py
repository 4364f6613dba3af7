"""A real single-node Slurm for the tests, started and stopped by the test itself.

`SingleNodeSlurm(folder)` starts, as root and without systemd, the three daemons Debian's
`slurm-wlm` and `munge` packages install (`munged`, `slurmctld`, `slurmd`), with every file
they use (munge key and socket, `slurm.conf`, state, spool, pid and log files) in `folder`,
on two free TCP ports, so it touches no system configuration and cannot meet another Slurm.
Clients reach it through the environment `env()` gives (`SLURM_CONF`); `stop()` cancels its
jobs and stops the daemons by the process ids it started. `.ci/run` installs the packages.

From a shell (to try a sweep by hand)::

    python tests/peers/slurm_single_node.py /tmp/slurm   # prints SLURM_CONF=..., Ctrl-C stops it
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

#: The programs the single-node Slurm needs (Debian: `apt-get install slurm-wlm munge`).
PROGRAMS = ("munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")
#: What to install when they are missing.
INSTALL_HINT = "as root: apt-get install slurm-wlm munge"
#: How long the daemons may take to start (about a second here).
START_TIMEOUT_S = 60.0


def slurm_available() -> tuple[bool, str]:
    """(True, "") when a single-node Slurm can be started here, else (False, why not)."""
    missing = [name for name in PROGRAMS if shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None]
    if missing:
        return False, f"{', '.join(missing)} not found ({INSTALL_HINT})"
    if os.geteuid() != 0:
        return False, "slurmd must run as root (run the tests as root, as CI does)"
    return True, ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _program(name: str) -> str:
    found = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError(f"{name} not found ({INSTALL_HINT})")
    return found


class SingleNodeSlurm:
    """munged, slurmctld and slurmd for one node (this machine) with their files in `folder`."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.node = socket.gethostname().split(".")[0]
        self.conf = self.folder / "slurm.conf"
        self.socket = self.folder / "run" / "munge.socket"
        self._daemons: list[subprocess.Popen[bytes]] = []

    # -- the files -------------------------------------------------------------------------------

    def _node_line(self) -> str:
        """The node as `slurmd -C` sees it (CPUs, sockets, cores, threads), with RealMemory at most
        80 % of the memory available: more than slurmd finds drains the node."""
        probe = subprocess.run([_program("slurmd"), "-C"], capture_output=True, text=True, timeout=30, check=True)
        fields = dict(item.split("=", 1) for item in probe.stdout.split("\n")[0].split() if "=" in item)
        available_mb = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                                if line.startswith("MemAvailable:"))) // 1024
        memory = min(int(fields.get("RealMemory", available_mb)), available_mb * 8 // 10)
        shape = " ".join(f"{key}={fields[key]}" for key in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket",
                                                            "ThreadsPerCore") if key in fields)
        return f"NodeName={self.node} NodeAddr=127.0.0.1 {shape} RealMemory={memory} State=UNKNOWN"

    def _write_files(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o755)  # munged wants every directory up to its socket searchable by all
        for name in ("munge", "run", "state", "spool", "log"):
            (self.folder / name).mkdir(exist_ok=True)
        (self.folder / "munge").chmod(0o700)
        (self.folder / "run").chmod(0o755)
        key = self.folder / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(128))
        key.chmod(0o400)
        folder = self.folder
        self.conf.write_text(f"""\
ClusterName=commaware-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket={self.socket}
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
SchedulerParameters=sched_interval=1
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/run/slurmctld.pid
SlurmdPidFile={folder}/run/slurmd.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd.log
{self._node_line()}
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP DefMemPerCPU=1000
""")

    # -- the daemons -----------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """The environment of a Slurm client (sbatch, squeue, a sweep) of this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _spawn(self, name: str, *args: str) -> None:
        log = open(self.folder / "log" / f"{name}.out", "wb")  # noqa: SIM115 (the daemon holds it)
        self._daemons.append(subprocess.Popen([_program(name), *args], stdin=subprocess.DEVNULL, stdout=log,
                                              stderr=subprocess.STDOUT, env=self.env(), start_new_session=True))
        log.close()

    def _logs(self) -> str:
        tails = []
        for path in sorted((self.folder / "log").glob("*")):
            lines = path.read_text(errors="replace").splitlines()[-5:]
            tails.append(f"--- {path.name}\n" + "\n".join(lines))
        return "\n".join(tails)

    def _wait(self, what: str, ready, timeout: float = START_TIMEOUT_S) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        while not ready():
            for daemon in self._daemons:
                if daemon.poll() is not None:
                    raise RuntimeError(f"{Path(daemon.args[0]).name} exited ({daemon.returncode}) while waiting for "
                                       f"{what}:\n{self._logs()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} after {timeout:g} s:\n{self._logs()}")
            time.sleep(0.1)

    def _state(self) -> str:
        proc = subprocess.run([_program("sinfo"), "-h", "-o", "%T"], capture_output=True, text=True, env=self.env(),
                              timeout=30)
        return proc.stdout.strip()

    def start(self) -> SingleNodeSlurm:
        self._write_files()
        munge = self.folder / "munge"
        self._spawn("munged", "--foreground", f"--socket={self.socket}", f"--key-file={munge / 'munge.key'}",
                    f"--log-file={munge / 'munged.log'}", f"--pid-file={self.folder / 'run' / 'munged.pid'}",
                    f"--seed-file={munge / 'munged.seed'}")
        self._wait("munge socket", self.socket.exists)
        try:
            self._spawn("slurmctld", "-D", "-i")
            self._spawn("slurmd", "-D", "-N", self.node)
            self._wait("idle node (sinfo)", lambda: self._state() == "idle")
        except BaseException:
            self.stop()
            raise
        return self

    def jobs(self) -> list[str]:
        """The ids of the jobs in the queue (pending or running)."""
        proc = subprocess.run([_program("squeue"), "-h", "-o", "%i"], capture_output=True, text=True, env=self.env(),
                              timeout=30)
        return proc.stdout.split()

    def cancel_all(self, timeout: float = 30.0) -> None:
        """Cancel every job and wait (up to `timeout` s) for the queue to empty."""
        jobs = self.jobs()
        if jobs:
            subprocess.run([_program("scancel"), *jobs], capture_output=True, env=self.env(), timeout=30)
        deadline = time.monotonic() + timeout
        while self.jobs() and time.monotonic() < deadline:
            time.sleep(0.2)

    def stop(self) -> None:
        """Cancel the jobs, then stop slurmd, slurmctld and munged (the processes started here)."""
        running = [d for d in self._daemons if d.poll() is None]
        if len(running) == len(self._daemons) == 3:
            try:
                self.cancel_all()
            except (OSError, subprocess.SubprocessError):
                pass
        for daemon in reversed(self._daemons):
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGTERM)
                try:
                    daemon.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    daemon.kill()
                    daemon.wait(timeout=15)
        self._daemons.clear()

    def __enter__(self) -> SingleNodeSlurm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} FOLDER   (a new or empty folder for the daemons' files)")
    ok, why = slurm_available()
    if not ok:
        sys.exit(f"cannot start Slurm here: {why}")
    with SingleNodeSlurm(sys.argv[1]) as slurm:
        print(f"export SLURM_CONF={slurm.conf}   # Ctrl-C stops the daemons", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
