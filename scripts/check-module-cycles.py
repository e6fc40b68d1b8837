#!/usr/bin/env python3
"""Fails when a module inside one of rave's crates depends on itself.

For every crate under crates/*/src the module tree is read from its `mod`
declarations (lib.rs, main.rs, src/bin/*.rs are crate roots; `mod x;` loads
x.rs or x/mod.rs). Module A depends on module B when a path in A's code
(`use` trees, grouped or not, and paths in expressions and types) names an
item that B defines. Paths are followed through re-exports (`pub use`), so a
facade that re-exports its children is not itself a dependency, and naming a
re-exported item depends on the module that defines it.

Two kinds of defect are reported, and either makes the exit status 1:
- a cycle: A depends on B and B, directly or through others, on A;
- an up-import: a submodule naming an item that the crate root itself
  defines (a helper in lib.rs); shared helpers belong in a module of their
  own below their users. Re-exports in the crate root are fine.

Comments, string and character literals and `#[cfg(test)]` items (test
modules, which may import their parent) are ignored. An inline `mod x {}` is
treated as part of its file.

`--self-test` runs the checker over small synthetic crates (one with a
cycle, one with an up-import, one acyclic) and fails if it misjudges any;
a normal run does the same quietly first, so CI proves the check can fail.
Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import textwrap
import unittest
from dataclasses import dataclass, field
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PATH_KEYWORDS = {"crate", "super", "self"}


# ---------------------------------------------------------------- lexing


def strip_comments_and_literals(text: str) -> str:
    """Blanks comments and the insides of string and char literals.

    Newlines are kept so offsets still map to the original lines.
    """
    out: list[str] = []
    i, n = 0, len(text)

    def blank(chunk: str) -> str:
        return "".join(c if c == "\n" else " " for c in chunk)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end == -1 else end
            out.append(blank(text[i:end]))
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (raw := re.match(r'b?r(#*)"', text[i:])) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            closing = '"' + raw.group(1)
            end = text.find(closing, i + raw.end())
            end = n if end == -1 else end + len(closing)
            out.append('""' + blank(text[i + 2 : end]))
            i = end
        elif c == '"' or (c == "b" and text.startswith('b"', i) and not _ident_before(text, i)):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + blank(text[i + 2 : j + 1]))
            i = j + 1
        elif c == "'":
            char = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", text[i:])
            if char:
                out.append("' '" + blank(text[i + 3 : i + char.end()]))
                i += char.end()
            else:  # a lifetime or label
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def matching_brace(text: str, open_at: int) -> int:
    """Index just past the brace that closes the one at `open_at`."""
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")


def strip_test_items(text: str) -> str:
    """Blanks every item annotated `#[cfg(test)]` (and its other attributes)."""
    while True:
        found = CFG_TEST.search(text)
        if not found:
            return text
        j = found.end()
        # Further attributes on the same item.
        while True:
            m = re.match(r"\s*#\s*\[", text[j:])
            if not m:
                break
            depth, k = 0, j + m.end() - 1
            while k < len(text):
                depth += {"[": 1, "]": -1}.get(text[k], 0)
                k += 1
                if depth == 0:
                    break
            j = k
        end = j
        while end < len(text) and text[end] not in ";{":
            end += 1
        end = matching_brace(text, end) if end < len(text) and text[end] == "{" else end + 1
        chunk = text[found.start() : end]
        text = text[: found.start()] + "".join(c if c == "\n" else " " for c in chunk) + text[end:]


def top_level(text: str) -> str:
    """The text outside every brace block (item bodies blanked)."""
    out, depth = [], 0
    for c in text:
        if c == "}":
            depth -= 1
        out.append(c if depth == 0 or c == "\n" else " ")
        if c == "{":
            depth += 1
    return "".join(out)


# ---------------------------------------------------------------- use trees


def expand_use_tree(tree: str) -> list[tuple[list[str], str | None]]:
    """`a::{b, c::d as e, f::*}` -> [(["a","b"], "b"), (["a","c","d"], "e"), (["a","f","*"], None)]."""
    tokens = re.findall(rf"::|{IDENT}|[{{}},*]", tree)
    pos = 0

    def parse(prefix: list[str]) -> list[tuple[list[str], str | None]]:
        nonlocal pos
        results: list[tuple[list[str], str | None]] = []
        path = list(prefix)
        while pos < len(tokens):
            tok = tokens[pos]
            if tok == "::":
                pos += 1
            elif tok == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos] != "}":
                    results.extend(parse(path))
                    if pos < len(tokens) and tokens[pos] == ",":
                        pos += 1
                pos += 1
                return results
            elif tok in ",}":
                break
            elif tok == "*":
                pos += 1
                results.append((path + ["*"], None))
                return results
            elif tok == "as":
                alias = tokens[pos + 1] if pos + 1 < len(tokens) else "_"
                pos += 2
                if path and path[-1] == "self":
                    path = path[:-1]
                results.append((path, None if alias == "_" else alias))
                return results
            else:
                path.append(tok)
                pos += 1
        if len(path) > len(prefix):
            name = path[-1]
            if name == "self":
                path = path[:-1]
                name = path[-1] if path else None
            results.append((path, name))
        return results

    return parse([])


# ---------------------------------------------------------------- modules


@dataclass
class Use:
    path: list[str]
    alias: str | None
    line: int
    reexport: bool


@dataclass
class Module:
    name: str  # "crate::a::b"
    file: Path
    parent: "Module | None"
    children: dict[str, "Module"] = field(default_factory=dict)
    definitions: set[str] = field(default_factory=set)
    uses: list[Use] = field(default_factory=list)
    code_paths: list[tuple[list[str], int]] = field(default_factory=list)

    @property
    def is_root(self) -> bool:
        return self.parent is None


USE_STATEMENT = re.compile(r"(?<![A-Za-z0-9_])((?:pub\s*(?:\([^)]*\))?\s*)?)use\s+([^;]+);")
MOD_DECLARATION = re.compile(rf"(?<![A-Za-z0-9_])mod\s+({IDENT})\s*([;{{])")
DEFINITION = re.compile(
    rf"(?<![A-Za-z0-9_])(?:fn|struct|enum|union|trait|type|const|static|macro_rules!)\s+({IDENT})"
)
CODE_PATH = re.compile(rf"(?<![A-Za-z0-9_:]){IDENT}(?:\s*::\s*{IDENT})+")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def load_module(name: str, file: Path, parent: Module | None, child_dir: Path) -> Module | None:
    source = file.read_text(encoding="utf-8")
    if re.match(r"\s*#!\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]", strip_comments_and_literals(source)):
        return None
    text = strip_test_items(strip_comments_and_literals(source))
    module = Module(name=name, file=file, parent=parent)
    outer = top_level(text)

    for m in MOD_DECLARATION.finditer(outer):
        if m.group(2) != ";":
            continue
        child_name = m.group(1)
        for candidate, grandchild_dir in (
            (child_dir / f"{child_name}.rs", child_dir / child_name),
            (child_dir / child_name / "mod.rs", child_dir / child_name),
        ):
            if candidate.exists():
                child = load_module(f"{name}::{child_name}", candidate, module, grandchild_dir)
                if child:
                    module.children[child_name] = child
                break

    module.definitions = {m.group(1) for m in DEFINITION.finditer(outer)}

    uses_blanked = text
    for m in USE_STATEMENT.finditer(text):
        reexport = bool(m.group(1).strip()) and outer[m.start()] != " "
        for path, alias in expand_use_tree(m.group(2)):
            if path:
                module.uses.append(Use(path, alias, line_of(text, m.start()), reexport))
        span = text[m.start() : m.end()]
        uses_blanked = (
            uses_blanked[: m.start()]
            + "".join(c if c == "\n" else " " for c in span)
            + uses_blanked[m.end() :]
        )

    for m in CODE_PATH.finditer(uses_blanked):
        segments = [s for s in re.split(r"\s*::\s*", m.group(0)) if s]
        module.code_paths.append((segments, line_of(text, m.start())))
    return module


def walk(module: Module):
    yield module
    for child in module.children.values():
        yield from walk(child)


# ---------------------------------------------------------------- resolving


class Resolver:
    def __init__(self, root: Module):
        self.root = root

    def bindings(self, module: Module, name: str) -> list[Use]:
        return [u for u in module.uses if u.alias == name and u.path[-1] != "*"]

    def globs(self, module: Module) -> list[Use]:
        return [u for u in module.uses if u.path[-1] == "*"]

    def start(self, module: Module, first: str) -> Module | None:
        """The module a path's first segment names, seen from `module`."""
        if first == "crate":
            return self.root
        if first == "self":
            return module
        if first == "super":
            return module.parent
        if first in module.children:
            return module.children[first]
        return None

    def resolve(self, module: Module, path: list[str], seen=None):
        """(defining module, item name or None, defined-here) for `path` seen from `module`.

        Returns None when the path leaves the crate (an extern crate, a
        local variable's type, a prelude name).
        """
        seen = set() if seen is None else seen
        first, rest = path[0], path[1:]
        current = self.start(module, first)
        if current is None:
            # A name brought in by a `use` in this module, or inherited.
            for binding in self.bindings(module, first):
                key = (id(module), first)
                if key in seen:
                    continue
                return self.resolve(module, binding.path + rest, seen | {key})
            return None
        while rest and rest[0] == "super":
            current, rest = current.parent, rest[1:]
            if current is None:
                return None
        while rest and rest[0] in current.children:
            current, rest = current.children[rest[0]], rest[1:]
        if not rest or rest[0] == "*":
            return (current, None, False)
        return self.resolve_name(current, rest[0], seen)

    def resolve_name(self, module: Module, name: str, seen):
        key = (id(module), name)
        if key in seen:
            return (module, name, False)
        seen = seen | {key}
        if name in module.definitions:
            return (module, name, True)
        for binding in self.bindings(module, name):
            found = self.resolve(module, binding.path, seen)
            if found:
                return found
        for glob in self.globs(module):
            target = self.resolve(module, glob.path[:-1], seen)
            if target and target[1] is None:
                found = self.resolve_name(target[0], name, seen)
                if found and found[2]:
                    return found
        return (module, name, False)


