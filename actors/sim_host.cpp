#include "actors/sim_host.hpp"

namespace actors {

host_fabric*& current_fabric() {
  thread_local host_fabric* engine = nullptr;
  return engine;
}

} // namespace actors
