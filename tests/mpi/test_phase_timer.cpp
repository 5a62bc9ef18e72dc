// PhaseTimer's progress lines on stderr: one line per phase start and end on
// rank 0 only, nothing when quiet, the elapsed and phase times against the
// test's own clock, the memory column against the test's own allocation, and
// the verbose spread over ranks against times the test makes each rank take.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/mpi/comm.hpp"
#include "test_support.hpp"

using kembed::Comm;
using kembed::PhaseTimer;
using kembed::Verbosity;
using kembed::test::all_ranks;

namespace {

using Clock = std::chrono::steady_clock;

// Redirects this process's stderr (file descriptor 2) into a file until finish().
class StderrCapture {
 public:
  explicit StderrCapture(std::string path) : path_(std::move(path)) {
    std::fflush(stderr);
    saved_ = dup(2);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  ~StderrCapture() { restore(); }
  /// Everything written to stderr since construction.
  std::string finish() {
    restore();
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

std::string capture_path(const Comm& comm, const std::string& test) {
  return kembed::test::scratch_dir(comm, "phase_timer_" + test) + "/stderr." +
         std::to_string(comm.rank());
}

// One parsed progress line: "kembed: [ ELAPSED s, MEMORY MB|GB] MESSAGE".
struct Line {
  double elapsed = -1;
  double bytes = -1;
  std::string message;
};

std::vector<Line> parse(const std::string& text, std::string* bad) {
  static const std::regex format(R"(kembed: \[ *([0-9]+\.[0-9]) s, +([0-9]+(\.[0-9])?) (MB|GB)\] (.*))");
  std::vector<Line> lines;
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    std::smatch m;
    if (!std::regex_match(raw, m, format)) {
      *bad += "'" + raw + "' ";
      continue;
    }
    lines.push_back({std::stod(m[1]), std::stod(m[2]) * (m[4] == "GB" ? 1e9 : 1e6), m[5]});
  }
  return lines;
}

// Seconds in "NAME done in 1.23 s" or similar (-1 if absent).
double seconds_after(const std::string& message, const std::string& prefix) {
  if (message.rfind(prefix, 0) != 0) return -1;
  return std::stod(message.substr(prefix.size()));
}

// Seconds since this process was started, from the kernel (not from kembed).
double process_age() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;  // field 22: start time in clock ticks
  const double started = std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream uptime("/proc/uptime");
  double now = 0;
  uptime >> now;
  return now - started;
}

void sleep_for(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace

TEST(PhaseTimer, NormalPrintsEachStartAndEndOnRankZeroOnly) {
  auto comm = Comm::world();
  const std::string path = capture_path(comm, "normal");
  double measured_alpha = 0, age_after = 0;
  std::vector<std::pair<std::string, double>> phases;
  std::string text;
  {
    StderrCapture capture(path);
    PhaseTimer timer(comm);  // normal by default
    const auto t0 = Clock::now();
    timer.start("alpha");
    sleep_for(0.15);
    timer.start("beta");  // ends alpha
    const auto t1 = Clock::now();
    timer.stop();
    measured_alpha = std::chrono::duration<double>(t1 - t0).count();
    age_after = process_age();
    phases = timer.max_over_ranks(comm);  // not verbose: prints nothing more
    text = capture.finish();
  }
  std::string bad;
  const auto lines = parse(text, &bad);
  EXPECT_EQ(bad, "");
  bool ok = true;
  if (comm.is_root()) {
    std::vector<std::string> messages;
    for (const auto& l : lines) messages.push_back(l.message);
    ASSERT_EQ(messages.size(), 4u) << text;
    EXPECT_EQ(messages[0], "alpha ...");
    EXPECT_EQ(messages[2], "beta ...");
    const double alpha = seconds_after(messages[1], "alpha done in ");
    const double beta = seconds_after(messages[3], "beta done in ");
    // Printed to 0.01 s; the test's clock brackets the phase from outside.
    EXPECT_GE(alpha, 0.15 - 0.005) << text;
    EXPECT_LE(alpha, measured_alpha + 0.005) << text;
    EXPECT_GE(beta, 0.0);
    EXPECT_LT(beta, 0.1) << text;
    // Elapsed: nondecreasing, the gap across alpha matches its duration, and
    // it counts from the process start (within the loader's start-up time).
    for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_GE(lines[i].elapsed, lines[i - 1].elapsed);
    EXPECT_NEAR(lines[1].elapsed - lines[0].elapsed, alpha, 0.1 + 0.01);
    EXPECT_LE(lines[3].elapsed, age_after + 0.05 + 0.02) << text;
    EXPECT_GE(lines[3].elapsed, age_after - 2.0) << text;
    for (const auto& l : lines) EXPECT_GT(l.bytes, 1e6) << "resident memory below 1 MB?";
  } else {
    ok = text.empty();
    EXPECT_EQ(text, "") << "rank " << comm.rank() << " printed";
  }
  EXPECT_TRUE(all_ranks(comm, ok));
  // The accounting API is unchanged: both phases, the maximum over ranks.
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].first, "alpha");
  EXPECT_EQ(phases[1].first, "beta");
  EXPECT_GE(phases[0].second, 0.15);
  EXPECT_EQ(phases[0].second, comm.max(phases[0].second));
}

TEST(PhaseTimer, QuietAndDefaultTimersPrintNothing) {
  auto comm = Comm::world();
  std::string text;
  {
    StderrCapture capture(capture_path(comm, "quiet"));
    PhaseTimer quiet(comm, Verbosity::quiet);
    PhaseTimer silent;  // no communicator: library callers and tests
    quiet.start("one");
    silent.start("one");
    quiet.note("a note");
    kembed::progress(comm, Verbosity::quiet, "a progress line");
    quiet.stop();
    silent.stop();
    const auto phases = quiet.max_over_ranks(comm);
    EXPECT_EQ(phases.size(), 1u);
    EXPECT_EQ(silent.max_over_ranks(comm).size(), 1u);
    text = capture.finish();
  }
  EXPECT_EQ(text, "");
  EXPECT_TRUE(all_ranks(comm, text.empty()));
}

TEST(PhaseTimer, ProgressAndNoteLinesOnRankZero) {
  auto comm = Comm::world();
  std::string text;
  {
    StderrCapture capture(capture_path(comm, "progress"));
    kembed::progress(comm, Verbosity::normal, "krylov cycle 3: 7 of 10 converged");
    PhaseTimer timer(comm, Verbosity::quiet);
    timer.set_verbosity(Verbosity::verbose);
    EXPECT_EQ(timer.verbosity(), Verbosity::verbose);
    timer.note("a note");
    text = capture.finish();
  }
  std::string bad;
  const auto lines = parse(text, &bad);
  EXPECT_EQ(bad, "");
  if (comm.is_root()) {
    ASSERT_EQ(lines.size(), 2u) << text;
    EXPECT_EQ(lines[0].message, "krylov cycle 3: 7 of 10 converged");
    EXPECT_EQ(lines[1].message, "a note");
  } else {
    EXPECT_EQ(text, "");
  }
  EXPECT_TRUE(all_ranks(comm, comm.is_root() ? lines.size() == 2 : text.empty()));
}

TEST(PhaseTimer, MemoryColumnIsTheCurrentResidentSize) {
  auto comm = Comm::world();
  constexpr std::size_t bytes = 400'000'000;
  std::string text;
  {
    StderrCapture capture(capture_path(comm, "memory"));
    PhaseTimer timer(comm);
    timer.note("before");
    {
      std::vector<char> block(bytes);
      std::fill(block.begin(), block.end(), 1);  // touch every page
      volatile char keep = block[bytes / 2];
      (void)keep;
      timer.note("allocated");
    }
    // Freed: an allocation this large is its own mapping, returned to the
    // system at once; a peak (rather than current) size would not drop.
    timer.note("freed");
    text = capture.finish();
  }
  std::string bad;
  const auto lines = parse(text, &bad);
  EXPECT_EQ(bad, "");
  bool ok = true;
  if (comm.is_root()) {
    ok = lines.size() == 3;
    EXPECT_EQ(lines.size(), 3u) << text;
    if (ok) {
      // Printed to 1 MB (or 0.1 GB above 1 GB): 400 MB must show as >= 250 MB.
      EXPECT_GE(lines[1].bytes - lines[0].bytes, 250e6) << text;
      EXPECT_LE(lines[2].bytes, lines[1].bytes - 250e6) << text;
    }
  }
  EXPECT_TRUE(all_ranks(comm, ok));
}

TEST(PhaseTimer, VerboseReportsTheSpreadOverRanks) {
  auto comm = Comm::world();
  const int p = comm.size();
  std::vector<std::pair<std::string, double>> phases;
  std::string text;
  double measured = 0;  // this rank's phase, bracketed by the test's clock
  {
    StderrCapture capture(capture_path(comm, "verbose"));
    PhaseTimer timer(comm, Verbosity::verbose);
    const auto t0 = Clock::now();
    timer.start("work");
    sleep_for(0.05 * (comm.rank() + 1));  // rank r takes 0.05 (r + 1) s
    timer.stop();
    measured = std::chrono::duration<double>(Clock::now() - t0).count();
    phases = timer.max_over_ranks(comm);
    text = capture.finish();
  }
  std::string bad;
  const auto lines = parse(text, &bad);
  EXPECT_EQ(bad, "");
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_GE(phases[0].second, 0.05 * p);
  if (comm.is_root()) {
    // work ..., work done in, the spread, the peak memory line.
    ASSERT_EQ(lines.size(), 4u) << text;
    const std::regex spread(R"(work: ([0-9.]+) s max, ([0-9.]+) s min over ([0-9]+) ranks)");
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[2].message, m, spread)) << text;
    const double most = std::stod(m[1]), least = std::stod(m[2]);
    EXPECT_EQ(std::stoi(m[3]), p);
    EXPECT_NEAR(most, phases[0].second, 0.005 + 1e-9);
    // The fastest rank is at most rank 0 (which slept least), the slowest at
    // least rank p - 1 (which slept 0.05 p s); printed to 0.01 s.
    EXPECT_GE(least, 0.05 - 0.005);
    EXPECT_LE(least, measured + 0.005) << text;
    EXPECT_GE(most, 0.05 * p - 0.005) << text;
    EXPECT_EQ(lines[3].message.rfind("peak resident memory per rank: ", 0), 0u) << text;
  } else {
    EXPECT_EQ(text, "");
  }
}
