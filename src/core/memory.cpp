#include "kembed/core/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace kembed {

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::int64_t current_rss_bytes() {
  // getrusage has only the peak; Linux gives the current size in pages here.
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (!statm) return peak_rss_bytes();
  long long size_pages = 0, resident_pages = 0;
  const int read = std::fscanf(statm, "%lld %lld", &size_pages, &resident_pages);
  std::fclose(statm);
  const long page = sysconf(_SC_PAGESIZE);
  if (read != 2 || page <= 0) return peak_rss_bytes();
  return static_cast<std::int64_t>(resident_pages) * page;
}

}  // namespace kembed
