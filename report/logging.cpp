#include "report/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace runtime {

void setup_logging(const std::string& level) {
  auto logger = spdlog::get("shadowsync");
  if (!logger)
    logger = spdlog::stderr_color_mt("shadowsync");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%H:%M:%S.%e %^%l%$ %v");
  auto lvl = spdlog::level::from_str(level);
  spdlog::set_level(lvl == spdlog::level::off ? spdlog::level::info : lvl);
}

} // namespace runtime
