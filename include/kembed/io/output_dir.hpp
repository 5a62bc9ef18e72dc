#pragma once
/// @file Result directories that appear whole or not at all.
#include <string>

namespace kembed::io {

/// Checks, before any work, that `path` can become a result directory: it is
/// a directory or does not exist, and its parent exists and is writable.
/// Throws Error naming the path otherwise. Serial (call on one rank).
void check_output_path(const std::string& path);

/// A result directory staged in a hidden sibling (".<name>.tmp-<pid>") and
/// committed by rename, so readers see either the earlier complete result or
/// the new complete one, never a mix. Serial (rank 0). Uncommitted staging
/// directories are removed on destruction, and those left by killed runs
/// (their process no longer exists) when the next run starts.
class OutputDir {
 public:
  explicit OutputDir(std::string path);
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir();

  /// Full path of `name` inside the staging directory.
  std::string file(const std::string& name) const;
  /// Writes `contents` to `name` in the staging directory and fsyncs it.
  void write(const std::string& name, const std::string& contents) const;
  /// Makes the staged files the result: syncs, swaps the staging directory
  /// with any earlier result (atomic rename), removes the earlier one.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string staging_;
  bool committed_ = false;
};

}  // namespace kembed::io
