// HDF5 inputs end to end: every error path of the reader fails on every rank
// with one line naming the file and the dataset, within mpiexec's time limit
// (no rank left alone in a collective of parallel HDF5); the datasets h5py
// reads and parallel HDF5 1.10 cannot read through MPI-IO (chunks never
// written, virtual datasets, external raw storage, gzip) read; an HDF5
// external link or virtual dataset into the output directory is refused;
// devices are refused as inputs by name.
//
// The files are made by h5py (/usr/bin/python3 with python3-h5py): LZF,
// virtual datasets and unwritten chunks are one line each there. scripts/test
// installs it; without it the tests fail (they are not skipped).
#include <sys/stat.h>

#include "cli_support.hpp"

using namespace cli_test;

namespace {

constexpr const char* kPython = "/usr/bin/python3";

/// Writes every fixture into `dir` with h5py; false when h5py is missing.
bool make_fixtures(const fs::path& dir) {
  const std::string script = R"PY(
import os, sys
import numpy as np, h5py
os.chdir(sys.argv[1])
X = (np.arange(120, dtype='f8').reshape(40, 3) % 17) * 0.25 + np.repeat(np.arange(40.0), 3).reshape(40, 3) ** 1.5
np.save('x.npy', X)
with h5py.File('x.h5', 'w') as f:
    f['X'] = X
    f['g/Y'] = X
    f['ints'] = X.astype('i4')
    f['bools'] = X > 5
    f['cube'] = X.reshape(40, 3, 1)
    f['text'] = np.array([[b'a', b'b']] * 4)
    f.create_dataset('unwritten', shape=(40, 3), dtype='f8')
    f.create_dataset('unwritten_chunks', shape=(40, 3), dtype='f8', chunks=(10, 3))
    f.create_dataset('huge_unwritten', shape=(2**31, 3), dtype='f8')
    f.create_dataset('lzf', data=X, compression='lzf')
    nan = X.copy(); nan[4, 1] = np.nan
    f['nan'] = nan
    f['soft'] = h5py.SoftLink('/nothing')
    f['dangling'] = h5py.ExternalLink('gone.h5', '/X')
    f['via'] = h5py.ExternalLink('gone.h5', '/g')
# Partly written chunks with fill time "never": no value to read them as.
with h5py.File('x.h5', 'a') as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((10, 3))
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    sid = h5py.h5s.create_simple((40, 3))
    h5py.h5d.create(f.id, b'no_fill', h5py.h5t.IEEE_F64LE, sid, dcpl=dcpl)
    f['no_fill'][0:10] = X[0:10]
with h5py.File('two.h5', 'w') as f:
    f['A'] = X
    f['B'] = X
open('text.h5', 'w').write('1,2,3\n4,5,6\n')
# Readable through the POSIX driver only: chunks never written (rows 10-29
# read as 0), a virtual dataset, external raw storage, gzip.
P = X.copy(); P[10:30] = 0
np.save('partial.npy', P)
with h5py.File('partial.h5', 'w') as f:
    d = f.create_dataset('X', shape=(40, 3), dtype='f8', chunks=(10, 3))
    d[0:10] = X[0:10]; d[30:40] = X[30:40]
with h5py.File('src.h5', 'w') as f:
    f['X'] = X
layout = h5py.VirtualLayout(shape=(40, 3), dtype='f8')
layout[0:25] = h5py.VirtualSource('src.h5', 'X', shape=(40, 3))[0:25]
layout[25:40] = h5py.VirtualSource('src.h5', 'X', shape=(40, 3))[25:40]
with h5py.File('vds.h5', 'w') as f:
    f.create_virtual_dataset('X', layout)
layout = h5py.VirtualLayout(shape=(40, 3), dtype='f8')
layout[:] = h5py.VirtualSource('missing_source.h5', 'X', shape=(40, 3))
with h5py.File('vds_missing.h5', 'w') as f:
    f.create_virtual_dataset('X', layout)
X.astype('<f8').tofile('raw.bin')
with h5py.File('efl.h5', 'w') as f:
    f.create_dataset('X', shape=(40, 3), dtype='<f8', external=[(os.path.abspath('raw.bin'), 0, 40 * 3 * 8)])
with h5py.File('efl_missing.h5', 'w') as f:
    f.create_dataset('X', shape=(40, 3), dtype='<f8', external=[('nothere.bin', 0, 40 * 3 * 8)])
with h5py.File('gzip.h5', 'w') as f:
    f.create_dataset('X', data=X, chunks=(7, 3), compression='gzip')
)PY";
  write_file(dir / "make.py", script);
  const std::string command = std::string(kPython) + " -c 'import h5py' 2>/dev/null && " + kPython + " " +
                              sh_quote((dir / "make.py").string()) + " " + sh_quote(dir.string());
  return std::system(command.c_str()) == 0;
}

