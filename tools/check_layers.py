#!/usr/bin/env python3
"""Fails when a source file includes a layer it may not use (ARCHITECTURE.md's arrows)."""
import pathlib
import re
import sys

# layer -> layers whose internal headers it may include (public include/hwaro/ is open to all).
ALLOWED = {
    "core": {"core"},
    "kernels": {"kernels"},
    "cpu": {"cpu", "core", "kernels"},
    "cuda": {"cuda", "core", "kernels"},
    "cuda_absent": set(),
    "testing": {"testing", "core"},
    "ops": {"ops", "core", "kernels"},
    "autograd": {"autograd", "ops", "core"},
    "nn": {"nn", "autograd", "ops", "core"},
    "optim": {"optim", "autograd", "ops", "core"},
    "data": {"data", "core", "ops"},
    "parallel": {"parallel", "nn", "optim", "autograd", "ops", "core"},
    "serialize": {"serialize", "core", "nn", "optim"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/', re.M)


def main(root: pathlib.Path) -> int:
    errors = []
    for layer, allowed in ALLOWED.items():
        for path in sorted((root / "src" / layer).rglob("*")):
            if path.suffix not in {".h", ".cpp", ".cu", ".cuh"}:
                continue
            for used in INCLUDE.findall(path.read_text(encoding="utf-8")):
                if used != "hwaro" and used not in allowed:
                    errors.append(f"{path.relative_to(root)}: layer '{layer}' may not include '{used}/'")
    for top in ("tools", "examples"):
        for path in sorted((root / top).rglob("*.cpp")):
            for used in INCLUDE.findall(path.read_text(encoding="utf-8")):
                if used != "hwaro":
                    errors.append(f"{path.relative_to(root)}: {top}/ may use the public API only, not '{used}/'")
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
