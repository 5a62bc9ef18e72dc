"""Runs the kembed binary under an MPI launcher and turns its errors into exceptions."""
import os
import shlex
import shutil
import subprocess
import tempfile


class KembedError(RuntimeError):
    """kembed exited with an error; the message is kembed's own (``kembed: error: ...``)."""

    def __init__(self, message, command=None, returncode=None, stderr=""):
        super().__init__(message)
        self.command = command
        self.returncode = returncode
        self.stderr = stderr


def _default_binary():
    return os.environ.get("KEMBED_BINARY") or shutil.which("kembed") or "kembed"


def _default_launcher():
    # KEMBED_LAUNCHER="srun --mpi=pmix" or "mpirun --oversubscribe"; empty runs
    # the binary directly (MPI singleton, one rank).
    value = os.environ.get("KEMBED_LAUNCHER")
    return shlex.split(value) if value is not None else ["mpirun"]


class Launcher:
    """How kembed is started: binary path, launcher command and rank count.

    ``launcher`` is a command list (or a string, split like a shell would); an
    empty one runs the binary directly with one rank. ``np_flag`` is the
    launcher's rank-count option (``-np`` for mpirun, ``-n`` for srun).
    Defaults come from the environment: KEMBED_BINARY, KEMBED_LAUNCHER.
    """

    def __init__(self, n_ranks=1, launcher=None, kembed=None, np_flag="-np"):
        if int(n_ranks) < 1:
            raise ValueError(f"n_ranks must be at least 1, got {n_ranks}")
        self.n_ranks = int(n_ranks)
        if launcher is None:
            launcher = _default_launcher()
        elif isinstance(launcher, str):
            launcher = shlex.split(launcher)
        self.launcher = list(launcher)
        self.kembed = kembed or _default_binary()
        self.np_flag = np_flag

    def command(self, args):
        """The full command line for ``kembed ARGS``."""
        if not self.launcher:
            if self.n_ranks != 1:
                raise ValueError("n_ranks > 1 needs an MPI launcher (launcher=None uses mpirun)")
            return [self.kembed, *args]
        return [*self.launcher, self.np_flag, str(self.n_ranks), self.kembed, *args]

    def run(self, args, cwd=None):
        """Runs ``kembed ARGS``; raises KembedError with kembed's message on failure."""
        cmd = self.command([str(a) for a in args])
        env, session = None, None
        if not self.launcher:
            # An MPI singleton. Open MPI would first start a helper daemon for it;
            # isolated, it does not (measured on the loaded 2-core VM: 1.0 s a start
            # against 0.4 s). Its session directory then goes under a directory of
            # this run's own: isolated singletons sharing the default one failed to
            # open their input (MPI_ERR_OTHER) in 2 of 100 starts, four at a time,
            # and in none of 100 with their own. Their own even where the
            # environment names one (CTest gives each test one, shared by the
            # test's runs).
            session = tempfile.mkdtemp(prefix="kembed-mpi-")
            env = dict(os.environ)
            env.setdefault("OMPI_MCA_ess_singleton_isolated", "1")
            env["OMPI_MCA_orte_tmpdir_base"] = session
        try:
            proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
        except FileNotFoundError as e:
            raise KembedError(f"cannot start {cmd[0]!r}: {e.strerror} (set kembed=... or "
                              f"KEMBED_BINARY, launcher=... or KEMBED_LAUNCHER)", cmd) from None
        finally:
            if session is not None:
                shutil.rmtree(session, ignore_errors=True)
        if proc.returncode != 0:
            raise KembedError(_error_message(proc.stderr, proc.returncode), cmd,
                              proc.returncode, proc.stderr)
        return proc


def _error_message(stderr, returncode):
    # kembed prints "kembed: error: ..." once (rank 0); the launcher adds its
    # own lines about the exit status, which say nothing new.
    errors = [line.split("error:", 1)[1].strip() for line in stderr.splitlines()
              if line.startswith("kembed") and "error:" in line]
    if errors:
        return "; ".join(dict.fromkeys(errors))
    tail = "\n".join(stderr.strip().splitlines()[-5:])
    return f"kembed failed with exit status {returncode}" + (f": {tail}" if tail else "")
