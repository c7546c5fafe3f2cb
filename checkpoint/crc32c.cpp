#include "checkpoint/crc32c.hpp"

#include <climits>

#include <isa-l/crc.h>

namespace checkpoint {

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t n) {
  // ISA-L keeps the register un-inverted between calls: invert on the way in
  // and out, so callers see the standard (reflected, final-xor) value.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  std::uint32_t r = ~crc;
  while (n > 0) {
    const std::size_t step = n > std::size_t(INT_MAX) ? std::size_t(1) << 30 : n;
    r = crc32_iscsi(p, static_cast<int>(step), r);
    p += step;
    n -= step;
  }
  return ~r;
}

} // namespace checkpoint