const fs::path& fixtures() {
  static const fs::path dir = [] {
    const fs::path d = scratch_dir("h5_fixtures");
    return make_fixtures(d) ? d : fs::path();
  }();
  return dir;
}

#define REQUIRE_FIXTURES()                                                   \
  ASSERT_FALSE(fixtures().empty()) << "no h5py at /usr/bin/python3 (python3-h5py)"; \
  const fs::path dir = fixtures()

/// Runs `args` at `np` ranks and expects every rank to fail with `expected`
/// in one error line, within the time limit, and no output directory.
void expect_hdf5_refused(const std::vector<std::string>& args, int np,
                         const std::string& expected) {
  const fs::path out = scratch_root() / "refused";
  const RunResult r = run_kembed(concat(args, {"--output-dir", out.string(), "--quiet"}), np);
  EXPECT_FALSE(r.timed_out()) << "hung: " << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
  EXPECT_TRUE(contains(r.err, "kembed: error: " + expected)) << "expected: " << expected << "\n" << r.describe();
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(staging_leftovers(scratch_root()).empty());
}

/// The embedding of `pca -k 2` of `input` at `np` ranks.
Matrix embed(const std::vector<std::string>& input, int np, const std::string& name) {
  const fs::path out = scratch_root() / ("embed_" + name + "_" + std::to_string(np));
  fs::remove_all(out);
  const RunResult r = run_kembed(concat(concat({"pca"}, input), {"-k", "2", "-o", out.string(), "--quiet"}), np);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  return read_result_csv(out / "embedding.csv").data;
}

struct Hdf5Case {
  std::vector<std::string> args;
  std::string expected;  ///< after "kembed: error: " and the file's path
};

/// Every way the HDF5 reader can refuse an input, as (args, message).
std::vector<Hdf5Case> error_cases(const fs::path& dir, const std::string& pca = "pca") {
  const std::string h5 = (dir / "x.h5").string();
  const auto in = [&](const std::string& dataset) {
    return std::vector<std::string>{pca, "--input", h5 + ":" + dataset};
  };
  return {
      {{pca, "--input", (dir / "missing.h5").string()}, "cannot open '" + (dir / "missing.h5").string() + "'"},
      {{pca, "--input", (dir / "text.h5").string()},
       (dir / "text.h5").string() + ": cannot open as an HDF5 file (not HDF5, or damaged)"},
      {{pca, "--input", (dir / "two.h5").string()}, (dir / "two.h5").string() + ": which dataset?"},
      {in("/nope"), h5 + ": no dataset /nope; datasets in the file: "},
      {in("/g/Z"), h5 + ": no dataset /g/Z; "},
      {in("/X/Z"), h5 + ": no dataset /X/Z (/X is not a group)"},
      {in("/g"), h5 + ": /g is not a dataset (a group)"},
      {in("/soft"), h5 + ", dataset /soft: is a soft link to /nothing, which does not exist"},
      {in("/dangling"), h5 + ", dataset /dangling: is an external link to /X in 'gone.h5', which is missing"},
      {in("/via/X"), h5 + ", dataset /via/X: /via is an external link to /g in 'gone.h5', which is missing"},
      {in("/cube"), h5 + ", dataset /cube: has 3 dimensions"},
      {in("/ints"), h5 + ", dataset /ints: holds integers of 4 bytes"},
      {in("/bools"), h5 + ", dataset /bools: holds booleans (an HDF5 enum of 1 byte, as h5py stores bool)"},
      {in("/text"), h5 + ", dataset /text: holds strings"},
      {in("/unwritten"), h5 + ", dataset /unwritten: was never written"},
      {in("/unwritten_chunks"), h5 + ", dataset /unwritten_chunks: was never written"},
      {in("/no_fill"), h5 + ", dataset /no_fill: has chunks that were never written and no fill value"},
      {in("/lzf"), h5 + ", dataset /lzf: is compressed with filter 'lzf' (HDF5 filter 32000)"},
      {in("/nan"), h5 + ", dataset /nan: row 5, column 2 (1-based): non-finite value"},
      {{pca, "--input", (dir / "vds_missing.h5").string() + ":/X"},
       (dir / "vds_missing.h5").string() + ", dataset /X: virtual dataset whose source file 'missing_source.h5' is missing"},
      {{pca, "--input", (dir / "efl_missing.h5").string() + ":/X"},
       (dir / "efl_missing.h5").string() + ", dataset /X: stores its data in the external file 'nothere.bin', "
                                           "which is missing (looked for 'nothere.bin')"},
  };
}

}  // namespace

