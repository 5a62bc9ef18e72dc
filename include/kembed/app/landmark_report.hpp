#pragma once
// What a landmark MDS fit writes, whether its distances were given or
// geodesic (mds --approx landmark, isomap --approx landmark): the embedding,
// eigenvalues.csv and run.json's spectrum fields.

#include <string>

#include "kembed/app/driver.hpp"
#include "kembed/approx/landmark_mds.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::app {

/// Collective: embedding.csv and eigenvalues.csv (eigenvalue scaled to n,
/// landmark eigenvalue, explained variance ratio over the positive spectrum
/// of B_L), and run.json's spectrum, memory and sign fields. `distances`
/// names what Delta squares ("distances", "geodesic distances"), `exact`
/// the exact method the eigenvalues estimate ("mds", "isomap").
void write_landmark_fit(Run& run, const approx::LandmarkMdsResult& r, int k,
                        const std::string& distances, const std::string& exact, const Comm& world);

}  // namespace kembed::app
