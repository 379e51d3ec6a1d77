"""Docker-free `sam local invoke`: read template.yaml, import the function's handler, call it.

The layer's code is already importable (the `bookrag` package is installed in development mode),
just as SAM puts the layer's python/ folder on the path in Lambda. The handler module is loaded
from its CodeUri under its own name, so two functions never collide in sys.modules.
"""

from __future__ import annotations

import importlib.util
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bookrag.errors import BookRAGError


class InvokeError(BookRAGError):
    code = "INVOKE_ERROR"
    http_status = 400


@dataclass
class LocalContext:
    function_name: str
    memory_limit_in_mb: int = 1024
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    invoked_function_arn: str = "arn:aws:lambda:local:000000000000:function:local"
    timeout_ms: int = 25_000

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout_ms


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
    code_dir = template.parent / str(props["CodeUri"])
    spec = importlib.util.spec_from_file_location(module_name, code_dir / f"{module_name}.py")
    if spec is None or spec.loader is None:
        raise InvokeError(f"Cannot load the handler {props['Handler']}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        event = json.loads(event_path.read_text())
    except (OSError, json.JSONDecodeError):
        raise InvokeError(f"Cannot read the event file {event_path}") from None
    return getattr(module, attr)(event, LocalContext(function_name=function))
