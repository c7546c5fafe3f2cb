#pragma once
// CRC32C (Castagnoli, the iSCSI polynomial 0x1EDC6F41), the checksum of every
// checkpoint file (manifest "crc32c"). Computed by ISA-L (libisal-dev), which
// picks the CPU's fastest implementation at run time.
//
// crc32c_extend(0, p, n) is the standard CRC32C of [p, p + n), e.g.
// crc32c_extend(0, "123456789", 9) == 0xE3069283; chaining
// crc32c_extend(crc32c_extend(0, a, na), b, nb) equals the CRC of a then b.
#include <cstddef>
#include <cstdint>

namespace checkpoint {

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t n);

} // namespace checkpoint
