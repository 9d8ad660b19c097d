"""Packaging: the module that `cmake --install` puts beside the library (it finds the library
relative to itself), `pip install ./python` offline against that installed libheadwise, and
the .deb (CPack), which carries the module for the target's Python in Debian's
dist-packages path; each is imported from another directory and must translate as the build
tree's module does."""
import glob
import json
import os
import shutil
import subprocess

import pytest

import headwise
from conftest import BUILD, PYTHON, SOURCE

CMAKE_BIN = os.environ.get("HEADWISE_TEST_CMAKE_BIN", "/usr/bin")
TRIPLET = os.environ.get("HEADWISE_TEST_TRIPLET") or subprocess.run(
    ["gcc", "-print-multiarch"], capture_output=True, text=True).stdout.strip()
SONAME = "libheadwise.so.{}.{}".format(*headwise.__version__.split(".")[:2])
MODULE_FILES = ["__init__.py", "__init__.pyi", "py.typed", "_errors.py", "_ffi.py", "_lib.py",
                "_model.py", "_sentences.py", "_translator.py", "_build_config.py"]
PROBE = """
import json, sys, headwise
m = headwise.Model(sys.argv[1])
t = headwise.Translator(m, max_beam=2)
out = t.translate(["Open the file.", "Close the window."], beam_size=2, num_hypotheses=2)
print(json.dumps({"module": headwise.__file__, "library": headwise.library_path,
                  "version": headwise.__version__,
                  "results": [[list(h) for h in r] for r in out]}))
"""


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def probe(pythonpath, model, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HEADWISE_LIBRARY")}
    env["PYTHONPATH"] = str(pythonpath)
    return json.loads(run([PYTHON, "-c", PROBE, model], env=env, cwd=cwd).stdout)


@pytest.fixture(scope="module")
def expected(tiny):
    t = headwise.Translator(headwise.Model(tiny), max_beam=2)
    out = t.translate(["Open the file.", "Close the window."], beam_size=2, num_hypotheses=2)
    return [[list(h) for h in r] for r in out]


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    run([os.path.join(CMAKE_BIN, "cmake"), "--install", BUILD, "--prefix", str(p)])
    return p


def test_installed_module_finds_the_installed_library(prefix, tiny, expected, tmp_path):
    site = prefix / "lib" / "python3" / "dist-packages"
    for name in MODULE_FILES:
        assert (site / "headwise" / name).is_file(), name
    lib = prefix / "lib" / TRIPLET / SONAME
    assert lib.is_file()
    assert not (prefix / "lib" / TRIPLET / "libheadwise.so").exists()  # -lheadwise stays static
    got = probe(site, tiny, tmp_path)
    assert os.path.realpath(got["library"]) == os.path.realpath(lib)
    assert got["module"].startswith(str(site))
    assert got["results"] == expected


def test_pip_install_against_the_installed_library(prefix, tiny, expected, tmp_path):
    """In a virtual environment that sees Debian's packages (cffi, setuptools, pip), as a user
    on Debian 12 installs (PEP 668 keeps pip out of the system's own site-packages)."""
    src = tmp_path / "src"
    shutil.copytree(os.path.join(SOURCE, "python"), src,
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    venv = tmp_path / "venv"
    run([PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)])
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HEADWISE_PREFIX"] = str(prefix)
    run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet",
         str(src)], env=env, cwd=tmp_path)
    del env["HEADWISE_PREFIX"]
    r = run([python, "-c", PROBE, tiny], env=env, cwd=tmp_path)
    got = json.loads(r.stdout)
    assert got["module"].startswith(str(venv))
    assert os.path.realpath(got["library"]) == os.path.realpath(prefix / "lib" / TRIPLET / SONAME)
    assert got["version"] == headwise.__version__
    assert got["results"] == expected
    # --target (no environment): the dependency on cffi is Debian's, so --no-deps.
    target = tmp_path / "site"
    run([PYTHON, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
         "--quiet", "--target", str(target), str(src)], env=dict(env, HEADWISE_PREFIX=str(prefix)),
        cwd=tmp_path)
    assert glob.glob(str(target / "headwise-*.dist-info"))
    assert probe(target, tiny, tmp_path)["results"] == expected


def test_pip_install_says_what_is_missing(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(os.path.join(SOURCE, "python"), src,
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    env = dict(os.environ, HEADWISE_PREFIX=str(tmp_path / "nothing"))
    r = subprocess.run([PYTHON, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "--target", str(tmp_path / "site"), str(src)],
                       env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode != 0
    assert "no installed headwise found" in r.stdout + r.stderr


def test_deb_carries_the_module(tiny, expected, tmp_path):
    run([os.path.join(CMAKE_BIN, "cpack"), "--config", os.path.join(BUILD, "CPackConfig.cmake"),
         "-G", "DEB", "-B", str(tmp_path / "pkg")])
    debs = glob.glob(str(tmp_path / "pkg" / "headwise_*.deb"))
    assert len(debs) == 1, debs
    deb = debs[0]
    recommends = run(["dpkg-deb", "-f", deb, "Recommends"]).stdout
    assert "python3-cffi-backend" in recommends and "python3" in recommends
    contents = {line.split()[5].lstrip(".") for line in  # the path (a link's target follows)
                run(["dpkg-deb", "--contents", deb]).stdout.splitlines()}
    for name in MODULE_FILES:
        assert f"/usr/lib/python3/dist-packages/headwise/{name}" in contents, name
    assert f"/usr/lib/{TRIPLET}/{SONAME}" in contents
    root = tmp_path / "root"
    run(["dpkg", "-x", deb, str(root)])
    with open(root / "usr/lib/python3/dist-packages/headwise/_build_config.py") as f:
        config = f.read()
    assert f"'../../../{TRIPLET}/{SONAME}'" in config and f"'{SONAME}'" in config
    got = probe(root / "usr/lib/python3/dist-packages", tiny, tmp_path)
    assert os.path.realpath(got["library"]) == os.path.realpath(root / "usr/lib" / TRIPLET / SONAME)
    assert got["results"] == expected
