// GoogleTest main for the GUI tests: one QApplication for all tests, offscreen, with QSettings
// kept out of the user's configuration and out of every other test process's: ctest runs each
// test in a process of its own, several at once, and two processes writing one settings file
// would see each other's memory budget, layout or recent files.
#include <QApplication>
#include <QDir>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("vramscope-tests"));
    QApplication::setApplicationName(QStringLiteral("vramscope-gui-test"));
    // This process's own settings folder, removed when it ends.
    QTemporaryDir settingsDir(QDir::tempPath() + QStringLiteral("/vramscope-gui-test-XXXXXX"));
    if (!settingsDir.isValid()) {
        return 1;
    }
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir.path());
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