// The deadlock class: at 3 ranks, through kpca's block-cyclic read (where
// an unwritten dataset hung in "distribute": ranks with rows left H5Dread
// early, a rank without rows waited in its collective), every error path
// ends on every rank within the time limit.
TEST(Hdf5ErrorsCli, EveryErrorPathFailsOnEveryRankAtThreeRanks) {
  REQUIRE_FIXTURES();
  for (const Hdf5Case& c : error_cases(dir, "kpca")) expect_hdf5_refused(c.args, 3, c.expected);
}

TEST(Hdf5ErrorsCli, ErrorPathsAtOneAndFourRanks) {
  REQUIRE_FIXTURES();
  const std::vector<Hdf5Case> cases = error_cases(dir);
  for (int np : {1, 4})
    for (std::size_t i = 0; i < cases.size(); i += np == 1 ? 2 : 3)
      expect_hdf5_refused(cases[i].args, np, cases[i].expected);
}

// A never-written dataset of 2^31 rows (the Nystrom route reads panels of
// landmarks): refused at once, on every rank, at 2 and 3 ranks.
TEST(Hdf5ErrorsCli, HugeUnwrittenDatasetIsRefusedUnderNystrom) {
  REQUIRE_FIXTURES();
  for (int np : {2, 3})
    expect_hdf5_refused({"kpca", "--input", (dir / "x.h5").string() + ":/huge_unwritten",
                         "--approx", "nystrom", "--landmarks", "20"},
                        np,
                        (dir / "x.h5").string() + ", dataset /huge_unwritten: was never written");
  for (const char* command : {"kpca", "mds", "pca"})
    expect_hdf5_refused({command, "--input", (dir / "x.h5").string() + ":/unwritten"}, 2,
                        (dir / "x.h5").string() + ", dataset /unwritten: was never written");
}

// Chunks never written read as the fill value (0), as h5py reads them; a
// virtual dataset, external raw storage and gzip read as the data itself.
TEST(Hdf5ErrorsCli, DatasetsParallelHdf5CannotReadCollectivelyRead) {
  REQUIRE_FIXTURES();
  const Matrix full = embed({"--input", (dir / "x.npy").string()}, 1, "npy");
  const Matrix partial = embed({"--input", (dir / "partial.npy").string()}, 1, "partial_npy");
  ASSERT_EQ(full.rows, 40u);
  ASSERT_EQ(partial.rows, 40u);
  for (int np : {1, 4}) {
    EXPECT_LT(max_abs_diff(embed({"--input", (dir / "partial.h5").string()}, np, "partial"), partial), 1e-9)
        << "unwritten chunks at " << np << " ranks";
    EXPECT_LT(max_abs_diff(embed({"--input", (dir / "vds.h5").string()}, np, "vds"), full), 1e-9)
        << "virtual dataset at " << np << " ranks";
    EXPECT_LT(max_abs_diff(embed({"--input", (dir / "efl.h5").string()}, np, "efl"), full), 1e-9)
        << "external storage at " << np << " ranks";
    EXPECT_LT(max_abs_diff(embed({"--input", (dir / "gzip.h5").string()}, np, "gzip"), full), 1e-9)
        << "gzip at " << np << " ranks";
  }
}

