#include "runtime/json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace runtime {

void json_writer::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back())
      out_ += ',';
    first_.back() = false;
  }
}

json_writer& json_writer::begin_object() {
  separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_object() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

json_writer& json_writer::begin_array() {
  separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_array() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

json_writer& json_writer::key(std::string_view k) {
  value(k);
  out_ += ':';
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(double v) {
  if (!std::isfinite(v))
    return null();
  separate();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  out_ += buf;
  return *this;
}

json_writer& json_writer::value(std::int64_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}

json_writer& json_writer::value(std::uint64_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}

json_writer& json_writer::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}

json_writer& json_writer::value(std::string_view v) {
  separate();
  out_ += '"';
  for (char c : v) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\t': out_ += "\\t"; break;
      case '\r': out_ += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_ += buf;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
  return *this;
}

json_writer& json_writer::null() {
  separate();
  out_ += "null";
  return *this;
}

} // namespace runtime
