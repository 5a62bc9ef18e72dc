#pragma once
/// @file Wall time per pipeline phase, reported as the run goes.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "kembed/core/verbosity.hpp"

namespace kembed {

class Comm;

/// Accumulates wall time per named phase, in the order phases first appear.
/// Given a communicator and a verbosity above quiet, rank 0 also prints one
/// line on stderr when each phase starts and one when it ends, e.g.
///   kembed: [   3.2 s,  1.1 GB] assemble ...
///   kembed: [   5.0 s,  1.9 GB] assemble done in 1.8 s
/// (time since the process started, rank 0's resident memory now), so a long
/// batch job shows in its log where it is.
class PhaseTimer {
 public:
  /// A silent timer (no communicator: unit tests and library callers).
  PhaseTimer() = default;
  /// A timer whose phase starts are also fault-injection points (collective),
  /// printing progress on rank 0 of `comm` unless `verbosity` is quiet.
  /// @pre `comm` outlives the timer; `verbosity` is the same on every rank
  explicit PhaseTimer(const Comm& comm, Verbosity verbosity = Verbosity::normal)
      : comm_(&comm), verbosity_(verbosity) {}
  /// Ends the running phase (if any) and starts `phase`. Collective when the
  /// timer was given a communicator.
  void start(const std::string& phase);
  /// Ends the running phase.
  void stop();
  /// Collective: seconds per phase, the maximum over ranks. When verbose,
  /// rank 0 also prints each phase's minimum and maximum over ranks and the
  /// peak resident memory over ranks.
  /// @pre every rank ran the same phases in the same order
  std::vector<std::pair<std::string, double>> max_over_ranks(const Comm& comm) const;

  Verbosity verbosity() const { return verbosity_; }
  /// @pre the same on every rank
  void set_verbosity(Verbosity verbosity) { verbosity_ = verbosity; }
  /// A progress line in the same format (rank 0; nothing when quiet or
  /// without a communicator), e.g. a solver's iteration count.
  void note(const std::string& message) const;

 private:
  using Clock = std::chrono::steady_clock;
  bool printing() const;
  std::vector<std::pair<std::string, double>> phases_;
  std::string running_;
  const Comm* comm_ = nullptr;
  Verbosity verbosity_ = Verbosity::quiet;
  Clock::time_point since_;
};

/// Prints `message` as a progress line on rank 0's stderr, prefixed with the
/// time since the process started and rank 0's resident memory, flushed;
/// nothing when `verbosity` is quiet. Not collective.
void progress(const Comm& comm, Verbosity verbosity, const std::string& message);

}  // namespace kembed
