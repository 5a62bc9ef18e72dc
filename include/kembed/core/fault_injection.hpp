#pragma once
/// @file A switch for tests only: make one rank fail at a chosen phase.
///
/// KEMBED_FAULT_INJECT="PHASE:RANK" makes rank RANK throw when phase PHASE
/// starts (the error is then agreed like any other);
/// KEMBED_FAULT_INJECT="PHASE:RANK:kill" makes it die by SIGKILL instead, to
/// test what the other ranks and mpirun do when a rank disappears.
#include <string>

namespace kembed {

class Comm;

/// Collective: a fault-injection point at the start of `phase`. Does nothing
/// unless KEMBED_FAULT_INJECT names this phase.
void fault_checkpoint(const Comm& comm, const std::string& phase);

}  // namespace kembed
