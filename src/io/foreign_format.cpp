#include "io/foreign_format.hpp"

#include <cstring>

namespace kembed::io {

namespace {

bool starts_with(const std::string& head, const char* magic, std::size_t length, std::size_t at = 0) {
  return head.size() >= at + length && std::memcmp(head.data() + at, magic, length) == 0;
}

/// The name of the first member of a zip archive (local file header), or "".
std::string first_zip_member(const std::string& head) {
  if (head.size() < 30) return {};
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(head[i]); };
  const std::size_t length = byte(26) | (byte(27) << 8);
  return head.substr(30, length);
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

bool is_hdf5(const std::string& head) {
  static const char signature[] = "\x89HDF\r\n\x1a\n";
  for (const std::size_t at : {0, 512, 1024, 2048})
    if (starts_with(head, signature, 8, at)) return true;
  return false;
}

std::string foreign_format(const std::string& path, const std::string& head) {
  const std::string what = path + ": ";
  const std::string reads = "; kembed reads text (CSV, TSV, whitespace), .npy, .bin and HDF5";
  // A copyable conversion to .npy, importing numpy and `module`.
  const auto to_npy = [](const std::string& module) {
    return "python3 -c \"import numpy" + (module.empty() ? "" : ", " + module) + "; numpy.save('X.npy', ";
  };
  if (is_hdf5(head))
    return what + "an HDF5 file, and this kembed was built without HDF5 support (kembed --version "
           "lists the formats it reads): rebuild with libhdf5-openmpi-dev installed, or convert the "
           "dataset: " + to_npy("h5py") + "h5py.File(" + quoted(path) + ")['/DATASET'][...])\"";
  if (starts_with(head, "\x1f\x8b", 2))
    return what + "a gzip-compressed file" + reads + ": decompress it first (gunzip -k " + quoted(path) +
           ", or zcat " + quoted(path) + " | kembed ... --input -)";
  if (starts_with(head, "PK\x03\x04", 4) || starts_with(head, "PK\x05\x06", 4)) {
    const std::string member = first_zip_member(head);
    if (member.size() > 4 && member.compare(member.size() - 4, 4, ".npy") == 0)
      return what + "a NumPy .npz archive" + reads + ": save one of its arrays as .npy: " + to_npy("") +
             "numpy.load(" + quoted(path) + ")['" + member.substr(0, member.size() - 4) + "'])\"";
    return what + "a zip archive" + (member.empty() ? "" : " (first member '" + member + "')") + reads +
           ": extract it first (unzip " + quoted(path) + "); a spreadsheet (.xlsx, .ods) must be saved as CSV";
  }
  if (starts_with(head, "PAR1", 4))
    return what + "an Apache Parquet file" + reads + ": convert it: " + to_npy("pandas") + "pandas.read_parquet(" +
           quoted(path) + ").to_numpy('float64'))\"";
  if (starts_with(head, "BZh", 3))
    return what + "a bzip2-compressed file" + reads + ": decompress it first (bunzip2 -k " + quoted(path) + ")";
  if (starts_with(head, "\xfd" "7zXZ\x00", 6))
    return what + "an xz-compressed file" + reads + ": decompress it first (unxz -k " + quoted(path) + ")";
  if (starts_with(head, "\x28\xb5\x2f\xfd", 4))
    return what + "a zstd-compressed file" + reads + ": decompress it first (unzstd " + quoted(path) + ")";
  if (starts_with(head, "ARROW1", 6))
    return what + "an Apache Arrow/Feather file" + reads + ": convert it: " + to_npy("pandas") +
           "pandas.read_feather(" + quoted(path) + ").to_numpy('float64'))\"";
  if (starts_with(head, "\x93NUMPY", 6))
    return what + "a NumPy .npy file without the .npy extension: rename it to end in .npy";
  if (starts_with(head, "CDF\x01", 4) || starts_with(head, "CDF\x02", 4))
    return what + "a NetCDF (classic) file" + reads + ": convert the variable: " + to_npy("netCDF4") +
           "netCDF4.Dataset(" + quoted(path) + ")['VAR'][:])\"";
  if (starts_with(head, "MATLAB 5.0 MAT-file", 19))
    return what + "a MATLAB .mat (v5) file" + reads + ": convert the variable: " + to_npy("scipy.io") +
           "scipy.io.loadmat(" + quoted(path) + ")['VAR'])\"";
  if (starts_with(head, "\xd0\xcf\x11\xe0", 4))
    return what + "an old Microsoft Office file (.xls?)" + reads + ": save it as CSV";
  if (starts_with(head, "\xff\xfe", 2) || starts_with(head, "\xfe\xff", 2))
    return what + "UTF-16 text; kembed reads UTF-8: convert it (iconv -f UTF-16 -t UTF-8 " + quoted(path) + ")";
  const std::size_t nul = head.find('\0');
  if (nul != std::string::npos)
    return what + "a binary file (byte " + std::to_string(nul + 1) + " is NUL), not text" + reads +
           " (raw float64 needs the .bin extension and --rows, --cols)";
  return {};
}

}  // namespace kembed::io
