#include "kembed/core/phase_timer.hpp"

#include "kembed/core/fault_injection.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed {

void PhaseTimer::start(const std::string& phase) {
  stop();
  if (comm_) fault_checkpoint(*comm_, phase);
  running_ = phase;
  since_ = Clock::now();
}

void PhaseTimer::stop() {
  if (running_.empty()) return;
  const double seconds = std::chrono::duration<double>(Clock::now() - since_).count();
  bool found = false;
  for (auto& [name, total] : phases_)
    if (name == running_) total += seconds, found = true;
  if (!found) phases_.emplace_back(running_, seconds);
  running_.clear();
}

std::vector<std::pair<std::string, double>> PhaseTimer::max_over_ranks(const Comm& comm) const {
  auto result = phases_;
  for (auto& entry : result) entry.second = comm.max(entry.second);
  return result;
}

}  // namespace kembed
