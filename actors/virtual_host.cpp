#include "actors/virtual_host.hpp"

namespace actors {

virtual_engine_iface*& current_engine() {
  thread_local virtual_engine_iface* engine = nullptr;
  return engine;
}

} // namespace actors
