#pragma once
// What the screenshot tests share: the real inputs they picture, and where the pictures go.

#include <QDir>
#include <QString>

#include <string>

namespace screenshot_test {

/// A real input (a path from realdata_paths.h) and the name its pictures start with.
struct ScreenshotInput {
    const char* name;
    std::string path;
};

/// Where pictures go for a person to look at: VRAMSCOPE_SCREENSHOT_DIR, else the current
/// directory; made when it is missing.
inline QString screenshotDir() {
    const QString dir = qEnvironmentVariable("VRAMSCOPE_SCREENSHOT_DIR", QDir::currentPath());
    QDir().mkpath(dir);
    return dir;
}

}  // namespace screenshot_test
