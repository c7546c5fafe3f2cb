#pragma once
// Checked reads of a JSON object's fields, for the files that come back from
// disk: checkpoint manifests, CPR chains, synthetic data sidecars.
// nlohmann's get<T>() converts any number to any arithmetic type with a
// static_cast: 4.4e83 read as std::uint64_t is undefined behaviour (found by
// the checkpoint fuzz target), -1 becomes 2^64 - 1 and 2.5 becomes 2. Here an
// integer field must hold a JSON integer that fits T, a double field any
// number, and anything else is refused with the key and what came.
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace data {

// The value v of the field called `name` (for the refusal), as T.
template <class T>
T json_value(const nlohmann::json& v, const std::string& name) {
  auto refuse = [&](const char* expected) {
    std::string got = v.dump();
    if (got.size() > 40)
      got = got.substr(0, 40) + "...";
    return std::runtime_error("field '" + name + "': expected " + expected + ", got " + got);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean())
      throw refuse("true or false");
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_unsigned_v<T>) {
      if (!v.is_number_unsigned() ||
          v.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<T>::max()})
        throw refuse(std::numeric_limits<T>::digits > 32 ? "an integer from 0 to 2^64-1"
                                                         : "an integer from 0 to 2^32-1");
      return static_cast<T>(v.get<std::uint64_t>());
    } else {
      if (!v.is_number_integer())
        throw refuse("an integer");
      if (v.is_number_unsigned()) {
        if (v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<T>::max()))
          throw refuse("a smaller integer");
        return static_cast<T>(v.get<std::uint64_t>());
      }
      const auto x = v.get<std::int64_t>();
      if (x < std::int64_t{std::numeric_limits<T>::min()} ||
          x > std::int64_t{std::numeric_limits<T>::max()})
        throw refuse("a smaller integer");
      return static_cast<T>(x);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number())
      throw refuse("a number");
    return v.get<T>();
  } else {
    static_assert(std::is_same_v<T, std::string>, "json_value reads bool, integers, doubles "
                                                  "and strings");
    if (!v.is_string())
      throw refuse("a string");
    return v.get<std::string>();
  }
}

// object[key] as T; a missing key throws nlohmann's out_of_range.
template <class T>
T json_field(const nlohmann::json& object, const char* key) {
  return json_value<T>(object.at(key), key);
}

} // namespace data
