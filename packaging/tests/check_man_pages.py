#!/usr/bin/env python3
"""Checks the man pages in docs/man against the programs and their sources.

For each program: every option its --help prints appears in its man page (for vramscope-cli, in
the section of the command whose --help printed it), and the set of exit codes its source uses
equals the set its man page's EXIT STATUS lists and the set its --help lists. The exit codes are
read from the source (the ExitCode enum, the sweep's constants, literal returns), not from the
help text, so a code added to the program without documentation fails here.

usage: check_man_pages.py --source-dir DIR --cli PATH --run PATH [--gui PATH]
"""
import argparse
import os
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w\-<>/.:])(--?[A-Za-z][A-Za-z0-9\-]*)")

problems = []


def problem(text):
    problems.append(text)
    print("FAIL: " + text)


def run_help(argv):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    if done.returncode != 0:
        problem(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def help_options(text):
    """Every option the help names, in its usage lines, option table and prose."""
    found = set()
    for token in OPTION.findall(text):
        found.add(token.rstrip("-"))
    return found


def man_text(path):
    """The page's text with roff escapes and macro names removed (\\- becomes -)."""
    with open(path, encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if not l.startswith('.\\"')]
    text = "\n".join(lines)
    text = re.sub(r"\\f[BIRP]", "", text)
    text = text.replace("\\-", "-").replace("\\(mu", "x")
    text = re.sub(r"^\.[A-Z]{1,2}\b ?", "", text, flags=re.M)
    return text


def has_option(text, option):
    return re.search(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text) is not None


def man_sections(path, macro):
    """{title: body} of the page's .SH or .SS sections (raw roff)."""
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    sections = {}
    parts = re.split(r"^\." + macro + r" (.*)$", raw, flags=re.M)
    for i in range(1, len(parts) - 1, 2):
        sections[parts[i].strip('"')] = parts[i + 1].split("\n.SH ")[0]
    return sections


def man_exit_codes(path):
    body = man_sections(path, "SH").get("EXIT STATUS")
    if body is None:
        problem(f"{path} has no EXIT STATUS section")
        return set()
    codes = set(int(c) for c in re.findall(r"^\.BI? (\d+)\s*$", body, flags=re.M))
    if re.search(r"^\.BI? 128\+", body, flags=re.M):
        codes.add(128)
    return codes


def help_exit_codes(text, marker):
    start = text.lower().find(marker.lower())
    if start < 0:
        problem(f"the help has no '{marker}' part")
        return set()
    part = text[start + len(marker):]
    codes = set(int(c) for c in re.findall(r"(?<![\w.])(\d+) (?=[a-z(])", part))
    codes.update(int(c) for c in re.findall(r"(?<![\w.])(\d+)\+signal", part))
    return codes


def source_codes(path, patterns):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    codes = set()
    for pattern in patterns:
        codes.update(int(c) for c in re.findall(pattern, text))
    return codes


def compare(what, expected, got):
    if expected != got:
        problem(f"{what}: the source uses exit codes {sorted(expected)}, it lists {sorted(got)}")


def check_options(program, options, text, where):
    for option in sorted(options):
        if not has_option(text, option):
            problem(f"{program}: option {option} is not in {where}")


def check_cli(args):
    page = os.path.join(args.source_dir, "docs/man/vramscope-cli.1")
    whole = man_text(page)
    top = run_help([args.cli, "--help"])
    commands = re.findall(r"^  ([a-z][a-z\-]*)\s{2,}", top.split("commands:")[1], flags=re.M)
    if len(commands) < 5:
        problem(f"vramscope-cli --help lists only {commands}")
    check_options("vramscope-cli", help_options(top), whole, "vramscope-cli.1")
    sections = {title.split()[0]: body for title, body in man_sections(page, "SS").items()}
    for command in commands:
        text = run_help([args.cli, command, "--help"])
        # "as report --json's peak_time_ns": an option of another command, named as such
        others = "|".join(re.escape(c) for c in commands if c != command)
        text = re.sub(r"\b(?:" + others + r") --?[A-Za-z][\w-]*", "", text)
        if command not in sections:
            problem(f"vramscope-cli.1 has no section for the command {command}")
            continue
        section = sections[command]
        section = re.sub(r"\\f[BIRP]", "", section).replace("\\-", "-")
        for option in sorted(help_options(text) - {"-h", "--help"}):
            if not has_option(section, option):
                problem(f"vramscope-cli {command}: option {option} is not in its man section")
        print(f"vramscope-cli {command}: {len(help_options(text))} options checked")
    for option in ("-h", "--help"):
        if not has_option(whole, option):
            problem(f"vramscope-cli.1 does not name {option}")
    src = args.source_dir
    codes = source_codes(os.path.join(src, "app/cli/cli_command.h"), [r"kExit\w+ = (\d+)"])
    for name in sorted(os.listdir(os.path.join(src, "app/cli"))):
        if name.endswith(".cpp"):
            literal = source_codes(os.path.join(src, "app/cli", name), [r"return (\d+);"])
            if literal:
                problem(f"app/cli/{name} returns {sorted(literal)} instead of an ExitCode")
    compare("vramscope-cli.1 EXIT STATUS", codes, man_exit_codes(page))
    compare("vramscope-cli --help", codes, help_exit_codes(top, "exit codes:"))


def check_run(args):
    page = os.path.join(args.source_dir, "docs/man/vramscope-run.1")
    text = run_help([args.run, "--help"])
    check_options("vramscope-run", help_options(text), man_text(page), "vramscope-run.1")
    src = args.source_dir
    codes = source_codes(os.path.join(src, "capture/launcher/run_main.cpp"), [r"return (\d+);"])
    codes |= source_codes(os.path.join(src, "capture/launcher/launch_process.cpp"),
                          [r"_exit\((\d+)\)"])
    codes |= source_codes(os.path.join(src, "capture/common/sweep.h"), [r"kSweepExit\w+ = (\d+)"])
    codes |= source_codes(os.path.join(src, "capture/common/launch_options.cpp"),
                          [r"return (128) \+ WTERMSIG"])
    compare("vramscope-run.1 EXIT STATUS", codes, man_exit_codes(page))
    compare("vramscope-run --help", codes, help_exit_codes(text, "Exit code:"))
    print(f"vramscope-run: {len(help_options(text))} options, exit codes {sorted(codes)}")


def check_gui(args):
    page = os.path.join(args.source_dir, "docs/man/vramscope.1")
    text = run_help([args.gui, "--help"])
    check_options("vramscope", help_options(text), man_text(page), "vramscope.1")
    codes = source_codes(os.path.join(args.source_dir, "app/gui/main.cpp"),
                         [r"constexpr int kExit\w+ = (\d+)", r"return (\d+);"])
    compare("vramscope.1 EXIT STATUS", codes, man_exit_codes(page))
    compare("vramscope --help", codes, help_exit_codes(text, "Exit codes:"))
    print(f"vramscope: {len(help_options(text))} options, exit codes {sorted(codes)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--gui")
    args = parser.parse_args()
    check_cli(args)
    check_run(args)
    if args.gui:
        check_gui(args)
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("man pages: every option and exit code documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
