"""The Docker image's recipe, its entrypoint (auditor/container.py) and `make docker-smoke`.

No Docker daemon runs in CI: the Dockerfile is checked as text, the entrypoint's user switch is
run for real (as root, with a stand-in ``auditor`` on PATH that reports who it runs as), and the
smoke target's skip path is run with a ``docker`` that cannot reach a daemon."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.container import output_folder, run_as

ROOT = Path(__file__).resolve().parents[1]


def _instructions() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text()
    text = re.sub(r"\\\n", " ", text)
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_dockerfile_installs_through_the_makefile_constraints():
    lines = _instructions()
    pips = [ln for ln in lines if ln.startswith("RUN") and "pip install" in ln]
    assert pips, "the image installs nothing"
    assert all("-c constraints.txt" in ln for ln in pips)
    torch = [ln for ln in pips if re.search(r"\btorch\b", ln)]
    assert torch and "download.pytorch.org/whl/cpu" in torch[0]
    assert any(ln.startswith("COPY") and "constraints.txt" in ln for ln in lines)
    copied_before = lines.index(next(ln for ln in lines if "constraints.txt" in ln and
                                     ln.startswith("COPY")))
    assert copied_before < lines.index(pips[0])
    makefile = (ROOT / "Makefile").read_text()
    assert "-c constraints.txt" in makefile
    extras = re.search(r'pip install -c constraints\.txt "\.\[([^\]]+)\]"', " ".join(lines))
    assert extras and {"probes", "tokens", "hf", "gx"} <= set(extras.group(1).split(","))


def test_dockerfile_has_no_stale_environment_and_enters_through_the_user_switch():
    text = (ROOT / "Dockerfile").read_text()
    assert "MPLBACKEND" not in text and "matplotlib" not in text
    lines = _instructions()
    assert 'ENTRYPOINT ["python", "-m", "auditor.container"]' in lines
    assert not [ln for ln in lines if ln.startswith("USER")]  # starts as root, then switches


def test_output_folder_is_the_out_flag_or_the_working_directory(tmp_path):
    (tmp_path / "mine").mkdir()
    assert output_folder(["run", "a.yaml"], tmp_path) == tmp_path
    assert output_folder(["demo", "--out", "mine/new/deeper"], tmp_path) == tmp_path / "mine"
    assert output_folder(["demo", f"--out={tmp_path / 'mine'}"], Path("/")) == tmp_path / "mine"
    assert output_folder(["demo", "--out", "/nonexistent-root-dir/x"], tmp_path) == Path("/")


def test_output_folder_reads_abbreviated_flags_spaces_and_symlinks(tmp_path):
    """argparse takes ``--ou``/``--o`` for ``--out``; a path with spaces arrives as one argv
    item; a symlinked output folder is the folder it points to (where the files land)."""
    spaced = tmp_path / "my reports" / "q 1"
    spaced.mkdir(parents=True)
    assert output_folder(["demo", "--ou", "my reports/q 1/new"], tmp_path) == spaced
    assert output_folder(["demo", f"--o={spaced}"], Path("/")) == spaced
    assert output_folder(["run", "a.yaml", "--out="], tmp_path) == tmp_path
    (tmp_path / "link").symlink_to(spaced, target_is_directory=True)
    folder = output_folder(["demo", "--out", "link"], tmp_path)
    assert folder.stat().st_ino == spaced.stat().st_ino


needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="switching users needs root")


@pytest.fixture
def fake_auditor():
    """A stand-in ``auditor`` on PATH printing its uid, gid, HOME and arguments (in a folder
    every user can reach: pytest's own temporary root is private to root)."""
    import tempfile

    bin_dir = Path(tempfile.mkdtemp(prefix="auditor-fake-bin-"))
    bin_dir.chmod(0o755)
    script = bin_dir / "auditor"
    script.write_text('#!/bin/sh\nprintf "%s\\n" "$(id -u)" "$(id -g)" "$HOME" "$@"\n'
                      'exit 7\n')  # one line per item: an argument with spaces stays one
    script.chmod(0o755)
    yield bin_dir
    shutil.rmtree(bin_dir, ignore_errors=True)


def _entry(args: list[str], cwd: Path, bin_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "auditor.container", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60)


@needs_root
def test_entrypoint_runs_as_the_owner_of_a_folder_you_created(tmp_path, fake_auditor):
    out = tmp_path / "out"
    out.mkdir()
    os.chown(out, 4321, 4322)  # a host user's folder, bind-mounted
    assert run_as(["demo", "--out", str(out / "run1")], tmp_path) == (4321, 4322)
    res = _entry(["demo", "--out", str(out / "run1")], tmp_path, fake_auditor)
    assert res.returncode == 7, res.stderr  # the exit code passes straight through
    assert res.stdout.split() == ["4321", "4322", "/tmp", "demo", "--out", str(out / "run1")]


@needs_root
def test_entrypoint_follows_the_owner_through_spaces_and_a_symlink(tmp_path, fake_auditor):
    target = tmp_path / "host out" / "run 1"
    target.mkdir(parents=True)
    os.chown(target, 4321, 4322)
    (tmp_path / "out link").symlink_to(target, target_is_directory=True)  # owned by root
    res = _entry(["demo", "--out", "out link/new dir"], tmp_path, fake_auditor)
    assert res.returncode == 7, res.stderr
    assert res.stdout.splitlines() == ["4321", "4322", "/tmp", "demo", "--out",
                                       "out link/new dir"]


@needs_root
def test_entrypoint_stays_root_for_a_folder_docker_created_as_root(tmp_path, fake_auditor):
    out = tmp_path / "created-by-docker"
    out.mkdir()
    os.chown(out, 0, 0)
    res = _entry(["demo", "--out", str(out)], tmp_path, fake_auditor)
    assert res.returncode == 7, res.stderr
    uid, gid, home, *_ = res.stdout.split()
    assert (uid, gid) == ("0", "0")


@needs_root
def test_entrypoint_defaults_to_the_owner_of_the_working_directory(tmp_path, fake_auditor):
    work = tmp_path / "data"
    work.mkdir()
    os.chown(work, 4321, 4321)
    res = _entry(["run", "audit.yaml"], work, fake_auditor)
    assert res.stdout.split()[:2] == ["4321", "4321"]


def test_entrypoint_without_the_setuid_capability_is_one_line_exit_2(tmp_path, monkeypatch,
                                                                   capsys):
    """Root with every capability dropped (``--cap-drop ALL``) cannot switch users: one line
    naming the owner and the --user way out, exit 2, nothing run as root instead."""
    import auditor.container as container

    out = tmp_path / "out dir"
    out.mkdir()

    def denied(*a):
        raise PermissionError(1, "Operation not permitted")

    def never(*a):
        raise AssertionError("auditor must not run when the switch failed")

    monkeypatch.setattr(container.os, "geteuid", lambda: 0)
    monkeypatch.setattr(container, "run_as", lambda argv, cwd: (4321, 4322))
    monkeypatch.setattr(container.os, "setgroups", denied)
    monkeypatch.setattr(container.os, "execvp", never)
    with pytest.raises(SystemExit) as exc:
        container.main(["demo", "--out", str(out)])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "(4321:4322)" in line and str(out) in line and "--user 4321:4322" in line


def _make(*args: str, path: str) -> subprocess.CompletedProcess:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    return subprocess.run([make, "-s", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PATH": path})


def test_make_docker_smoke_dry_run_builds_and_runs_the_demo():
    res = _make("-n", "docker-smoke", path=os.environ.get("PATH", ""))
    assert res.returncode == 0, res.stderr
    assert "docker build -t auditor:smoke ." in res.stdout
    assert "auditor:smoke demo --out /out" in res.stdout


def test_make_docker_smoke_skips_with_a_message_without_a_daemon(tmp_path):
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    fake.chmod(0o755)
    res = _make("docker-smoke", path=f"{tmp_path}:{os.environ.get('PATH', '')}")
    assert res.returncode == 0, res.stderr
    assert "docker-smoke: skipped: no Docker daemon" in res.stdout
    without = tmp_path / "nodocker"
    without.mkdir()
    for tool in ("sh", "make"):  # a PATH with no docker at all
        found = shutil.which(tool)
        if found:
            (without / tool).symlink_to(found)
    res = _make("docker-smoke", path=str(without))
    assert res.returncode == 0 and "skipped" in res.stdout
