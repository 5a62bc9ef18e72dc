#include "kembed/app/cli.hpp"
#include "kembed/mpi/session.hpp"

int main(int argc, char** argv) {
  kembed::MpiSession mpi(argc, argv);
  return kembed::app::run(argc, argv);
}
