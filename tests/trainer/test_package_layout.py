"""The trainer's package structure (trainer/headwise_trainer/__init__.py): each package imports
only from the packages before it, no module imports another in a circle (imports inside
functions included), one lazy dispatch (cli_support.lazy) resolves every subcommand, and every
module path the repository names (docs, scripts, bench, C++ hints) exists."""
import ast
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
TRAINER = os.path.join(REPO, "trainer")
PACKAGE = os.path.join(TRAINER, "headwise_trainer")
sys.path.insert(0, TRAINER)

# Import order: a module may import from its own layer and the layers before it. The CLI layer
# (cli.py, cli_support.py and every PACKAGE/cli.py) sits on top of all of them.
LAYERS = ["paths", "threads", "data", "model", "evaluation", "training", "pruning", "analysis", "sweep"]
CLI_LAYER = len(LAYERS)


def modules():
    """{dotted module name: path} of every module of headwise_trainer."""
    out = {}
    for d, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), TRAINER)[:-3].replace(os.sep, ".")
                out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = \
                    os.path.join(d, f)
    return out


MODULES = modules()


def layer(module: str) -> int:
    parts = module.split(".")
    if parts[-1] in ("cli", "cli_support") or module == "headwise_trainer":
        return CLI_LAYER
    return LAYERS.index(parts[1])


