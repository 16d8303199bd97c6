// The shared-mime-info type application/x-vramscope (packaging/linux/vramscope-mime.xml): a
// database built from it by update-mime-database recognises .vscope files by name and by their
// first bytes. The bytes come from a file the trace writer made (the bundled sample), so the XML's
// magic is checked against the format, not against itself.
#include <gtest/gtest.h>

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QMimeDatabase>
#include <QTemporaryDir>

#include <cstdlib>
#include <string>

namespace {

const QString kType = QStringLiteral("application/x-vramscope");

QByteArray readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

/// A MIME database holding only our type, in `dir`/mime, made by update-mime-database (which
/// also refuses a malformed XML file). Returns false with a reason when it cannot be made.
bool buildDatabase(const QString& dir, std::string& why) {
    const QString packages = dir + QStringLiteral("/mime/packages");
    if (!QDir().mkpath(packages)) {
        why = "cannot make " + packages.toStdString();
        return false;
    }
    const QByteArray xml =
        readFile(QStringLiteral(VRAMSCOPE_SOURCE_DIR "/packaging/linux/vramscope-mime.xml"));
    if (xml.isEmpty() || !writeFile(packages + QStringLiteral("/vramscope.xml"), xml)) {
        why = "cannot copy vramscope-mime.xml";
        return false;
    }
    const std::string command =
        "update-mime-database '" + (dir + QStringLiteral("/mime")).toStdString() + "' >/dev/null";
    if (std::system(command.c_str()) != 0) {
        why = command + " failed";
        return false;
    }
    return true;
}

class MimeType : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (std::system("command -v update-mime-database >/dev/null 2>&1") != 0) {
            s_skip = "update-mime-database (package shared-mime-info) is not installed";
            return;
        }
        s_dir = new QTemporaryDir;
        std::string why;
        if (!buildDatabase(s_dir->path(), why)) {
            s_failure = why;
            return;
        }
        // Read before the first QMimeDatabase: ours first, then the system's (for the types a
        // non-trace file gets).
        qputenv("XDG_DATA_HOME", (s_dir->path() + QStringLiteral("/home")).toLocal8Bit());
        qputenv("XDG_DATA_DIRS", (s_dir->path() + QStringLiteral(":/usr/share")).toLocal8Bit());
    }
    static void TearDownTestSuite() {
        delete s_dir;
        s_dir = nullptr;
    }
    void SetUp() override {
        if (!s_skip.empty()) {
            GTEST_SKIP() << s_skip;
        }
        ASSERT_TRUE(s_failure.empty()) << s_failure;
    }
    static QString path(const char* name) { return s_dir->path() + QLatin1Char('/') + name; }

    static inline QTemporaryDir* s_dir = nullptr;
    static inline std::string s_skip;
    static inline std::string s_failure;
};

const char* const kSample = VRAMSCOPE_SOURCE_DIR "/resources/sample/sample-rank0.vscope";

TEST_F(MimeType, KnowsATraceByItsNameAlone) {
    QMimeDatabase db;
    EXPECT_EQ(db.mimeTypeForFile(QStringLiteral("/nowhere/run-rank3.vscope"),
                                 QMimeDatabase::MatchExtension)
                  .name(),
              kType);
}

TEST_F(MimeType, KnowsATraceByItsFirstBytesWithoutTheExtension) {
    const QByteArray sample = readFile(QString::fromUtf8(kSample));
    ASSERT_GT(sample.size(), 64);
    ASSERT_TRUE(writeFile(path("trace-without-extension"), sample));
    QMimeDatabase db;
    EXPECT_EQ(
        db.mimeTypeForFile(path("trace-without-extension"), QMimeDatabase::MatchContent).name(),
        kType);
    // The 8 magic bytes alone are enough: nothing after them is needed.
    EXPECT_EQ(db.mimeTypeForData(sample.left(8)).name(), kType);
}

TEST_F(MimeType, DoesNotClaimFilesThatDifferInTheMagic) {
    QByteArray bytes = readFile(QString::fromUtf8(kSample));
    ASSERT_GT(bytes.size(), 64);
    QMimeDatabase db;
    for (int i : {0, 1, 6, 7}) {  // 0x89, 'V', 'E', '\n': first, second and last two bytes
        QByteArray changed = bytes;
        changed[i] = static_cast<char>(changed[i] ^ 0x20);
        EXPECT_NE(db.mimeTypeForData(changed).name(), kType) << "byte " << i << " changed";
    }
    EXPECT_NE(db.mimeTypeForData(QByteArray("{\"traceEvents\": []}")).name(), kType);
}

}  // namespace
