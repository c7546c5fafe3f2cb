#pragma once
// A minimal streaming JSON writer for the metrics file and benchmark output.
// Keys and values are written in call order; NaN and infinities become null.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace runtime {

class json_writer {
public:
  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view k);
  json_writer& value(double v);
  json_writer& value(std::int64_t v);
  json_writer& value(std::uint64_t v);
  json_writer& value(int v) { return value(static_cast<std::int64_t>(v)); }
  json_writer& value(bool v);
  json_writer& value(std::string_view v);
  json_writer& value(const char* v) { return value(std::string_view{v}); }
  json_writer& null();
  // key(k).value(v) in one call.
  template <class T>
  json_writer& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  const std::string& str() const { return out_; }

private:
  void separate();
  std::string out_;
  std::vector<bool> first_; // per open container: nothing written yet
  bool after_key_ = false;
};

} // namespace runtime
