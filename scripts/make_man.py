#!/usr/bin/env python3
"""Writes sotto(1), the manual page, from the tool's own help: `sotto --help` as the
description, each command's `sotto COMMAND --help` in a section of its own, then the
environment and the exit status. docs/sotto.1 is made by it and checked against it
(`ctest -R man_page`), so the page says what the tool says.

usage: make_man.py SOTTO [OUT]     (OUT: the page, default stdout)
       make_man.py SOTTO --check PAGE   (exit 1 naming the first difference when PAGE is stale)
"""
import re
import subprocess
import sys

ENVIRONMENT = [
    ("SOTTO_MODEL", "the model used without -m (a path or an installed model's name)."),
    ("SOTTO_DEVICE", "the device used without --device (auto, cpu, vulkan, vulkan:N)."),
    ("SOTTO_KERNELS", "the CPU kernel set (scalar, avx2, avx_vnni, avx512, neon, neon_dot, "
                      "neon_i8mm) in place of the best one the CPU runs; one it cannot run (or an unknown "
                      "name) is ignored with a warning, the best set used."),
    ("SOTTO_API_KEY", "sotto serve's API key when --api-key is not given."),
    ("SOTTO_PROGRESS_S", "seconds between sotto transcribe's progress lines where stderr is no "
                         "terminal (default 60)."),
    ("SOTTO_VOCAB_PROXY", "0: every greedy step computes every logit; 1: greedy windows without "
                          "log-probabilities take the vocabulary proxy whatever the CPU's cache "
                          "(the same tokens either way)."),
    ("SOTTO_VK_KERNELS", "tiled or direct: the Vulkan backend's kernel family (for tests)."),
    ("SOTTO_VK_MAX_MEMORY_MB", "a cap on the device memory a Vulkan context takes."),
    ("SOTTO_VULKAN_LOADER", "another Vulkan loader library."),
    ("XDG_DATA_HOME", "installed models live in $XDG_DATA_HOME/sotto/models "
                      "(~/.local/share/sotto/models without it)."),
]


def run(sotto, *args):
    r = subprocess.run([sotto, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"make_man.py: {sotto} {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def roff_text(line):
    """A line of help as roff shows it verbatim."""
    line = line.replace("\\", "\\e")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def block(text):
    return [".nf"] + [roff_text(l) for l in text.rstrip("\n").split("\n")] + [".fi"]


def page(sotto):
    top = run(sotto, "--help")
    # the build's own backends are the one line that depends on how it was built
    top = re.sub(r"this build's backends: [^\n]*", "the backends built in (sotto --help lists them).", top)
    first = top.split("\n", 1)[0]
    version, _, what = first.partition(" - ")
    commands = re.findall(r"^  ([a-z]+) ", top.split("commands:", 1)[1].split("\n\n", 1)[0], re.M)
    out = [f'.TH SOTTO 1 "" "{version}" "User Commands"', ".SH NAME", f"sotto \\- {what}",
           ".SH SYNOPSIS", ".B sotto", ".I COMMAND", "[options]", ".SH DESCRIPTION"]
    out += block(top.split("\n", 1)[1].lstrip("\n"))
    out.append(".SH COMMANDS")
    for c in commands:
        out += [f".SS sotto {c}"] + block(run(sotto, c, "--help"))
    out.append(".SH ENVIRONMENT")
    for name, text in ENVIRONMENT:
        out += [".TP", f".B {name}", text]
    out += [".SH EXIT STATUS",
            "0 success; 1 invalid arguments or input; 2 an execution error (an unreadable model, out "
            "of memory, an output that cannot be written); 3 a mismatch against --expected (sotto run); "
            "130 interrupted (Ctrl-C); 143 terminated (SIGTERM).",
            ".SH SEE ALSO", "The README of the sotto sources: the library (sotto.h), the Python package, "
            "the benchmarks and the tests."]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (2, 3, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--check"):
        sys.exit(__doc__)
    text = page(sys.argv[1])
    if len(sys.argv) == 4:
        with open(sys.argv[3], encoding="utf-8") as f:
            old = f.read()
        if old != text:
            a, b = old.split("\n"), text.split("\n")
            i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print(f"{sys.argv[3]} is stale at line {i + 1}:\n  page: {a[i] if i < len(a) else '(end)'}\n"
                  f"  help: {b[i] if i < len(b) else '(end)'}\n"
                  "remake it: python3 scripts/make_man.py build/sotto docs/sotto.1")
            sys.exit(1)
        return
    if len(sys.argv) == 3:
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
