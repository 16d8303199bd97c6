#include "vramscope/widgets/time_mapper.h"

#include <algorithm>
#include <cmath>

namespace vramscope::widgets {

double TimeMapper::widthPx() const {
    return std::max(1.0, right - left);
}

double TimeMapper::spanNs() const {
    return static_cast<double>(std::max<int64_t>(1, range.durationNs()));
}

double TimeMapper::xAt(int64_t timeNs) const {
    return left + static_cast<double>(timeNs - range.startNs) * widthPx() / spanNs();
}

int64_t TimeMapper::timeAt(double x) const {
    return range.startNs + durationAt(x - left);
}

int64_t TimeMapper::durationAt(double dx) const {
    return static_cast<int64_t>(std::llround(dx * spanNs() / widthPx()));
}

}  // namespace vramscope::widgets
