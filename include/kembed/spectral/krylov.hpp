#pragma once
/// @file A restarted block Krylov eigensolver for the top k eigenpairs.
#include <cstdint>
#include <functional>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// How a stored matrix K is multiplied by a block (StoredOperator): `local` is
/// one dgemm per rank over its whole block of K and one reduction
/// (BlockProduct, the default, measured faster); `pdgemm` is ScaLAPACK's
/// product, the reference.
enum class KrylovProduct { local, pdgemm };

struct KrylovSettings {
  /// On ||A v - theta v|| / ||A||_2-estimate of every returned pair. 1e-12 keeps
  /// fits on different rank counts and grids within 1e-10 of each other
  /// (tests/cli/test_cli_accuracy) for at most a few more cycles; 1e-10 gave
  /// 4e-10 and 1e-11 gave 1.1e-10 there. Round-off stays far below it
  /// (2e-14 relative at n = 40000).
  double tol = 1e-12;
  std::uint64_t seed = 42;    ///< start block; the same for every rank count and grid
  int block = 0;              ///< block width b (0: max(k + max(4, k/4), 24); at least k
                              ///< unless `keep` is given)
  /// Ritz vectors a restart keeps (0: b). Given, the block may be narrower
  /// than k: a thick restart keeps max(keep, k, b) vectors, rounded up to a
  /// multiple of b (krylov_shape), and extends them
  /// by blocks of b (cheap operators, whose cost per column hardly falls with
  /// the block's width). Ignored (keep = b) where keep + b exceeds the basis.
  int keep = 0;
  int depth = 0;              ///< blocks per cycle q (0: krylov_depth's default); basis q*b columns
  int max_cycles = 300;       ///< restarts before giving up
  /// The product of the stored-matrix entry points (the operator entry point
  /// leaves the product to its operator and ignores it).
  KrylovProduct product = KrylovProduct::local;
  /// Called after every cycle (and when the pairs converge inside one; tol is
  /// tested after every block) on every rank, with identical arguments there
  /// (print from rank 0 only): the cycle (1-based), how many of the `wanted`
  /// pairs meet `tol`, and the largest relative residual among them. It must
  /// not call collectives. Empty: no progress reports.
  std::function<void(int cycle, int converged, int wanted, double max_residual)> progress{};
};

/// --tol with single-precision storage (--precision single): the default, and
/// the smallest accepted. The products' float round-off (sgemm sums of n
/// terms, the basis rounded to float) puts a floor under the residuals a
/// few times above 1e-8 of ||A|| at the sizes measured (README, bench/single.sh).
inline constexpr double kSingleDefaultTol = 1e-6;
inline constexpr double kSingleTolFloor = 1e-7;

struct KrylovResult {
  std::vector<double> values;     ///< k largest eigenvalues, descending
  DistMatrix vectors;             ///< n x k on a's grid and blocking
  std::vector<double> residuals;  ///< ||A v - theta v|| / norm_estimate per pair
  double norm_estimate = 0;       ///< max |Ritz value|, a lower bound of ||A||_2
  int cycles = 0;
  int matvecs = 0;                ///< block products A X (each n x b)
  bool converged = false;
  /// ||A v - theta v||_2 per pair, with no further product: from the Krylov
  /// relation A V = V T + V_next C E^T of the last Rayleigh-Ritz step (equal
  /// to the explicit residual up to double's round-off). With single-precision
  /// storage, once the relation meets tol, from one product of the Ritz
  /// vectors, which includes float's round-off in the product.
  std::vector<double> residual_norms;
  /// Single precision only: the relation met tol and the products did not,
  /// and a further cycle did not halve their residual (float's round-off).
  bool at_precision_floor = false;
  /// The iteration broke down and was stopped (see krylov_broke_down): the
  /// worst relative residual stayed above 1 for two cycles, or rose over
  /// kKrylovGrowthCycles cycles to more than 4 times its smallest value.
  bool broke_down = false;
  /// Worst relative residual at the end of every cycle, in order.
  std::vector<double> cycle_residuals;
};

/// Cycles of uninterrupted growth of the worst residual that count as a breakdown.
inline constexpr int kKrylovGrowthCycles = 4;

/// Whether the worst relative residuals at the ends of the cycles so far
/// (`history`) show a breakdown rather than slow convergence. For a unit
/// Ritz vector y with Ritz value theta, ||A y - theta y|| <= ||A||, and the
/// estimate of ||A|| is the largest |Ritz value|: a residual above 1 in two
/// consecutive cycles means the basis no longer represents A (it lost
/// orthogonality or its relation A V = V T + ...), as a rank-deficient or
/// highly degenerate spectrum can cause; so does a residual that grows for
/// kKrylovGrowthCycles cycles to more than 4 times its smallest value, where
/// a working restart makes it fall.
bool krylov_broke_down(const std::vector<double>& history);

/// Block width b for k wanted pairs: the setting, or max(k + max(4, k/4), 24).
int krylov_block_width(int k, const KrylovSettings& settings);
/// Blocks per restart cycle q for block width b on an n x n matrix: the
/// setting, or (b <= 32) as many as keep the basis of q b columns within n/2,
/// from 8 up to 12; 6 for wider blocks.
int krylov_depth(int b, const KrylovSettings& settings, std::int64_t n);

/// The solver's dimensions for k pairs of an n x n operator, decided here
/// for the solver and the memory plans alike: block width b, Ritz vectors
/// kept at a restart, and the basis's columns m (q blocks, at most n).
struct KrylovShape {
  int b = 0, keep = 0, m = 0;
};
KrylovShape krylov_shape(int k, const KrylovSettings& settings, std::int64_t n);

/// Collective over a.grid(): the k algebraically largest eigenpairs of the
/// symmetric operator `a`, by block Krylov subspaces with Rayleigh-Ritz and
/// thick restart on the best Ritz vectors (b of them, or settings.keep).
/// Work per cycle: about q products a.apply with an n x b block and O(n (qb)^2) for orthogonalization (block
/// Gram-Schmidt twice, CholeskyQR2) on a basis in a's row layout (a
/// DistMatrix on a (ranks x 1) grid with row block a.block_size()). Memory:
/// an n x (m+b) basis (no products A V are kept) and two n x keep blocks
/// for the Ritz vectors, never an n x n eigenvector matrix, beside a.cost(b).
/// When !a.exact_products(), a convergence the Krylov relation reports is
/// confirmed by an explicit product (see KrylovResult::at_precision_floor).
/// The vectors are returned on a.grid() in square blocks of a.block_size().
/// settings.product is not read. @pre 1 <= k <= a.order()
KrylovResult krylov_top_eigenpairs(SymmetricOperator& a, int k, const KrylovSettings& settings);
/// The same for the stored symmetric `a` (not modified; StoredOperator with
/// settings.product). @pre 1 <= k, a square with square blocks
KrylovResult krylov_top_eigenpairs(const DistMatrix& a, int k, const KrylovSettings& settings);
/// The same with `a` stored in single precision: the products are sgemm on
/// the basis rounded to float, everything else stays double, so the
/// residuals reach about float's round-off times ||A||, not double's
/// (settings.tol must allow that). @pre settings.product == local
KrylovResult krylov_top_eigenpairs(const SingleMatrix& a, int k, const KrylovSettings& settings);

}  // namespace kembed::spectral
