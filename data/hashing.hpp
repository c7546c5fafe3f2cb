#pragma once
// Hashing of categorical values. This is a stable, documented function: the
// PyTorch reference (bench/torch_reference.py) reimplements it bit for bit.
//
//   h = FNV-1a-64(bytes of the value as written in the file; "" when missing)
//   h ^= (column + 1) * 0x9E3779B97F4A7C15     (column: 0-based categorical index)
//   h = splitmix64_finalizer(h)
//   row = h mod rows_per_table                 (done by the model, not here)
//
// A missing value is hashed like the empty string, so "missing" is a category
// of its own per column.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace data {

inline std::uint64_t splitmix64_finalize(std::uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

inline std::uint64_t hash_categorical(std::string_view value, std::size_t column) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  h ^= static_cast<std::uint64_t>(column + 1) * 0x9E3779B97F4A7C15ULL;
  return splitmix64_finalize(h);
}

// The user key of GAUC (schema_options::user): FNV-1a-64 of the raw value
// ("" when missing), through the same finaliser, with no column term. It
// depends on the value alone, not on the column or the table size.
inline std::uint64_t hash_user(std::string_view value) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return splitmix64_finalize(h);
}

} // namespace data
