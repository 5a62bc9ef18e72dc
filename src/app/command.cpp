#include "kembed/app/command.hpp"

#include "kembed/app/kpca_command.hpp"

namespace kembed::app {

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"kpca", "kernel PCA of a data matrix (or of a precomputed kernel)", kpca_options, run_kpca},
  };
  return all;
}

}  // namespace kembed::app
