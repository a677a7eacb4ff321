#!/usr/bin/env python3
"""The dependency rule of docs/ARCHITECTURE.md, checked on the tree: every #include "..."
of a source file must point into a layer that file's layer may use. Arrows run one way:
tools (and python/) -> include -> whisper -> base; whisper -> model, audio, vad;
vad -> model; model, audio -> base; each backend (cpu, vulkan, the test build's null, and
any other folder of src/: a new backend is checked as these are) -> base.
Base is src/*.{c,h} (common, quant, tensor, and backend*: the op table and the registry).
No layer reaches a backend's folder: the engine (whisper, vad) and the readers (model,
audio) call ops through the table of backend.h, and only src/backend*.c names a backend
(its registry lines); a base file other than src/backend* names none either.

usage: check_layers.py SRC_ROOT        (exit 1 and one line per violation)
"""
import os
import re
import sys

# layer -> the layers its files may include (besides their own); every other folder of
# src/ is a backend's (cpu, vulkan, a new one), which may include base alone
ALLOWED = {
    "base": set(),
    "model": {"base"},
    "audio": {"base"},
    "vad": {"base", "model"},
    "whisper": {"base", "model", "audio", "vad"},
    "tools": {"include"},
}
ENGINE = ("model", "audio", "vad", "whisper")  # the folders of src/ that are no backend
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# internal names of the backends this tree has besides sotto__FOLDER_* (the CPU's pool,
# kernels, ops, exec and proxy; Vulkan's vk, vki, vkd)
BACKEND_PREFIXES = ("vk", "vki", "vkd", "pool", "kernels", "op", "exec", "proxy")


def backends(root):
    """The backends' layers: every folder of src/ but the engine's, and the test build's null."""
    src = os.path.join(root, "src")
    return sorted({d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)) and d not in ENGINE} | {"null"})


def backend_names(layers):
    """A backend's own internal names (sotto__cpu_*, sotto__vk_*, sotto__FOLDER_*): only its
    folder and the registry (src/backend*) may use them."""
    return re.compile(r"\bsotto__(?:%s)_\w*" % "|".join(sorted(set(layers) | set(BACKEND_PREFIXES))))


def layer_of(rel):
    """Layer of a path relative to the repository root, or None when not checked."""
    parts = rel.split("/")
    if parts[0] == "include":
        return "include"
    if parts[0] == "tools" and len(parts) > 2 and parts[1] == "sotto":
        return "tools"
    if parts[0] == "python":  # the Python extension: on the public header alone, as the tool
        return "tools"
    if parts[:2] == ["tests", "backend_null"]:  # the test build's backend: a backend as any
        return "null"
    if parts[0] != "src":
        return None
    if len(parts) == 2:
        return "base"
    return parts[1]  # an engine layer, or a backend's folder


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    layers = backends(root)
    for b in layers:
        ALLOWED[b] = {"base"}
    BACKEND_NAME = backend_names(layers)
    bad, files = [], 0
    for top in ("src", "tools/sotto", "include", "python/src", "tests/backend_null"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                src_layer = layer_of(rel)
                if src_layer is None:
                    continue
                files += 1
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                registry = src_layer == "base" and name.startswith("backend")
                if src_layer not in layers and not registry:
                    for sym in sorted(set(BACKEND_NAME.findall(text))):
                        bad.append(f"{rel}: names {sym} (only a backend's folder and src/backend* may)")
                for inc in INCLUDE.findall(text):
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), inc)).replace(os.sep, "/")
                    if not os.path.exists(os.path.join(root, target)):
                        # "sotto.h" resolves through the include path
                        if os.path.exists(os.path.join(root, "include", inc)):
                            target = "include/" + inc
                        elif os.path.exists(os.path.join(root, "src", inc)):
                            target = "src/" + inc  # through the src include path (tests/backend_null)
                    dst_layer = layer_of(target)
                    if dst_layer is None or dst_layer == src_layer:
                        continue
                    if dst_layer == "include" and src_layer != "include":
                        continue  # the public header is below everything
                    if dst_layer not in ALLOWED.get(src_layer, set()):
                        bad.append(f"{rel}: includes {inc} ({src_layer} -> {dst_layer} is not an allowed arrow)")
    for line in bad:
        print(line)
    print(f"check_layers: {files} files, {len(bad)} violations")
    return 1 if bad or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
