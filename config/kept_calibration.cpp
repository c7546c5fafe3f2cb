#include "config/kept_calibration.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <thread>

#ifndef SS_ISA_NAME
#define SS_ISA_NAME "x86-64"
#endif

namespace runtime {

namespace {

// An environment variable's value, "" when unset.
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Lower-case letters and digits, every other run of characters one '-'.
std::string slug(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c))
      out += char(std::tolower(c));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out;
}

} // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      auto v = line.substr(line.find(':') + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "unknown CPU";
}

std::string build_isa_level() { return SS_ISA_NAME; }

std::string this_machine_key() {
  return slug(cpu_model_name()) + "-" + slug(build_isa_level()) + "-" +
         std::to_string(std::thread::hardware_concurrency()) + "core";
}

std::string kept_calibration_path() {
  std::string dir = env("SHADOWSYNC_STATE_DIR");
  if (dir.empty() && !env("XDG_STATE_HOME").empty())
    dir = env("XDG_STATE_HOME") + "/shadowsync";
  if (dir.empty() && !env("HOME").empty())
    dir = env("HOME") + "/.local/state/shadowsync";
  if (dir.empty())
    return "";
  return dir + "/calibrations/" + this_machine_key() + ".json";
}

bool uses_virtual_clock(const option_set& o) {
  return o.get_string("cluster.mode") == "simulated" && o.get_string("sim.clock") == "virtual";
}

std::string effective_calibration(const option_set& o) {
  const auto& value = o.get_string("sim.calibration");
  if (value == this_machine_calibration && !uses_virtual_clock(o))
    return "";
  return value;
}

} // namespace runtime
