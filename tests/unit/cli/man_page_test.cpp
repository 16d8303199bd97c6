// The man page of vramscope-cli against the command table (commandTable(), the source of every
// command's --help): the page's COMMANDS section has one subsection per command of the table, in
// the table's order, and each subsection's option items (.TP tags) name exactly the options of
// that command's row. The page is read as roff text, not through our own help.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_command.h"
#include "test_files.h"

namespace vramscope::app {
namespace {

/// One .SS subsection of the page's COMMANDS section: the command (first word of its title)
/// and the options its .TP item tags name.
struct ManCommand {
    std::string name;
    std::set<std::string> options;
};

/// The options a roff tag line names: "\-\-json", ".BR \-o ", " \-\-output", ".BI \-\-at\-oom".
std::set<std::string> tagOptions(std::string line) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '-') {
            text += '-';
            ++i;
        } else if (line[i] == '\\' && i + 2 < line.size() && line[i + 1] == 'f') {
            i += 2;  // \fI, \fR: a font change
        } else {
            text += line[i];
        }
    }
    std::set<std::string> found;
    static const std::regex kOption(R"((?:^|[\s",])(--?[A-Za-z][A-Za-z0-9-]*))");
    for (std::sregex_iterator it(text.begin(), text.end(), kOption), end; it != end; ++it) {
        found.insert((*it)[1].str());
    }
    return found;
}

/// The subsections of .SH COMMANDS, in page order. An item's tag is the line after .TP (or
/// .TQ, a further tag of the same item); it may continue on the next line when it ends in a
/// backslash (a roff line continuation).
std::vector<ManCommand> manCommands(const std::string& page) {
    std::vector<ManCommand> commands;
    std::istringstream in(page);
    std::string line;
    bool inCommands = false;
    bool tagNext = false;
    std::string tag;
    while (std::getline(in, line)) {
        if (line.rfind(".SH ", 0) == 0) {
            inCommands = line == ".SH COMMANDS";
            continue;
        }
        if (!inCommands) {
            continue;
        }
        if (line.rfind(".SS ", 0) == 0) {
            std::string title = line.substr(4);
            if (!title.empty() && title.front() == '"') {
                title.erase(0, 1);
            }
            commands.push_back({title.substr(0, title.find(' ')), {}});
            continue;
        }
        if (line == ".TP" || line == ".TQ") {  // .TQ: a further tag of the same item
            tagNext = true;
            tag.clear();
            continue;
        }
        if (tagNext && !commands.empty()) {
            if (!line.empty() && line.back() == '\\') {
                tag += line.substr(0, line.size() - 1);
                continue;
            }
            tag += line;
            const std::set<std::string> options = tagOptions(tag);
            commands.back().options.insert(options.begin(), options.end());
            tagNext = false;
        }
    }
    return commands;
}

std::string manPage() {
    return testdata::readFile(std::string(VRAMSCOPE_SOURCE_DIR) + "/docs/man/vramscope-cli.1");
}

std::string joined(const std::set<std::string>& names) {
    std::string s;
    for (const std::string& n : names) {
        s += (s.empty() ? "" : " ") + n;
    }
    return s;
}

TEST(ManPage, ParsesTheOptionsOfATagLine) {
    // The forms the page uses, read by hand: a flag, an option with a value, an alias pair, a
    // tag naming several options.
    EXPECT_EQ(tagOptions(R"(.B \-\-json)"), (std::set<std::string>{"--json"}));
    EXPECT_EQ(tagOptions(R"(.BI \-\-at\-oom " N")"), (std::set<std::string>{"--at-oom"}));
    EXPECT_EQ(tagOptions(R"(.BR \-o ", " \-\-output " \fIOUT\fR")"),
              (std::set<std::string>{"-o", "--output"}));
    EXPECT_EQ(tagOptions(R"(.BI \-\-capacity ", " \-\-gpu\-hour\-price " P")"),
              (std::set<std::string>{"--capacity", "--gpu-hour-price"}));
}

TEST(ManPage, HasOneSectionPerCommandOfTheTableInItsOrder) {
    const std::string page = manPage();
    ASSERT_FALSE(page.empty()) << "docs/man/vramscope-cli.1 is missing";
    std::vector<std::string> inPage;
    for (const ManCommand& c : manCommands(page)) {
        inPage.push_back(c.name);
    }
    std::vector<std::string> inTable;
    for (const CommandSpec& c : commandTable()) {
        inTable.emplace_back(c.name);
    }
    EXPECT_EQ(inPage, inTable);
    EXPECT_EQ(inTable.size(), 15u);  // info ... replay, as cli_main.cpp registers them
}

TEST(ManPage, ListsExactlyTheOptionsOfEachCommand) {
    const std::vector<ManCommand> page = manCommands(manPage());
    ASSERT_FALSE(page.empty());
    for (const CommandSpec& spec : commandTable()) {
        std::set<std::string> table;
        for (const OptionSpec& o : spec.options) {
            table.emplace(o.name);
            if (!o.alias.empty()) {
                table.emplace(o.alias);
            }
        }
        const ManCommand* man = nullptr;
        for (const ManCommand& c : page) {
            if (c.name == spec.name) {
                man = &c;
            }
        }
        ASSERT_NE(man, nullptr) << spec.name << " has no section in the man page";
        std::set<std::string> missing, extra;
        for (const std::string& o : table) {
            if (man->options.count(o) == 0) {
                missing.insert(o);
            }
        }
        for (const std::string& o : man->options) {
            if (table.count(o) == 0) {
                extra.insert(o);
            }
        }
        EXPECT_TRUE(missing.empty() && extra.empty())
            << spec.name << ": the man page lacks {" << joined(missing)
            << "} and lists options the command does not take {" << joined(extra) << "}";
    }
}

TEST(ManPage, EveryCommandPrintsTheHelpOfItsTableRow) {
    // What `vramscope-cli NAME --help` prints is its row's help, and that names every option.
    for (const CommandSpec& spec : commandTable()) {
        std::ostringstream out, err;
        ASSERT_EQ(runCli({std::string(spec.name), "--help"}, out, err), kExitSuccess) << spec.name;
        if (out.str().find("built without Qt") != std::string::npos) {
            continue;  // render and review in a build without the GUI: they cannot draw
        }
        EXPECT_EQ(out.str(), commandHelp(spec)) << spec.name;
        for (const OptionSpec& o : spec.options) {
            EXPECT_NE(out.str().find("\n  " + std::string(o.name)), std::string::npos)
                << spec.name << " " << o.name;
        }
    }
}

}  // namespace
}  // namespace vramscope::app