// An input reached through an external link or a virtual dataset inside
// the output directory is protected like a plain path.
TEST(Hdf5ErrorsCli, FilesBehindLinksAreNotReplaced) {
  ASSERT_FALSE(fixtures().empty()) << "no h5py at /usr/bin/python3 (python3-h5py)";
  const fs::path dir = scratch_dir("h5_links");
  const fs::path result = dir / "RESULT";
  const RunResult first = run_kembed({"pca", "--input", (fixtures() / "x.npy").string(), "-k", "2", "-o",
                                      result.string(), "--output-format", "h5", "--quiet"},
                                     2);
  ASSERT_TRUE(first.all_ranks_succeeded()) << first.describe();
  ASSERT_TRUE(fs::exists(result / "embedding.h5"));
  const std::string before = read_file(result / "embedding.h5");
  const std::string script =
      "import h5py, sys, os\n"
      "os.chdir(sys.argv[1])\n"
      "with h5py.File('links.h5', 'w') as f:\n"
      "    f['X'] = h5py.ExternalLink('RESULT/embedding.h5', '/embedding')\n"
      "    f['g'] = h5py.ExternalLink('RESULT/embedding.h5', '/')\n"
      "layout = h5py.VirtualLayout(shape=(40, 2), dtype='f8')\n"
      "layout[:] = h5py.VirtualSource('RESULT/embedding.h5', 'embedding', shape=(40, 2))\n"
      "with h5py.File('vds.h5', 'w') as f:\n"
      "    f.create_virtual_dataset('X', layout)\n";
  write_file(dir / "links.py", script);
  ASSERT_EQ(std::system((std::string(kPython) + " " + sh_quote((dir / "links.py").string()) + " " +
                         sh_quote(dir.string()))
                            .c_str()),
            0);
  const std::string links = (dir / "links.h5").string();
  const std::vector<std::vector<std::string>> inputs = {
      {"--input", links + ":/X"},
      {"--input", links, "--dataset", "/X"},
      {"--input", links + ":/g/embedding"},
      {"--input", (dir / "vds.h5").string() + ":/X"},
  };
  for (int np : {1, 4})
    for (const auto& input : inputs) {
      const RunResult r = run_kembed(concat(concat({"pca"}, input), {"-k", "1", "-o", result.string(), "--quiet"}), np);
      EXPECT_FALSE(r.timed_out()) << r.describe();
      EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
      EXPECT_TRUE(contains(r.err, "kembed: error: output directory '" + result.string() + "' contains '"))
          << r.describe();
      EXPECT_TRUE(contains(r.err, "embedding.h5', which this run reads")) << r.describe();
      EXPECT_EQ(read_file(result / "embedding.h5"), before) << "the linked input was replaced";
    }
  // Elsewhere, the same link reads the result's embedding.
  const RunResult ok = run_kembed({"pca", "--input", links + ":/X", "-k", "1", "-o", (dir / "other").string(),
                                   "--quiet"},
                                  3);
  EXPECT_TRUE(ok.all_ranks_succeeded()) << ok.describe();
}

// Devices are refused by name before anything is read (/dev/zero would be
// read until memory runs out), for every input format and command input.
TEST(Hdf5ErrorsCli, DevicesAreRefusedByName) {
  const fs::path dir = scratch_dir("devices");
  fs::create_symlink("/dev/zero", dir / "zero.npy");
  fs::create_symlink("/dev/zero", dir / "zero.h5");
  fs::create_symlink("/dev/zero", dir / "zero.bin");
  fs::create_symlink("/dev/zero", dir / "zero.csv");
  const std::string device = "is a character device, not a file: kembed reads input from regular files, FIFOs "
                             "and standard input ('-')";
  for (int np : {1, 4}) {
    expect_hdf5_refused({"pca", "--input", "/dev/zero"}, np, "'/dev/zero' " + device);
    expect_hdf5_refused({"pca", "--input", "/dev/urandom"}, np, "'/dev/urandom' " + device);
    for (const char* name : {"zero.npy", "zero.h5", "zero.csv"})
      expect_hdf5_refused({"pca", "--input", (dir / name).string()}, np,
                          "'" + (dir / name).string() + "' " + device);
    expect_hdf5_refused(
        {"pca", "--input", (dir / "zero.bin").string(), "--rows", "4", "--cols", "2"}, np,
        "'" + (dir / "zero.bin").string() + "' " + device);
    expect_hdf5_refused({"mds", "--input", "/dev/zero"}, np, "'/dev/zero' " + device);
    expect_hdf5_refused({"ca", "--input", "/dev/zero"}, np, "'/dev/zero' " + device);
  }
  // A FIFO is still read to its end.
  const fs::path fifo = dir / "pipe.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const RunResult r = run_kembed({"pca", "--input", fifo.string(), "-k", "1", "-o", (dir / "out").string(), "--quiet"},
                                 1, "(printf '1,2\\n3,5\\n4,4\\n6,1\\n' > " + sh_quote(fifo.string()) + " &) ; ");
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
}
