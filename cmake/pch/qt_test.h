// Precompiled for the GUI test executable (cmake/build_speed.cmake), with qt.h and gtest.h.
#pragma once

#include <QSignalSpy>
#include <QTest>
