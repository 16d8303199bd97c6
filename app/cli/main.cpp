// vramscope-cli entry point; the commands are in cli_main.cpp and command_*.cpp.
#include <iostream>
#include <string>
#include <vector>

#include "cli_command.h"

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    std::vector<std::string> args(argv + 1, argv + argc);
    const int code = vramscope::app::runCli(args, std::cout, std::cerr);
    std::cout.flush();
    return code;
}