def imports(module: str):
    """Modules of headwise_trainer that `module` imports anywhere in its code (a name imported
    from a package counts as the submodule when there is one, else as the package)."""
    path = MODULES[module]
    is_pkg = path.endswith("__init__.py")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[:len(base) - node.level + (1 if is_pkg else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target
                     for a in node.names]
        else:
            continue
        found.update(n for n in names if n in MODULES and n != module)
    return found


GRAPH = {m: imports(m) for m in MODULES}


def test_the_graph_is_read():
    # The analysis reads every module; a handful of known edges make sure it reads them right.
    assert "headwise_trainer.model.run_state" in GRAPH["headwise_trainer.training.train"]
    assert "headwise_trainer.training.loop" in GRAPH["headwise_trainer.pruning.prune"]
    assert "headwise_trainer.data.corpus" in GRAPH["headwise_trainer.evaluation.metrics"]
    assert "headwise_trainer.model.decode" in GRAPH["headwise_trainer.analysis.pipeline"]
    assert len(MODULES) > 60


def test_packages_import_only_from_the_packages_before_them():
    upward = sorted(f"{m} -> {t}" for m, ts in GRAPH.items() for t in ts
                    if m != "headwise_trainer" and layer(t) > layer(m))
    assert upward == []


def test_no_import_circle():
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert circles == []


def test_one_dynamic_import():
    # cli_support.lazy is the dispatch; runtime_module imports the separately built `headwise`;
    # the package itself resolves its stable names on first use (PEP 562 __getattr__).
    users = sorted(m for m, p in MODULES.items()
                   if "importlib" in open(p, encoding="utf-8").read())
    assert users == ["headwise_trainer", "headwise_trainer.cli_support",
                     "headwise_trainer.evaluation.runtime_module"]


def subcommand_parsers():
    from headwise_trainer import cli
    out = []

    def walk(parser, prefix):
        subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not subs:
            out.append((prefix, parser))
        for s in subs:
            for name, p in s.choices.items():
                walk(p, prefix + [name])
    walk(cli.build_parser(), [])
    return out


def test_every_subcommand_resolves_to_a_function():
    import importlib
    parsers = subcommand_parsers()
    names = sorted(" ".join(n) for n, _ in parsers)
    assert names == ["analyze", "average", "data", "data-card", "evaluate", "export",
                     "model-card", "plot-run", "prune", "prune-eval", "shortlist", "spm", "sweep gates", "sweep pick", "sweep rank",
                     "sweep report",
                     "sweep runs", "train"]
    for name, parser in parsers:
        defaults = {a.dest: a.default for a in parser._actions}
        defaults.update(parser._defaults)
        # func is the only default that is not an argument: vars(args) without it is what
        # train and prune record in run.json and their checkpoints.
        assert set(parser._defaults) == {"func"}, name
        func = parser._defaults["func"]
        target = getattr(func, "target", None)
        if target is not None:
            module, _, function = target.partition(":")
            assert callable(getattr(importlib.import_module(f"headwise_trainer.{module}"),
                                    function)), name
        else:
            assert callable(func) and func.__module__.startswith("headwise_trainer."), name


TEXT_FILES = (".md", ".py", ".sh", ".cc", ".h", ".txt", ".cmake")
SCANNED = ["README.md", "DEVELOPERS.md", "docs", "scripts", "bench", "python", "converter",
           "format", "runtime", "examples", "tests", "trainer", "models", "platforms", "fuzz"]
DOTTED = re.compile(r"\bheadwise_trainer(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"\btrainer/headwise_trainer/[\w/]*\w(?:\.py)?")


def references():
    for top in SCANNED:
        root = os.path.join(REPO, top)
        paths = [root] if os.path.isfile(root) else [
            os.path.join(d, f) for d, dirs, files in os.walk(root)
            for f in files if f.endswith(TEXT_FILES) or f == "headwise-train"]
        for p in paths:
            if os.path.getsize(p) > 2_000_000 or os.path.samefile(p, __file__):
                continue
            try:
                text = open(p, encoding="utf-8").read()
            except UnicodeDecodeError:
                continue
            for m in DOTTED.finditer(text):
                yield p, m.group(0), "dotted"
            for m in PATH.finditer(text):
                yield p, m.group(0), "path"


def top_level_names(module: str):
    tree = ast.parse(open(MODULES[module], encoding="utf-8").read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if module == "headwise_trainer":  # the package's lazy exports (its _EXPORTS table)
        import headwise_trainer
        names.update(headwise_trainer._EXPORTS)
    return names


def unresolved(ref: str, kind: str) -> bool:
    """True when `ref` (a trainer/headwise_trainer/... path or a headwise_trainer.X.Y name:
    a module, or a module and one of its top-level names) names nothing that exists."""
    if kind == "path":
        return not os.path.exists(os.path.join(REPO, ref))
    parts = ref.split(".")
    k = max(i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES)
    rest = parts[k:]
    return len(rest) > 1 or bool(rest and rest[0] not in top_level_names(".".join(parts[:k])))


def test_the_reference_check():
    assert not unresolved("headwise_trainer.model.safetensors_io", "dotted")
    assert not unresolved("headwise_trainer.sweep.cli.DEFAULT_PRUNE_ARGS", "dotted")
    assert not unresolved("trainer/headwise_trainer/evaluation/metrics.py", "path")
    assert not unresolved("trainer/headwise_trainer/analysis", "path")
    assert unresolved("headwise_trainer.safetensors_io", "dotted")  # moved to model/
    assert unresolved("headwise_trainer.sweep.cli.NO_SUCH_NAME", "dotted")
    assert unresolved("trainer/headwise_trainer/metrics.py", "path")


def test_every_module_path_the_repository_names_exists():
    missing = [f"{os.path.relpath(where, REPO)}: {ref}" for where, ref, kind in references()
               if unresolved(ref, kind)]
    assert missing == []


def test_every_name_imported_from_the_trainer_exists():
    # `from headwise_trainer.X import a, b` in tests, bench, python, tools and the package
    # itself (absolute form): X is a module and a, b are its submodules or top-level names.
    missing, seen = [], 0
    for top in ("tests", "bench", "python", "trainer"):
        for d, _, files in os.walk(os.path.join(REPO, top)):
            for f in files:
                if not (f.endswith(".py") or f == "headwise-train"):
                    continue
                path = os.path.join(d, f)
                tree = ast.parse(open(path, encoding="utf-8").read(), path)
                for node in ast.walk(tree):
                    if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                            and node.module.split(".")[0] == "headwise_trainer"):
                        continue
                    seen += 1
                    where = f"{os.path.relpath(path, REPO)}:{node.lineno}"
                    if node.module not in MODULES:
                        missing.append(f"{where}: {node.module}")
                        continue
                    names = top_level_names(node.module)
                    for a in node.names:
                        if f"{node.module}.{a.name}" not in MODULES and a.name not in names:
                            missing.append(f"{where}: {node.module}.{a.name}")
    assert seen > 100 and missing == []


def test_runtime_side_modules_do_not_load_torch():
    """bench/bleu.py and the headwise worker of bench/compare_pytorch.py import these to run the
    runtime; loading torch there would put ~230 MiB into the runtime's measured peak RSS."""
    import subprocess
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "import headwise_trainer.evaluation.runtime_module, headwise_trainer.evaluation.metrics;"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, TRAINER], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_stable_names_resolve_lazily():
    import headwise_trainer
    from headwise_trainer.model.gates import strip_heads
    assert headwise_trainer.strip_heads is strip_heads
    for name in headwise_trainer.__all__:
        assert getattr(headwise_trainer, name) is not None, name
    assert set(headwise_trainer.__all__) <= set(dir(headwise_trainer))
    with pytest.raises(AttributeError):
        headwise_trainer.no_such_name  # noqa: B018
