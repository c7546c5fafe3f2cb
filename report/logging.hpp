#pragma once
// Logging setup: one thread-safe stderr logger (actors log from several
// threads) as spdlog's default, with a compact pattern.
#include <string>

namespace runtime {

// level: trace | debug | info | warn | error. Unknown names mean info.
void setup_logging(const std::string& level);

} // namespace runtime
