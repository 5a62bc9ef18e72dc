#pragma once
/// @file MPI lifetime as an object: declare it first in main so it ends last.

namespace kembed {

/// Initializes MPI on construction and finalizes it on destruction.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();
};

}  // namespace kembed
