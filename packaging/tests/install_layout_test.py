#!/usr/bin/env python3
"""Installs the build into a scratch prefix (cmake --install) and checks the layout.

Every file lands where Debian and the desktop expect it, nothing else is installed, the PNG
icons have the sizes their folders name, the man pages are the docs/man sources, and the
installed vramscope-run finds the installed agent (<prefix>/lib/vramscope) by its own path.

Also: the newest Debian changelog entry, AppStream release and man page titles name the
project's version.

usage: install_layout_test.py --build-dir DIR --source-dir DIR --gui ON|OFF --agent ON|OFF
                              --version X.Y.Z
"""
import argparse
import gzip
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

APP_ID = "io.github.vramscope"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
MAN_PAGES = ("vramscope-cli.1", "vramscope-run.1")

problems = []


def problem(text):
    problems.append(text)
    print("FAIL: " + text)


def expected_files(gui, agent):
    files = {"bin/vramscope-cli", "bin/vramscope-run", "share/mime/packages/vramscope.xml",
             "share/doc/vramscope/copyright", "share/doc/vramscope/changelog.gz"}
    pages = MAN_PAGES + (("vramscope.1",) if gui else ())
    files |= {f"share/man/man1/{p}.gz" for p in pages}
    if gui:
        files |= {"bin/vramscope", f"share/applications/{APP_ID}.desktop",
                  f"share/metainfo/{APP_ID}.metainfo.xml",
                  f"share/icons/hicolor/scalable/apps/{APP_ID}.svg"}
        files |= {f"share/icons/hicolor/{s}x{s}/apps/{APP_ID}.png" for s in ICON_SIZES}
    if agent:
        files |= {"lib/vramscope/libvramscope_capture.so", "share/lintian/overrides/vramscope"}
    return files, pages


def png_size(path):
    """(width, height) from the PNG's IHDR chunk (PNG spec: 8-byte signature, then IHDR)."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def check_launcher(prefix, agent):
    env = {k: v for k, v in os.environ.items() if k not in ("VRAMSCOPE_AGENT", "VRAMSCOPE_CLI")}
    run = os.path.join(prefix, "bin/vramscope-run")
    probe = ["sh", "-c", 'printf %s "$CUDA_INJECTION64_PATH"']
    done = subprocess.run([run, "-o", os.path.join(prefix, "traces"), "--"] + probe,
                          capture_output=True, text=True, env=env, timeout=60)
    if agent:
        want = os.path.realpath(os.path.join(prefix, "lib/vramscope/libvramscope_capture.so"))
        if done.returncode != 0 or done.stdout != want:
            problem(f"installed vramscope-run injected '{done.stdout}' (exit "
                    f"{done.returncode}, {done.stderr.strip()}), not {want}")
        else:
            print(f"vramscope-run injects {done.stdout}")
    elif done.returncode != 2 or "libvramscope_capture.so not found" not in done.stderr:
        problem(f"without the agent vramscope-run should refuse (exit 2), got {done.returncode}")


def check_versions(prefix, gui, version):
    """The newest entry of the Debian changelog and of the AppStream releases, and the man
    pages' title lines, name `version`."""
    for page in MAN_PAGES + (("vramscope.1",) if gui else ()):
        path = os.path.join(prefix, f"share/man/man1/{page}.gz")
        if not os.path.exists(path):
            continue
        title = next((l for l in gzip.open(path, "rt") if l.startswith(".TH ")), "")
        if f'"vramscope {version}"' not in title:
            problem(f"{page}: the title line '{title.strip()}' does not name vramscope {version}")
    path = os.path.join(prefix, "share/doc/vramscope/changelog.gz")
    if os.path.exists(path):
        first = gzip.open(path, "rt").readline()
        if not first.startswith(f"vramscope ({version})"):
            problem(f"the changelog starts with '{first.strip()}', not version {version}")
    path = os.path.join(prefix, f"share/metainfo/{APP_ID}.metainfo.xml")
    if gui and os.path.exists(path):
        releases = ET.parse(path).getroot().find("releases")
        newest = releases[0].get("version") if releases is not None and len(releases) else None
        if newest != version:
            problem(f"the AppStream metainfo's newest release is {newest}, not {version}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--gui", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--version", required=True, help="the project's version")
    args = parser.parse_args()
    gui, agent = args.gui == "ON", args.agent == "ON"
    with tempfile.TemporaryDirectory(prefix="vramscope-install-") as prefix:
        subprocess.run(["cmake", "--install", args.build_dir, "--prefix", prefix],
                       check=True, stdout=subprocess.DEVNULL)
        installed = set()
        for root, _, names in os.walk(prefix):
            installed |= {os.path.relpath(os.path.join(root, n), prefix) for n in names}
        want, pages = expected_files(gui, agent)
        for f in sorted(want - installed):
            problem(f"not installed: {f}")
        for f in sorted(installed - want):
            problem(f"installed but not expected: {f}")
        if gui:
            for s in ICON_SIZES:
                p = os.path.join(prefix, f"share/icons/hicolor/{s}x{s}/apps/{APP_ID}.png")
                if os.path.exists(p) and png_size(p) != (s, s):
                    problem(f"{p} is {png_size(p)}, not {s}x{s}")
        for page in pages:
            p = os.path.join(prefix, f"share/man/man1/{page}.gz")
            with open(os.path.join(args.source_dir, "docs/man", page), "rb") as f:
                source = f.read()
            if os.path.exists(p) and gzip.open(p).read() != source:
                problem(f"{p} is not docs/man/{page}")
        check_versions(prefix, gui, args.version)
        check_launcher(prefix, agent)
        print(f"{len(installed)} files installed under the prefix")
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("install layout: as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
