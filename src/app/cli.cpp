#include "kembed/app/cli.hpp"

namespace kembed::app {
int run(int, char**) { return 0; }
}  // namespace kembed::app
