"""The virtual environments of the installed-package tier, built as a user and Beam's SDK
container would build them, and kept between runs while the wheel is the same.

- `launcher`: `pip install -c constraints.txt <wheel>`, no extras: what `pip install .` gives.
- `package`: the worker package that the launcher's mpg makes for remote workers
  (`mpg.pipelines.packaging.package_args`: the wheel reassembled from its installed files and
  the pinned requirements), run inside the launcher.
- `staged`: those requirements but Beam's pin downloaded as Beam's stager does (`pip download
  --no-deps`, binary
  wheels for CPython 3.11 on manylinux x86-64), in one pip call where Beam makes one per package.
- `worker`: a fresh environment with Beam (what the SDK container brings), then the staged
  requirements and the wheel installed as the container's boot program does (Beam's
  sdks/python/container/piputil.go): `--no-index --no-deps` from the staged files, then again
  resolving dependencies (here still `--no-index`: the staged set must be complete), then the
  wheel `--force-reinstall --no-deps` and once more with its dependencies.

Everything lies in `.install-test/<key>/`, where the key digests the wheel's RECORD (the hash of
every file in it, so a rebuilt wheel of unchanged sources keeps it), constraints.txt, this file
and the Python version; another key's folder is removed when a new one is built. pip's own
download cache makes a rebuild after a source change cost installs, not downloads.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
CACHE = ROOT / ".install-test"
# What Beam's stager asks pip for: CPython 3.11 binary wheels for manylinux x86-64 (its platform
# fallbacks, newest first, all in one call), or pure-Python ones.
STAGING = (
    "--only-binary", ":all:", "--implementation", "cp", "--python-version", "3.11",
    "--abi", "cp311", "--abi", "abi3", "--abi", "none",
    "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64",
    "--platform", "manylinux_2_17_x86_64", "--platform", "any",
)  # fmt: skip
# A step that installs or runs a whole pipeline; generous for a loaded 2-core machine.
TIMEOUT_S = 900


@dataclass(frozen=True)
class Environments:
    launcher: Path
    worker: Path
    shipped_wheel: Path
    requirements: Path

    def bin(self, venv: str, name: str) -> Path:
        return getattr(self, venv) / "bin" / name


def run(*command: str | Path) -> str:
    """stdout of `command`; its stderr in the error when it fails. It runs in the system's
    temporary folder: `python -c` puts its working folder first on sys.path, and in the checkout
    that is the source tree's `mpg/`, not the installed package."""
    done = subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=tempfile.gettempdir(),
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stderr}"
        )
    return done.stdout


def pip(venv: Path, *args: str | Path) -> str:
    return run(
        venv / "bin" / "python", "-m", "pip", *args, "--quiet", "--disable-pip-version-check"
    )


def key(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (record,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        parts = [archive.read(record), CONSTRAINTS.read_bytes(), Path(__file__).read_bytes()]
    digest = hashlib.sha256(b"\0".join([*parts, sys.version.encode()]))
    return digest.hexdigest()[:16]


def environments(wheel: Path) -> Environments:
    """The tier's environments for `wheel`, built unless a finished set for its key exists whose
    launcher still has exactly what it was built with (a test adds an extra, then removes it)."""
    folder = CACHE / key(wheel)
    ready = folder / "ready.json"
    if not ready.is_file() or json.loads(ready.read_text())["freeze"] != freeze(
        folder / "launcher"
    ):
        shutil.rmtree(CACHE, ignore_errors=True)
        _build(wheel, folder)
    paths = json.loads(ready.read_text())
    return Environments(
        launcher=folder / "launcher",
        worker=folder / "worker",
        shipped_wheel=Path(paths["wheel"]),
        requirements=Path(paths["requirements"]),
    )


_PACKAGE = """
import json, sys
from pathlib import Path
from mpg.pipelines.packaging import package_args
wheel, requirements = (a.split("=", 1)[1] for a in package_args(Path(sys.argv[1])))
print(json.dumps({"wheel": wheel, "requirements": requirements}))
"""


def _build(wheel: Path, folder: Path) -> None:
    launcher, worker, staged = folder / "launcher", folder / "worker", folder / "staged"
    run(sys.executable, "-m", "venv", launcher)
    pip(launcher, "install", "-c", CONSTRAINTS, wheel)
    shipped = json.loads(run(launcher / "bin" / "python", "-c", _PACKAGE, folder / "package"))
    requirements = shipped["requirements"]
    # The stager downloads every pin but Beam's (the container's pip finds that one satisfied).
    pins = Path(requirements).read_text().splitlines()
    wanted = [p for p in pins if not p.lower().startswith("apache-beam==")]
    pip(launcher, "download", "--no-deps", "--dest", staged, *wanted, *STAGING)
    run(sys.executable, "-m", "venv", worker)
    pip(worker, "install", "-c", CONSTRAINTS, f"apache-beam=={metadata.version('apache-beam')}")
    local = ("--no-index", "--find-links", staged)
    pip(worker, "install", "-r", requirements, *local, "--no-deps")
    pip(worker, "install", "-r", requirements, *local)
    pip(worker, "install", "--upgrade", "--force-reinstall", "--no-deps", shipped["wheel"])
    pip(worker, "install", *local, shipped["wheel"])
    (folder / "ready.json").write_text(json.dumps({**shipped, "freeze": freeze(launcher)}))


def freeze(venv: Path) -> list[str]:
    """What is installed in `venv`, as `name==version` lines (none when it does not exist)."""
    return pip(venv, "freeze").splitlines() if venv.is_dir() else []
