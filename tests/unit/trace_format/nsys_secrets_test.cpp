// The environment, command-line, user and host records of an Nsight Systems report can hold
// secrets: a report built here with a secret in each never shows it in the loaded trace, in
// `vramscope-cli info` (text and JSON) or `report --json`, nor in the .vscope `convert` writes.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "nsys_test_support.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

using vramscope_test::globalId;
using vramscope_test::NsysTempDir;
using vramscope_test::readAll;
using vramscope_test::SqlDb;

constexpr const char* kSecret = "s3cr3t-TOKEN-8f2e";

/// Output (stdout and stderr) of the CLI with `args`.
std::string runCli(const std::string& args) {
    const std::string cmd = std::string(VRAMSCOPE_CLI_PATH) + " " + args + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    std::string out;
    char buf[4096];
    while (pipe && fgets(buf, sizeof buf, pipe.get()) != nullptr) {
        out += buf;
    }
    return out;
}

TEST(NsysSecrets, TheReportsEnvironmentNeverComesOut) {
    NsysTempDir dir;
    const std::string path = dir.file("secret.sqlite");
    const std::string secret = kSecret;
    {
        SqlDb db(path);
        db.exec(vramscope_test::kNsysReportSchema);
        db.exec(
            "CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, "
            "name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL);"
            "CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);"
            "CREATE TABLE TARGET_INFO_PROCESS (processId INTEGER NOT NULL, openGlVersion TEXT "
            "NOT NULL, correlationId INTEGER NOT NULL, nameId INTEGER NOT NULL);");
        db.exec("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'x', 'Hostname', 1, 'host-" +
                secret + "'), (0, 'x', 'DeviceEnvironment', 2, 'API_KEY=" + secret + "');" +
                "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', "
                "'TOKEN=" +
                secret + "'), ('PROCESS_0:ARGUMENT_1', '--password=" + secret + "');" +
                "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', "
                "'3.13.2'), ('EXPORT_USER', 'user-" +
                secret + "'), ('EXPORT_HOST', 'h-" + secret +
                "'), ('EXPORT_PARAM_INPUT_PATH_ABS', '/home/" + secret + "/r.nsys-rep');" +
                "INSERT INTO PROCESSES VALUES (" + std::to_string(globalId(9)) +
                ", 9, './train --key=" + secret + "');" +
                "INSERT INTO StringIds VALUES (1, 'kernel'), (2, 'cmd " + secret + "');" +
                "INSERT INTO TARGET_INFO_PROCESS VALUES (9, '', 0, 2);" +
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 1, NULL, 7, 0, " +
                std::to_string(globalId(9)) + ", 1, 1, NULL, 1, 1);");
    }
    ASSERT_NE(readAll(path).find(secret), std::string::npos);  // the secret is in the report

    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const TraceData& d = t->data;
    EXPECT_EQ(d.kernels.size(), 1u);
    std::string everything = d.header.producer + d.header.host + d.header.jobId;
    for (const auto& s : d.strings) {
        everything += s + "\n";
    }
    for (const auto& [k, v] : d.header.captureSettings) {
        everything += k + "=" + v + "\n";
    }
    for (const auto& dev : d.header.devices) {
        everything += dev.name + dev.uuid;
    }
    for (const auto& p : t->report.problems) {
        everything += p.describe();
    }
    for (const auto& l : d.dataLoss) {
        everything += l.reason;
    }
    EXPECT_EQ(everything.find(secret), std::string::npos);

    for (const std::string& args :
         {"info " + path, "info --json " + path, "report --json " + path, "report " + path}) {
        const std::string out = runCli(args);
        EXPECT_NE(out.find(args == "report " + path ? "1 input" : "secret.sqlite"),
                  std::string::npos)
            << args << ":\n"
            << out;
        EXPECT_EQ(out.find(secret), std::string::npos) << args;
    }
    const std::string converted = dir.file("out.vscope");
    runCli("convert " + path + " -o " + converted);
    size_t written = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
        if (e.path().extension() == ".vscope") {
            ++written;
            EXPECT_EQ(readAll(e.path().string()).find(secret), std::string::npos);
        }
    }
    EXPECT_EQ(written, 1u);
}

}  // namespace
}  // namespace vramscope::trace
