"""The public surface: curated `__all__` per package, no cross-package private imports in
shipped code, and the failure kinds documented where the brain's authors read them."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from browser_core import FailureKind

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("browser_core", "gemini", "search")
PUBLIC_MODULES = ("browser_core.recording", "browser_core.testing", "search.recordings")
SHIPPED = (*PACKAGES, "bench", "scripts")


@pytest.mark.parametrize("name", [*PACKAGES, *PUBLIC_MODULES])
def test_every_package_exports_a_resolvable_all(name: str) -> None:
    # Its order is ruff's (RUF022, isort style); here: every name is real and listed once.
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    for public in exported:
        assert not public.startswith("_")
        assert getattr(module, public) is not None, f"{name}.{public} does not resolve"


def _private_imports(path: Path) -> list[str]:
    own = path.relative_to(ROOT).parts[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            assert isinstance(node, ast.ImportFrom | ast.Import)  # names come only from these
            parts = name.split(".")
            private = any(part.startswith("_") for part in parts[1:])
            if parts[0] in PACKAGES and parts[0] != own and private:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    return found


def test_shipped_code_never_imports_another_packages_private_module() -> None:
    offenders = [
        hit
        for folder in SHIPPED
        for path in sorted((ROOT / folder).rglob("*.py"))
        for hit in _private_imports(path)
    ]
    assert offenders == [], "\n".join(offenders)


def test_every_failure_kind_is_documented_for_the_brain() -> None:
    doc = (ROOT / "docs" / "llm_contexts.md").read_text(encoding="utf-8")
    missing = [kind.value for kind in FailureKind if f"| `{kind.value}` |" not in doc]
    assert missing == []
