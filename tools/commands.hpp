#pragma once
// Sub-commands of the `shadowsync` executable. Each returns the process exit
// code: 0 success, 1 runtime failure, 2 bad usage or configuration.
#include <string>
#include <vector>

namespace tools {

constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

int train_command(const std::vector<std::string>& args);
int datagen_command(const std::vector<std::string>& args);

} // namespace tools
