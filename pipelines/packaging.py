"""mpg's own code as a package for Beam workers that are not the launching process.

Remote workers (Dataflow's, or the SDK harnesses of Flink and Spark) unpickle steps that name
`mpg.*` functions, and read the SQL files and the chip catalog as package data: they need mpg
installed. So mpg builds a wheel of itself (pure Python: one wheel suits every worker), once per
code version, and stages it with `--extra_package`: from its source tree when it runs from a
checkout, or reassembled from its installed files when it was installed from a wheel (`pip
install .`, or from an index), which is what a user has. Its dependencies go in a
`--requirements_file` pinned to the versions this process runs with, so the workers compute with
the libraries the launcher was tested with. Beam is pinned at the launcher's version but its
own dependencies are not: the workers' container brings the SDK (Beam's stager leaves
`apache-beam` out of what it downloads, and the container's pip finds the pin already
satisfied), while a plain `pip install -r requirements.txt <wheel>` in a fresh environment, the
way a site without containers builds its workers, gets the Beam the steps were pickled by.

    $XDG_CACHE_HOME/mpg/workers/<code version>-<pyproject digest>/
        mpg_fleet_goodput-0.1.0-py3-none-any.whl
        requirements.txt
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import mpg
from mpg.core.errors import UserError
from mpg.core.version import code_version

DISTRIBUTION = "mpg-fleet-goodput"
REQUIREMENTS = "requirements.txt"
# Pinned, but not followed down: the workers' container brings the Beam SDK and what it needs.
_FROM_CONTAINER = frozenset({"apache-beam"})


class PackagingError(UserError):
    """mpg cannot package itself for remote workers (no source tree, or the wheel build fails)."""


def package_args(cache: Path | None = None) -> tuple[str, str]:
    """The Beam options that ship mpg to remote workers: its wheel and pinned requirements."""
    folder = worker_package(cache or default_cache())
    (wheel,) = folder.glob("*.whl")
    return f"--extra_package={wheel}", f"--requirements_file={folder / REQUIREMENTS}"


def default_cache() -> Path:
    """Where built packages are kept between runs (the XDG cache folder)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mpg" / "workers"


def worker_package(cache: Path) -> Path:
    """The folder with this code version's wheel and requirements, built on first use.

    Built in a scratch folder and renamed into place, so a run that is killed, or a second run
    building the same version at the same time, never leaves a half-built package behind.
    """
    root = source_root()
    folder = cache / _package_key(root)
    if folder.is_dir():
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as scratch:
        built = Path(scratch) / "package"
        if root is None:
            installed_wheel(built)
        else:
            build_wheel(root, built)
        pins = pinned_requirements(DISTRIBUTION)
        (built / REQUIREMENTS).write_text("".join(f"{pin}\n" for pin in pins))
        try:
            built.rename(folder)
        except OSError:
            if not folder.is_dir():  # not simply built by another run first
                raise
    return folder


def source_root() -> Path | None:
    """The source tree this mpg runs from (a checkout, installed editable), to build a wheel of;
    None when mpg runs from an installed wheel."""
    root = Path(mpg.__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text()).get("project", {}) if pyproject.is_file() else {}
    return root if project.get("name") == DISTRIBUTION else None


def _package_key(root: Path | None) -> str:
    """The code version (every module, SQL and data file), and the build's metadata with it:
    pyproject.toml in a source tree, the installed distribution's METADATA otherwise."""
    if root is None:
        dist, info = _installed()
        build = Path(dist.locate_file(f"{info}/METADATA"))
    else:
        build = root / "pyproject.toml"
    return f"{code_version()}-{hashlib.sha256(build.read_bytes()).hexdigest()[:12]}"


def build_wheel(root: Path, out: Path) -> Path:
    """A wheel of the source tree at `root`, built by pip from a clean copy of its sources.

    Built in place, setuptools would reuse `root/build/`, where a module deleted since an earlier
    build would still lie and be shipped.
    """
    sources = out / "sources"
    copy_sources(root, sources)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir"]
    result = subprocess.run(
        [*command, str(out), str(sources)], capture_output=True, text=True, check=False
    )
    shutil.rmtree(sources)
    wheels = list(out.glob("*.whl"))
    if result.returncode != 0 or len(wheels) != 1:
        reason = (result.stderr.strip().splitlines() or ["no wheel written"])[-1]
        raise PackagingError(f"cannot build a wheel of mpg from {root}: {reason}")
    return wheels[0]


