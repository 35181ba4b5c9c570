// The one way a duration in seconds is written for a reader (the report's explanations and key
// figures, the CLI's notes): three significant digits or so, "n/a" when unknown.
#pragma once

#include <string>

namespace scaleprof {

// "123.4 s" from 100 s up, "12.34 s" from 1 s, "0.123 s" below; "n/a" for NaN or infinity.
std::string seconds_text(double seconds);

}  // namespace scaleprof
