"""template.yaml read as data: CloudFormation's short-form tags (!Ref, !If, ...) kept as {"!Tag": value}."""

from __future__ import annotations

from typing import Any

import yaml

from tests.support.paths import ROOT


class _Loader(yaml.SafeLoader):
    pass


def _tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {f"!{suffix}": value}


_Loader.add_multi_constructor("!", _tagged)


def load_template() -> dict[str, Any]:
    data: dict[str, Any] = yaml.load((ROOT / "template.yaml").read_text(), Loader=_Loader)
    return data


def http_routes(template: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(method, path) -> the event's properties, for every HttpApi event of every function."""
    routes = {}
    for resource in template["Resources"].values():
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") == "HttpApi":
                props = event["Properties"]
                routes[(props["Method"], props["Path"])] = props
    return routes
