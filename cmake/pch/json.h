// Precompiled for targets that read or write JSON (cmake/build_speed.cmake).
#pragma once

#include <nlohmann/json.hpp>
