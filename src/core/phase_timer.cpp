#include "kembed/core/phase_timer.hpp"

#include <cstdio>

#include "kembed/core/fault_injection.hpp"
#include "kembed/core/memory.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed {

namespace {

using Clock = std::chrono::steady_clock;

// Set during static initialization, before main: elapsed times in progress
// lines count from (nearly) the start of the process, MPI start-up included.
const Clock::time_point process_start = Clock::now();

// Decimal units, as the memory plan prints them; MB below 1 GB so that small
// runs do not all read "0.0 GB". Fixed widths keep the log's columns aligned.
std::string format_bytes(double bytes) {
  char text[32];
  if (bytes >= 1e9)
    std::snprintf(text, sizeof text, "%5.1f GB", bytes / 1e9);
  else
    std::snprintf(text, sizeof text, "%5.0f MB", bytes / 1e6);
  return text;
}

std::string format_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

// One whole line per call and a flush, so that a batch log shows it at once
// and lines of other output do not cut into it.
void print_line(const std::string& message) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - process_start).count();
  char head[32];
  std::snprintf(head, sizeof head, "[%7.1f s, ", elapsed);
  const std::string line = "kembed: " + std::string(head) +
                           format_bytes(static_cast<double>(current_rss_bytes())) + "] " + message +
                           "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

void progress(const Comm& comm, Verbosity verbosity, const std::string& message) {
  if (verbosity != Verbosity::quiet && comm.is_root()) print_line(message);
}

bool PhaseTimer::printing() const {
  return comm_ && verbosity_ != Verbosity::quiet && comm_->is_root();
}

void PhaseTimer::note(const std::string& message) const {
  if (printing()) print_line(message);
}

void PhaseTimer::start(const std::string& phase) {
  stop();
  if (comm_) fault_checkpoint(*comm_, phase);
  running_ = phase;
  since_ = Clock::now();
  if (printing()) print_line(phase + " ...");
}

void PhaseTimer::stop() {
  if (running_.empty()) return;
  const double seconds = std::chrono::duration<double>(Clock::now() - since_).count();
  bool found = false;
  for (auto& [name, total] : phases_)
    if (name == running_) total += seconds, found = true;
  if (!found) phases_.emplace_back(running_, seconds);
  if (printing()) print_line(running_ + " done in " + format_seconds(seconds));
  running_.clear();
}

std::vector<std::pair<std::string, double>> PhaseTimer::max_over_ranks(const Comm& comm) const {
  const bool verbose = verbosity_ == Verbosity::verbose;
  auto result = phases_;
  for (auto& entry : result) {
    const double local = entry.second;
    entry.second = comm.max(local);
    if (!verbose) continue;
    // Load imbalance shows as a gap between the slowest and the fastest rank.
    const double fastest = comm.min(local);
    if (comm.is_root())
      print_line(entry.first + ": " + format_seconds(entry.second) + " max, " +
                 format_seconds(fastest) + " min over " + std::to_string(comm.size()) + " ranks");
  }
  if (verbose) {
    const auto peak = static_cast<long long>(peak_rss_bytes());
    const long long most = comm.max(peak), least = comm.min(peak);
    if (comm.is_root())
      print_line("peak resident memory per rank: " + format_bytes(static_cast<double>(most)) +
                 " max, " + format_bytes(static_cast<double>(least)) + " min");
  }
  return result;
}

}  // namespace kembed