@dataclass
class Report:
    cycles: list[list[tuple[str, str]]]  # each: [(module, evidence of its edge to the next)]
    up_imports: list[str]


def analyse(root: Module, crate_label: str, base: Path) -> Report:
    resolver = Resolver(root)
    edges: dict[str, dict[str, str]] = {}
    up_imports: list[str] = []
    modules = list(walk(root))

    def rel(module: Module, line: int) -> str:
        try:
            return f"{module.file.relative_to(base)}:{line}"
        except ValueError:
            return f"{module.file}:{line}"

    for module in modules:
        edges.setdefault(module.name, {})
        references = [(u.path, u.line) for u in module.uses if not u.reexport]
        references += module.code_paths
        for path, line in references:
            if path[0] not in PATH_KEYWORDS and path[0] not in module.children and not resolver.bindings(module, path[0]):
                continue
            found = resolver.resolve(module, path)
            if not found:
                continue
            target, item, defined_here = found
            if path[-1] == "*" and target is not module:
                # A glob brings in names used bare: depend on all of them.
                item = "*"
                defined_here = bool(target.definitions)
            if target is module or item is None:
                continue
            if target.is_root:
                if defined_here and not module.is_root:
                    up_imports.append(
                        f"{crate_label}: {module.name} imports up into the crate root: "
                        f"{'::'.join(path)} ({rel(module, line)}) names `{item}` defined in "
                        f"{target.file.name}"
                    )
                continue
            edges[module.name].setdefault(target.name, f"{'::'.join(path)} at {rel(module, line)}")

    return Report(cycles=find_cycles(edges), up_imports=sorted(set(up_imports)))


