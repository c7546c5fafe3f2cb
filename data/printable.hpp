#pragma once
// Text from an input file made safe for a log line or a terminal: control
// bytes (C0, DEL, and the C1 controls U+0080-U+009F), bytes that are not
// valid UTF-8, and backslashes become \xNN escapes; valid printable UTF-8
// passes as it is. A line of data can then never move the cursor, change
// colours or retitle the terminal of whoever reads the log.
#include <string>
#include <string_view>

namespace data {

std::string printable(std::string_view text);

} // namespace data
