#!/usr/bin/env python3
"""No circles between files: the graph of which file reaches which must have none.

Two graphs, over units (a .c and its .h are one unit: src/model/model.{c,h} is
"src/model/model"):
- includes: unit A -> unit B when a file of A has #include "..." of a file of B;
- calls (with --objects): unit A -> unit B when A's object file uses a symbol that B's
  object defines (nm: U against T/D/B/R), so a circle of calls through declarations in a
  third header counts too.
Each strongly connected component of more than one unit is a circle: printed with its
edges, exit 1. docs/ARCHITECTURE.md states the rule.

usage: check_cycles.py SRC_ROOT [--nm NM] [--object-dir DIR]... [--objects OBJ.o ...]
(--object-dir: every .o under DIR, e.g. an executable's CMakeFiles/TARGET.dir)
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TOPS = ("src", "tools/sotto", "include", "python/src", "tests/backend_null")


def unit(rel):
    return os.path.splitext(rel)[0]


def include_graph(root):
    """{unit: {unit it includes}} over the C sources under TOPS."""
    graph = {}
    for top in TOPS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                edges = graph.setdefault(unit(rel), set())
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), inc)).replace(os.sep, "/")
                    if not os.path.exists(os.path.join(root, target)):
                        if os.path.exists(os.path.join(root, "include", inc)):
                            target = "include/" + inc
                        elif os.path.exists(os.path.join(root, "src", inc)):
                            target = "src/" + inc
                        else:
                            continue  # a generated file or a system header in quotes
                    if unit(target) != unit(rel):
                        edges.add(unit(target))
    return graph


def object_unit(root, obj):
    """The unit an object file was compiled from (CMake names it SRC.c.o under the
    target's directory), or None for a generated source."""
    path = obj.replace(os.sep, "/")
    m = re.search(r"\.dir/(.+)\.c\.o(bj)?$", path)
    if not m:
        return None
    rel = m.group(1)
    while rel.startswith("__/"):
        rel = rel[3:]
    return unit(rel) if os.path.exists(os.path.join(root, rel + ".c")) else None


def call_graph(root, nm, objects):
    """{unit: {unit whose symbols it uses}} from the symbol tables of OBJECTS."""
    defined, used = {}, {}
    for obj in objects:
        u = object_unit(root, obj)
        if u is None:
            continue
        out = subprocess.run([nm, "-P", obj], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[0], parts[1]
            if kind == "U":
                used.setdefault(u, set()).add(sym)
            elif kind in ("T", "D", "B", "R", "V", "W", "G", "S"):
                defined.setdefault(sym, u)
        used.setdefault(u, set())
    graph = {}
    for u, syms in used.items():
        graph[u] = {defined[s] for s in syms if s in defined and defined[s] != u}
    return graph


def circles(graph):
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def report(kind, graph):
    found = circles(graph)
    for comp in found:
        members = set(comp)
        edges = [f"{a} -> {b}" for a in comp for b in sorted(graph.get(a, ())) if b in members]
        print(f"{kind} circle: {', '.join(comp)}")
        for e in edges:
            print(f"    {e}")
    edges = sum(len(v) for v in graph.values())
    print(f"check_cycles: {kind}: {len(graph)} units, {edges} edges, {len(found)} circles")
    return len(found) == 0 and len(graph) > 0


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    root, nm, objects = argv[0], "nm", []
    rest = argv[1:]
    while rest:
        a = rest.pop(0)
        if a == "--nm":
            nm = rest.pop(0)
        elif a == "--object-dir":
            d = rest.pop(0)
            for dirpath, _, names in os.walk(d):
                objects += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".o")]
            if not any(True for _ in objects):
                print(f"check_cycles: no object files under {d}")
                return 2
        elif a == "--objects":
            objects, rest = objects + rest, []
        else:
            print(f"check_cycles: unknown argument {a}")
            return 2
    ok = report("include", include_graph(root))
    if objects:
        ok = report("call", call_graph(root, nm, [o for o in objects if o])) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
