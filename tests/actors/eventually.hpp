#pragma once
// The real-threads actor tests' wait: a condition polled every 2 ms for up
// to 10 s (the threaded scheduler gives no point at which to check it).
#include <chrono>
#include <thread>

namespace test {

// Whether `pred` came true within 10 s.
template <class Pred>
bool eventually(Pred pred) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

} // namespace test
