#pragma once
/// @file Result directories that appear whole or not at all, and that never
/// replace anything kembed did not write.
///
/// The rules (also in the README, "Output directories"):
/// - `--output-dir DIR` may be absent (created, with missing parents), an
///   empty directory, or an earlier kembed result: a directory whose marker
///   file (kResultMarker) lists every entry in it. A result a user added a file
///   to is no longer an earlier result.
/// - Anything else is refused before any work: a directory with other files,
///   a regular file, a symbolic link, the current, root or home directory,
///   and any DIR that is, contains or lies inside a path the run reads.
/// - Staging happens in a hidden sibling whose name has a fixed length
///   (".kembed-tmp-<hash>-<pid>"), so any legal DIR name works.
#include <functional>
#include <string>
#include <vector>

#include "kembed/io/text_sink.hpp"

namespace kembed::io {

/// Name of the marker file in every result directory kembed writes.
inline constexpr const char* kResultMarker = ".kembed-result";

/// Checks, before any work, that `path` may become a result directory under
/// the rules above; `reads` are the files and directories the run reads.
/// Throws Error saying why and what to do otherwise. Serial (call on one rank).
void check_output_path(const std::string& path, const std::vector<std::string>& reads = {});

/// A result directory staged in a hidden sibling and committed by rename, so
/// readers see either the earlier complete result or the new complete one,
/// never a mix. Serial (rank 0). An uncommitted staging directory is removed
/// on destruction; those left by killed runs (marked as kembed's, written on
/// this host by a process that no longer exists) when the next run starts.
class OutputDir {
 public:
  /// Checks `path` (see check_output_path), creates missing parents and the
  /// staging directory.
  explicit OutputDir(std::string path, const std::vector<std::string>& reads = {});
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir();

  /// Full path of `name` inside the staging directory.
  std::string file(const std::string& name) const;
  /// Writes `contents` to `name` in the staging directory and fsyncs it.
  void write(const std::string& name, const std::string& contents) const;
  /// The same with the contents handed over in pieces by `produce`, so that
  /// a large file is never held whole.
  void write(const std::string& name, const std::function<void(const TextSink&)>& produce) const;
  /// Makes the staged files the result: writes the marker, syncs, swaps the
  /// staging directory with an earlier result or empty directory (atomic
  /// rename) and removes that. Throws if DIR changed since the check into
  /// something that may not be replaced.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> reads_;
  std::string staging_;
  bool committed_ = false;
};

}  // namespace kembed::io
