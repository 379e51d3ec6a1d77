"""Docker-free `sam local invoke`: read template.yaml, import the function's handler, call it.

The layer's code is already importable (the `bookrag` package is installed in development mode),
just as SAM puts the layer's python/ folder on the path in Lambda. The handler module is loaded
from its CodeUri under its own name, so two functions never collide in sys.modules.
`load_handler` is that loader alone: the tests and the benchmarks import handlers through it too.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from bookrag.errors import BookRAGError
from bookrag.runtime.lambda_context import SyntheticContext

# shared/bookrag/devtools/ -> the repository: where functions/ is when the package is used from a checkout
REPO_ROOT = Path(__file__).resolve().parents[3]


class InvokeError(BookRAGError):
    code = "INVOKE_ERROR"
    http_status = 400


def load_handler(function: str | Path, module: str | None = None, *, root: Path = REPO_ROOT) -> ModuleType:
    """Import a function's handler file under its own module name, as the Lambda runtime does.

    `function` is a function's directory under `root/functions` by name ("retrieval"), or a code
    directory by path (a template's CodeUri). `module` defaults to `<directory name>_handler`.
    """
    code_dir = function if isinstance(function, Path) else root / "functions" / function
    name = module or f"{code_dir.name}_handler"
    spec = importlib.util.spec_from_file_location(name, code_dir / f"{name}.py")
    if spec is None or spec.loader is None:
        raise InvokeError(f"Cannot load the handler {name} from {code_dir}")
    loaded = importlib.util.module_from_spec(spec)
    # Registered as Lambda's import registers it; the distinct name keeps functions apart.
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        sys.modules.pop(name, None)  # as a failed import does: no half-initialised module left behind
        raise
    return loaded


def _load_template(path: Path) -> dict[str, Any]:
    import yaml

    class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type hints here
        pass

    # CloudFormation short-form tags (!Ref, !Sub, ...): keep their argument, the value is irrelevant here.
    def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_mapping(node)  # type: ignore[arg-type]

    _Loader.add_multi_constructor("!", _any_tag)
    try:
        data: dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)
    except OSError:
        raise InvokeError(f"Cannot read the template {path}") from None
    return data


def invoke_function(template: Path, function: str, event_path: Path) -> Any:
    data = _load_template(template)
    resources = data.get("Resources") or {}
    resource = resources.get(function)
    if not resource or resource.get("Type") != "AWS::Serverless::Function":
        names = sorted(k for k, v in resources.items() if v.get("Type") == "AWS::Serverless::Function")
        raise InvokeError(f"No function {function!r} in {template.name}; functions: {', '.join(names)}")
    props = resource.get("Properties") or {}
    module_name, _, attr = str(props["Handler"]).rpartition(".")
    module = load_handler(template.parent / str(props["CodeUri"]), module_name)
    try:
        event = json.loads(event_path.read_text())
    except (OSError, json.JSONDecodeError):
        raise InvokeError(f"Cannot read the event file {event_path}") from None
    return getattr(module, attr)(event, _context(function))


def _context(function: str) -> SyntheticContext:
    import uuid  # not at the top: the benchmarks import this module inside the cold start they time

    # A fresh request id per invocation, as Lambda gives one.
    return SyntheticContext(function_name=function, aws_request_id=str(uuid.uuid4()))
