#include "kembed/app/landmark_report.hpp"

#include <algorithm>
#include <vector>

#include "kembed/core/memory.hpp"
#include "kembed/io/csv_writer.hpp"

namespace kembed::app {

void write_landmark_fit(Run& run, const approx::LandmarkMdsResult& r, int k,
                        const std::string& distances, const std::string& exact, const Comm& world) {
  run.write_rows("embedding.csv", io::numbered_columns("c", k), r.embedding);
  double positive = 0;
  for (double v : r.landmark_spectrum) positive += std::max(v, 0.0);
  std::vector<double> ratios;
  for (double v : r.eigenvalues) ratios.push_back(v / positive);
  run.write("eigenvalues.csv", [&] {
    std::vector<double> table;
    for (int j = 0; j < k; ++j)
      table.insert(table.end(), {r.scaled_eigenvalues[j], r.eigenvalues[j], ratios[j]});
    return io::format_csv({"eigenvalue", "landmark_eigenvalue", "explained_variance_ratio"}, table);
  });
  Json& report = run.report;
  report["components"] = k;
  report["double_centering"] = "B_L = -1/2 J Delta J (M x M), J = I - 11^T/M, Delta = squared " +
                               distances + " among the landmarks";
  report["eigenvalues"] = r.scaled_eigenvalues;
  report["landmark_eigenvalues"] = r.eigenvalues;
  report["eigenvalues_definition"] =
      "eigenvalues = landmark_eigenvalues * n / M, the estimate of the top eigenvalues of the "
      "n x n B of exact " +
      exact + "; landmark_eigenvalues = top k eigenvalues of B_L";
  report["explained_variance_ratio"] = ratios;
  report["explained_variance_ratio_denominator"] = "sum of the positive eigenvalues of B_L";
  report["landmark_negative_eigenvalues"] = r.negative_count;
  report["landmark_smallest_eigenvalue"] = r.landmark_spectrum.back();
  report["zero_eigenvalue_threshold"] = r.zero_threshold;
  report["solver_used"] = "LAPACK dsyevd on the M x M B_L (rank 0, broadcast)";
  report["memory_estimate_bytes_per_rank"] = r.memory_estimate;
  report["memory_limit_bytes_per_rank"] = r.memory_limit;
  report["peak_memory_bytes_per_rank"] =
      world.allgatherv(std::vector<long long>{static_cast<long long>(peak_rss_bytes())});
  report["embedding_scale"] =
      "landmark coordinates V_k sqrt(Lambda_k); every point triangulated into them";
  report["sign_convention"] = "largest |entry| of each embedding column is positive";
}

}  // namespace kembed::app
