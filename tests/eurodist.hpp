#pragma once
// R's `eurodist` (datasets package): road distances in km between 21
// European cities, the classic non-Euclidean dissimilarities of R's
// cmdscale examples. Written out by
//   Rscript -e 'cat(as.vector(eurodist), sep = ", ")'
// (R 4.2.2): the lower triangle column by column, as R's dist objects hold it.
#include <cstddef>
#include <vector>

namespace kembed::test {

inline constexpr int kEurodistSize = 21;

inline constexpr double kEurodistLower[] = {
    3313, 2963, 3175, 3339, 2762, 3276, 2610, 4485, 2977, 3030, 4532, 2753, 3949, 2865, 2282,
    2179, 3000, 817,  3927, 1991, 1318, 1326, 1294, 1498, 2218, 803,  1172, 2018, 1490, 1305,
    645,  636,  521,  1014, 1365, 1033, 1460, 2868, 1802, 204,  583,  206,  966,  677,  2256,
    597,  172,  2084, 690,  1558, 1011, 925,  747,  285,  1511, 1616, 1175, 460,  409,  1136,
    747,  2224, 714,  330,  2052, 739,  1550, 1059, 1077, 977,  280,  1662, 1786, 1381, 785,
    1545, 853,  2047, 1115, 731,  1827, 789,  1347, 1101, 1209, 1160, 340,  1794, 2196, 1588,
    760,  1662, 2436, 460,  269,  2290, 714,  1764, 1035, 911,  583,  465,  1497, 1403, 937,
    1418, 3196, 460,  269,  2971, 1458, 2498, 1778, 1537, 1104, 1176, 2050, 650,  1455, 1975,
    1118, 895,  1936, 158,  1439, 425,  328,  591,  513,  995,  2068, 1019, 2897, 2428, 676,
    1817, 698,  1693, 2185, 2565, 1971, 2631, 3886, 2974, 550,  2671, 1159, 2198, 1479, 1238,
    805,  877,  1751, 949,  1155, 2280, 863,  1730, 1183, 1098, 851,  457,  1683, 1500, 1205,
    1178, 668,  1762, 2250, 2507, 1799, 2700, 3231, 2937, 1281, 320,  328,  724,  471,  1048,
    2108, 1157, 1157, 1724, 2010, 1273, 2097, 3188, 2409, 618,  1109, 792,  1011, 2428, 1363,
    331,  856,  586,  2187, 898,  821,  946,  1754, 428,  1476, 1827, 1249, 2707, 1209, 2105};
static_assert(sizeof(kEurodistLower) / sizeof(double) == kEurodistSize * (kEurodistSize - 1) / 2);

/// The 21 x 21 eurodist matrix, row-major (symmetric, zero diagonal).
inline std::vector<double> eurodist_matrix() {
  const int n = kEurodistSize;
  std::vector<double> d(std::size_t(n) * n, 0.0);
  std::size_t t = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i) {
      d[std::size_t(i) * n + j] = kEurodistLower[t];
      d[std::size_t(j) * n + i] = kEurodistLower[t];
      ++t;
    }
  return d;
}

}  // namespace kembed::test