def find_cycles(edges: dict[str, dict[str, str]]) -> list[list[tuple[str, str]]]:
    """One shortest cycle per strongly connected component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def connect(node: str) -> None:
        nonlocal counter
        # Iterative Tarjan: module trees are shallow, but be safe anyway.
        work = [(node, iter(sorted(edges.get(node, {}))))]
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        while work:
            current, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, {})))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[current] = min(low[current], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[current])
            if low[current] == index[current]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == current:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)

    cycles = []
    for component in components:
        members = set(component)
        start = component[0]
        # Breadth-first search back to `start` inside the component.
        previous: dict[str, str] = {}
        frontier = [start]
        found = None
        while frontier and not found:
            following = []
            for node in frontier:
                for successor in sorted(edges.get(node, {})):
                    if successor not in members:
                        continue
                    if successor == start:
                        found = node
                        break
                    if successor not in previous:
                        previous[successor] = node
                        following.append(successor)
                if found:
                    break
            frontier = following
        chain = [found]
        while chain[-1] != start:
            chain.append(previous[chain[-1]])
        chain.reverse()
        cycle = []
        for i, node in enumerate(chain):
            successor = chain[(i + 1) % len(chain)]
            cycle.append((node, edges[node][successor]))
        others = members - set(chain)
        if others:
            cycle.append(("(also in this knot: " + ", ".join(sorted(others)) + ")", ""))
        cycles.append(cycle)
    return cycles


# ---------------------------------------------------------------- crates


def crate_roots(src: Path) -> list[tuple[str, Path]]:
    roots = [(f.stem, f) for f in (src / "lib.rs", src / "main.rs") if f.exists()]
    bin_dir = src / "bin"
    if bin_dir.is_dir():
        for entry in sorted(bin_dir.iterdir()):
            if entry.suffix == ".rs":
                roots.append((f"bin {entry.stem}", entry))
            elif (entry / "main.rs").exists():
                roots.append((f"bin {entry.name}", entry / "main.rs"))
    return roots


def check(workspace: Path, out=sys.stdout) -> int:
    crates = sorted(p.parent for p in (workspace / "crates").glob("*/src"))
    problems = 0
    modules = 0
    for crate in crates:
        for kind, root_file in crate_roots(crate / "src"):
            child_dir = root_file.parent
            root = load_module("crate", root_file, None, child_dir)
            if root is None:
                continue
            modules += sum(1 for _ in walk(root))
            label = crate.name if kind == "lib" else f"{crate.name} ({kind})"
            report = analyse(root, label, workspace)
            for cycle in report.cycles:
                problems += 1
                chain = " -> ".join(node for node, _ in cycle if node.startswith("crate")) + " -> " + cycle[0][0]
                print(f"{label}: cycle {chain}", file=out)
                for node, evidence in cycle:
                    print(f"    {node}" + (f" uses {evidence}" if evidence else ""), file=out)
            for up in report.up_imports:
                problems += 1
                print(up, file=out)
    if problems:
        print(f"{problems} module dependency defect(s) found in {len(crates)} crates.", file=out)
        return 1
    print(f"module cycles: none in {len(crates)} crates ({modules} modules), and no import up into a crate root.", file=out)
    return 0


# ---------------------------------------------------------------- self test


class SelfTest(unittest.TestCase):
    def run_on(self, files: dict[str, str]) -> tuple[int, str]:
        import io

        with tempfile.TemporaryDirectory() as workspace:
            for name, body in files.items():
                path = Path(workspace, "crates", "demo", "src", name)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(textwrap.dedent(body), encoding="utf-8")
            out = io.StringIO()
            status = check(Path(workspace), out)
            return status, out.getvalue()

    ACYCLIC = {
        "lib.rs": """
            //! Docs mentioning crate::b::Thing are not a path.
            pub mod a;
            pub mod b;
            mod nested;
            pub use a::Shared;
            pub use b::{Thing, build};
        """,
        "a.rs": """
            pub struct Shared;
            pub fn helper() -> &'static str { "crate::b::build()" }
            #[cfg(test)]
            mod tests {
                use crate::b::build;
                #[test]
                fn t() { build(); }
            }
        """,
        "b.rs": """
            use crate::{a::helper, Shared};
            pub struct Thing(Shared);
            pub fn build() -> char { let _ = helper(); 'x' }
        """,
        "nested/mod.rs": """
            mod inner;
            pub use inner::Deep;
            #[cfg(test)]
            mod tests;
        """,
        "nested/inner.rs": """
            pub struct Deep(crate::b::Thing);
        """,
        "nested/tests.rs": """
            use super::*;
            use crate::nested::inner::Deep;
        """,
    }

    def test_an_acyclic_crate_passes(self):
        status, out = self.run_on(self.ACYCLIC)
        self.assertEqual(status, 0, out)

    def test_a_cycle_fails(self):
        files = dict(self.ACYCLIC)
        files["a.rs"] = """
            pub struct Shared;
            pub fn helper() -> u8 { crate::nested::inner::lookup() }
        """
        files["nested/inner.rs"] = """
            pub struct Deep(crate::b::Thing);
            pub fn lookup() -> u8 { 1 }
        """
        status, out = self.run_on(files)
        self.assertEqual(status, 1, out)
        self.assertIn("cycle crate::a -> crate::nested::inner -> crate::b -> crate::a", out)

    def test_a_grouped_use_cycle_fails(self):
        files = dict(self.ACYCLIC)
        files["a.rs"] = """
            use crate::{nested::{self}, b::{self as other}};
            pub struct Shared;
            pub fn helper() -> u8 { let _ = other::build(); 1 }
        """
        status, out = self.run_on(files)
        self.assertEqual(status, 1, out)
        self.assertIn("cycle crate::a -> crate::b -> crate::a", out)

    def test_importing_a_root_helper_fails(self):
        files = dict(self.ACYCLIC)
        files["lib.rs"] = self.ACYCLIC["lib.rs"] + "\npub(crate) fn root_helper() {}\n"
        files["b.rs"] = self.ACYCLIC["b.rs"] + "\nfn uses_root() { crate::root_helper() }\n"
        status, out = self.run_on(files)
        self.assertEqual(status, 1, out)
        self.assertIn("crate::b imports up into the crate root", out)


def self_test(verbosity: int) -> bool:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(SelfTest)
    stream = sys.stderr if verbosity else open(os.devnull, "w")
    result = unittest.TextTestRunner(stream=stream, verbosity=verbosity).run(suite)
    return result.wasSuccessful()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--self-test", action="store_true", help="only prove the check against synthetic crates")
    parser.add_argument("--workspace", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    if args.self_test:
        return 0 if self_test(verbosity=2) else 1
    if not self_test(verbosity=0):
        print("check-module-cycles: its self-test failed; run it with --self-test", file=sys.stderr)
        return 1
    return check(args.workspace)


if __name__ == "__main__":
    sys.exit(main())
