"""pip install ./python: the headwise module against an installed libheadwise.

    /usr/bin/python3 -m pip install --no-build-isolation --no-index ./python

Offline, with Debian's python3-setuptools, python3-pip and python3-cffi. The installed
library is looked up under $HEADWISE_PREFIX (default: /usr/local, then /usr): its
include/headwise/headwise.h (the module's declarations are generated from it) and a shared
lib[/<multiarch>]/libheadwise.so.MAJOR.MINOR, which the module then loads by that absolute
path (falling back to the soname on the loader's search path). `cmake --install` of any build
installs both (python/CMakeLists.txt); so does the headwise .deb. The module's version is the
library's (hw_version()).
"""
import glob
import os
import sys
import sysconfig

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_module  # noqa: E402


def find_installed():
    """(header, library path, soname, version) of the installed libheadwise."""
    env = os.environ.get("HEADWISE_PREFIX")
    prefixes = [env] if env else ["/usr/local", "/usr"]
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    looked = []
    for prefix in prefixes:
        header = os.path.join(prefix, "include", "headwise", "headwise.h")
        dirs = [os.path.join(prefix, "lib", multiarch), os.path.join(prefix, "lib"),
                os.path.join(prefix, "lib64")]
        looked.append(header)
        if not os.path.isfile(header):
            continue
        # libheadwise.so.MAJOR.MINOR (the soname), not the .so.X.Y.Z file it links to.
        shared = [p for d in dirs for p in sorted(glob.glob(os.path.join(d, "libheadwise.so.*")))
                  if p.count(".so.") == 1 and p.rsplit(".so.", 1)[1].count(".") == 1]
        if not shared:
            static = [p for d in dirs for p in glob.glob(os.path.join(d, "libheadwise.a"))]
            raise SystemExit(
                f"headwise setup.py: {header} is installed but no shared libheadwise.so.M.N "
                f"in {', '.join(dirs)}" + (f" (only the static {static[0]})" if static else "") +
                "; the module loads the shared library: install a build of this version "
                "(`cmake --install` installs it) or the headwise .deb")
        import cffi
        ffi = cffi.FFI()
        ffi.cdef("const char* hw_version(void);")
        version = ffi.string(ffi.dlopen(shared[0]).hw_version()).decode()
        return header, shared[0], os.path.basename(shared[0]), version
    raise SystemExit("headwise setup.py: no installed headwise found (looked for " +
                     ", ".join(looked) + "); set HEADWISE_PREFIX to the install prefix")


HEADER, LIBRARY, SONAME, VERSION = find_installed()


class BuildPy(build_py):
    """Copies the package, then writes its generated _ffi.py and _build_config.py."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "headwise")
        gen_module.write_ffi(HEADER, out)
        gen_module.write_config(out, VERSION, [LIBRARY, SONAME])


setup(
    name="headwise",
    version=VERSION,
    description="Python API of the headwise translation runtime (pruned MarianMT models)",
    packages=["headwise"],
    package_data={"headwise": ["*.pyi", "py.typed"]},
    python_requires=">=3.9",
    install_requires=["cffi>=1.12"],
    cmdclass={"build_py": BuildPy},
)
