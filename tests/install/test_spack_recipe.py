"""The Spack recipe (packaging/spack/package.py) against kembed's CMake project.

No Spack here, so a stand-in for `spack.package` records what the recipe
declares and evaluates its cmake_args() on a spec whose providers are this
machine's Debian libraries. Then CMake configures kembed with exactly those
arguments: every variable the recipe sets must be one the project reads
(CMake's "Manually-specified variables were not used" names any that is not),
the configure must succeed with the Custom ScaLAPACK vendor, and each variant
must map to a CMake option.

usage: test_spack_recipe.py SOURCE_DIR CMAKE
"""
import os
import subprocess
import sys
import tempfile
import types

source_dir, cmake = sys.argv[1], sys.argv[2]
LIBDIR = "/usr/lib/x86_64-linux-gnu"


class Libs:
    def __init__(self, paths):
        self.libraries = list(paths)

    def __add__(self, other):
        return Libs(self.libraries + other.libraries)


class Dependency:
    def __init__(self, libs=(), mpicc="mpicc", mpicxx="mpicxx"):
        self.libs, self.mpicc, self.mpicxx = Libs(libs), mpicc, mpicxx


class Spec:
    def __init__(self, variants):
        self.variants = variants
        self.deps = {
            "scalapack": Dependency([f"{LIBDIR}/libscalapack-openmpi.so"]),
            "lapack": Dependency([f"{LIBDIR}/liblapack.so"]),
            "blas": Dependency([f"{LIBDIR}/libblas.so"]),
            "mpi": Dependency(),
        }

    def __getitem__(self, name):
        return self.deps[name]


declared = {"variants": [], "depends_on": [], "versions": []}


class CMakePackage:
    def define(self, name, value):
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        return f"-D{name}={value}"

    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant])


spack_package = types.ModuleType("spack.package")
spack_package.CMakePackage = CMakePackage
spack_package.license = lambda *a, **k: None
spack_package.version = lambda *a, **k: declared["versions"].append(a[0])
spack_package.variant = lambda name, **k: declared["variants"].append(name)
spack_package.depends_on = lambda spec, **k: declared["depends_on"].append(spec)
spack_package.__all__ = ["CMakePackage", "license", "version", "variant", "depends_on"]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = spack_package

recipe_path = os.path.join(source_dir, "packaging", "spack", "package.py")
namespace = {}
with open(recipe_path) as f:
    exec(compile(f.read(), recipe_path, "exec"), namespace)
Kembed = namespace["Kembed"]

failures = []
if sorted(declared["variants"]) != ["elpa", "hdf5"]:
    failures.append(f"variants {declared['variants']}, expected elpa and hdf5")
for needed in ("mpi", "scalapack", "blas", "lapack"):
    if needed not in declared["depends_on"]:
        failures.append(f"no depends_on('{needed}')")

for variants in ({"elpa": False, "hdf5": False}, {"elpa": True, "hdf5": True}):
    package = Kembed()
    package.spec = Spec(variants)
    package.run_tests = False
    args = package.cmake_args()
    for variant, option in (("elpa", "KEMBED_WITH_ELPA"), ("hdf5", "KEMBED_WITH_HDF5")):
        expected = f"-D{option}={'ON' if variants[variant] else 'OFF'}"
        if expected not in args:
            failures.append(f"variants {variants}: {expected} missing from {args}")
    with tempfile.TemporaryDirectory() as build:
        done = subprocess.run([cmake, "-S", source_dir, "-B", build, *args],
                              capture_output=True, text=True)
        log = done.stdout + done.stderr
        if done.returncode != 0:
            failures.append(f"variants {variants}: cmake failed:\n{log}")
        elif "Manually-specified variables were not used" in log:
            failures.append(f"variants {variants}: the recipe sets variables kembed ignores:\n{log}")
        else:
            with open(os.path.join(build, "CMakeCache.txt")) as f:
                cache = f.read()
            if "KEMBED_SCALAPACK_VENDOR:STRING=Custom" not in cache:
                failures.append(f"variants {variants}: ScaLAPACK vendor is not Custom")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"spack recipe: {len(declared['depends_on'])} dependencies, variants "
      f"{declared['variants']}; its CMake arguments configure kembed")