def copy_sources(root: Path, dest: Path) -> None:
    """What a wheel is built from: pyproject.toml, the readme and the folders it maps into `mpg`."""
    project = tomllib.loads((root / "pyproject.toml").read_text())
    dest.mkdir(parents=True)
    for name in ("pyproject.toml", project["project"]["readme"]):
        shutil.copy2(root / name, dest / name)
    for folder in sorted(set(project["tool"]["setuptools"]["package-dir"].values())):
        shutil.copytree(root / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))


# What pip adds to a distribution when it installs one: not part of the wheel it came from.
_INSTALL_RECORDS = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})
# Zip entries dated at the format's epoch, so the same installed files give the same wheel bytes.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def installed_wheel(out: Path) -> Path:
    """The wheel mpg was installed from, reassembled from the files its install recorded (RECORD):
    the package's modules and data, and the wheel's own metadata (METADATA, WHEEL, entry points),
    with a RECORD of their hashes. Console scripts stay out: pip makes them from the entry points.
    """
    dist, info = _installed()
    wheel_text = Path(dist.locate_file(f"{info}/WHEEL")).read_text()
    (tag,) = [
        line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")
    ]
    shipped = sorted(
        str(f)
        for f in dist.files or []
        if f.parts[0] != ".."
        and "__pycache__" not in f.parts
        and not (f.parts[0] == info and f.name in _INSTALL_RECORDS)
    )
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{info.removesuffix('.dist-info')}-{tag}.whl"
    record = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in shipped:
            data = Path(dist.locate_file(name)).read_bytes()
            archive.writestr(zipfile.ZipInfo(name, _ZIP_EPOCH), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{name},sha256={digest.decode()},{len(data)}\n")
        record.append(f"{info}/RECORD,,\n")
        archive.writestr(zipfile.ZipInfo(f"{info}/RECORD", _ZIP_EPOCH), "".join(record))
    return wheel


def _installed() -> tuple[metadata.Distribution, str]:
    """The installed distribution the running mpg was imported from, and its .dist-info folder
    (relative to the site folder, as its RECORD names files)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    here = Path(mpg.__file__).resolve()
    if dist is None or Path(dist.locate_file("mpg/__init__.py")).resolve() != here:
        raise PackagingError(
            f"mpg runs from {here.parent}, neither its source tree nor an installed wheel, so it "
            "cannot package itself for remote workers: pass --extra_package=<mpg wheel> or "
            "--sdk_container_image=<image>"
        )
    (info,) = {f.parts[0] for f in dist.files or [] if f.parts[0].endswith(".dist-info")}
    return dist, info


def pinned_requirements(distribution: str) -> list[str]:
    """`distribution`'s runtime dependencies, all the way down, as `name==version` installed here.

    Extras and environment markers are evaluated as pip would; development extras are not
    requested, so test tools stay out. Beam is pinned; its own dependencies come with the
    workers' container (or pip) unless mpg needs one directly.
    """
    pins: dict[str, str] = {}
    todo: list[tuple[str, frozenset[str]]] = [(distribution, frozenset())]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (canonicalize_name(name), extras) in seen:
            continue
        seen.add((canonicalize_name(name), extras))
        for requirement in _requirements(name, extras):
            dist = metadata.distribution(requirement.name)
            pins[canonicalize_name(requirement.name)] = f"{dist.metadata['Name']}=={dist.version}"
            if canonicalize_name(requirement.name) not in _FROM_CONTAINER:
                todo.append((requirement.name, frozenset(requirement.extras)))
    return sorted(pins.values(), key=str.lower)


def _requirements(name: str, extras: frozenset[str]) -> list[Requirement]:
    """What distribution `name`, installed with `extras`, requires here."""
    wanted = []
    for text in metadata.requires(name) or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in extras or {""}):
            wanted.append(requirement)
    return wanted
