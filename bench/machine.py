"""How fast this machine's cores run right now, for the benchmark tables.

The load average counts this machine's own processes only; on a virtual machine the
host's other guests can halve a core's speed without showing in it (the Intel Xeon of
docs/BENCHMARKS.md: `build/tests/cpu_peak` 130 GFLOP/s at a quiet hour, 52-107 at busy
ones, load average under 2 in both). So each benchmark run records one core's f32 FMA
rate, measured by build/tests/cpu_peak just before it (half a second), beside the load;
and the tables say how the whisper.cpp they ran was compiled (wcpp_build).
Standard library only."""
import os
import re
import subprocess

PEAK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "tests", "cpu_peak")


def fma_peak():
    """One core's f32 FMA GFLOP/s now (cpu_peak's first line), or None where there is no
    build/tests/cpu_peak or it measures nothing here (not x86-64)."""
    try:
        out = subprocess.run([PEAK], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"FMA[^:]*:\s*([0-9.]+)\s*GFLOP/s", out)
    return float(m.group(1)) if m else None


def fmt_peak(v):
    """A table cell for fma_peak's value (empty where none was measured)."""
    return "" if v is None else f"{v:.0f}"


def wcpp_build(wdir):
    """How the whisper.cpp build in WDIR was compiled, for the tables: its CMake cache's extra
    C++ flags (bench/run.sh adds -fno-tree-dse -fno-dse where GCC 12 broke ggml's AMX path),
    "" where it has none or no cache."""
    try:
        cache = open(os.path.join(wdir, "CMakeCache.txt")).read()
    except OSError:
        return ""
    m = re.search(r"^CMAKE_CXX_FLAGS:STRING=(.*)$", cache, re.M)
    return m.group(1).strip() if m else ""


def write_part(path, title, text, tag):
    """Puts TEXT (a section's generated part, without its "## TITLE" line) into PATH between
    TAG's two marks, replacing what the last run put there: everything else the file holds
    (the section's history, notes added by hand) stays as it is. A section without the marks
    gets them, with TEXT, right under its title; a file without the section gets it at its end."""
    begin, end = f"<!-- {tag} writes from here -->", f"<!-- {tag} wrote up to here -->"
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    part = f"{begin}\n{text.strip(chr(10))}\n{end}"
    if begin in old and end in old:
        new = old[:old.index(begin)] + part + old[old.index(end) + len(end):]
    elif f"\n## {title}\n" in old:
        a = old.index(f"\n## {title}\n") + len(f"\n## {title}\n")
        new = old[:a] + "\n" + part + "\n" + old[a:]
    else:
        new = old.rstrip("\n") + f"\n\n## {title}\n\n{part}\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
