// Precompiled for the test executables (cmake/build_speed.cmake).
#pragma once

#include <gtest/gtest.h>
