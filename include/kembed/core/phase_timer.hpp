#pragma once
/// @file Wall time per pipeline phase.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace kembed {

class Comm;

/// Accumulates wall time per named phase, in the order phases first appear.
class PhaseTimer {
 public:
  PhaseTimer() = default;
  /// A timer whose phase starts are also fault-injection points (collective).
  explicit PhaseTimer(const Comm& comm) : comm_(&comm) {}
  /// Ends the running phase (if any) and starts `phase`. Collective when the
  /// timer was given a communicator.
  void start(const std::string& phase);
  /// Ends the running phase.
  void stop();
  /// Collective: seconds per phase, the maximum over ranks.
  /// @pre every rank ran the same phases in the same order
  std::vector<std::pair<std::string, double>> max_over_ranks(const Comm& comm) const;

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<std::pair<std::string, double>> phases_;
  std::string running_;
  const Comm* comm_ = nullptr;
  Clock::time_point since_;
};

}  // namespace kembed
