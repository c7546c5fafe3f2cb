#pragma once
// Integers in an array file (array_file.hpp holds 4-byte float slots): their
// raw little-endian bytes, padded to whole slots. Used by dynamic_files.cpp
// and cpr_dynamic.cpp.
#include <cstdint>
#include <cstring>
#include <vector>

namespace checkpoint {

template <class T>
std::vector<float> pack(const std::vector<T>& v) {
  std::vector<float> out((v.size() * sizeof(T) + sizeof(float) - 1) / sizeof(float), 0.0f);
  if (!v.empty())
    std::memcpy(out.data(), v.data(), v.size() * sizeof(T));
  return out;
}

// The first n integers of a packed array (f holds at least slots<T>(n)).
template <class T>
std::vector<T> unpack(const std::vector<float>& f, std::size_t n) {
  std::vector<T> out(n);
  if (n)
    std::memcpy(out.data(), f.data(), n * sizeof(T));
  return out;
}

// The float slots n integers of T take.
template <class T>
std::uint64_t slots(std::uint64_t n) {
  return (n * sizeof(T) + sizeof(float) - 1) / sizeof(float);
}

} // namespace checkpoint
