# Spack recipe for kembed. Copy this directory into a Spack repository
# (packages/kembed/package.py) and `spack install kembed`; see the README.
# No Spack on the development machines: tests/install/test_spack_recipe.py
# evaluates this recipe with a stand-in and configures kembed with its arguments.

from spack.package import *


class Kembed(CMakePackage):
    """Distributed spectral dimensionality reduction (kernel PCA, PCA and
    classical multidimensional scaling) on MPI clusters with ScaLAPACK."""

    # Placeholders: set both to the repository kembed is published from.
    homepage = "https://github.com/kembed/kembed"
    git = "https://github.com/kembed/kembed.git"

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("elpa", default=False, description="ELPA two-stage eigensolver (--solver elpa)")
    variant("hdf5", default=False, description="Parallel HDF5 input and output (.h5)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")

    depends_on("mpi")
    depends_on("scalapack")
    depends_on("blas")
    depends_on("lapack")
    depends_on("boost@1.74:+program_options")
    depends_on("nlohmann-json@3.10:")
    depends_on("elpa+mpi", when="+elpa")
    depends_on("hdf5+mpi", when="+hdf5")
    depends_on("googletest", type="test")

    def cmake_args(self):
        spec = self.spec
        # kembed's own FindScaLAPACK takes the full link line from Spack's
        # providers (netlib-scalapack, intel-oneapi-mkl, cray-libsci, ...).
        link = spec["scalapack"].libs + spec["lapack"].libs + spec["blas"].libs
        return [
            self.define("KEMBED_SCALAPACK_VENDOR", "Custom"),
            self.define("KEMBED_SCALAPACK_LIBRARIES", ";".join(link.libraries)),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define_from_variant("KEMBED_WITH_ELPA", "elpa"),
            self.define_from_variant("KEMBED_WITH_HDF5", "hdf5"),
            self.define("KEMBED_BUILD_TESTS", self.run_tests),
        ]

    def setup_run_environment(self, env):
        # One BLAS thread per MPI rank: kembed runs one rank per core.
        env.set("OPENBLAS_NUM_THREADS", "1")
        env.set("OMP_NUM_THREADS", "1")
