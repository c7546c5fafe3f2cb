#include "data/printable.hpp"

#include <cstdint>
#include <cstdio>

namespace data {

namespace {

// Length of the valid UTF-8 sequence at s[0] encoding a code point >= U+00A0
// (so no C1 control), or 0.
std::size_t utf8_printable(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const std::uint8_t c = b(0);
  std::size_t n;
  std::uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07u;
  } else {
    return 0;
  }
  if (s.size() < n)
    return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0u) != 0x80u)
      return 0;
    cp = (cp << 6) | (b(i) & 0x3Fu);
  }
  const std::uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp < 0xA0)
    return 0; // overlong, out of range, a surrogate, or a C1 control
  return n;
}

} // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<std::uint8_t>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out.push_back(char(c));
      ++i;
      continue;
    }
    if (const std::size_t n = c >= 0x80 ? utf8_printable(text.substr(i)) : 0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    char buf[5];
    std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
    out += buf;
    ++i;
  }
  return out;
}

} // namespace data
