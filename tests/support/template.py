"""template.yaml read as data: CloudFormation's short-form tags (!Ref, !If, ...) kept as {"!Tag": value}, or
read in their long form ({"Ref": ...}, {"Fn::If": ...})."""

from __future__ import annotations

from typing import Any

import yaml

from tests.support.paths import ROOT


def _tag_value(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]


class _ShortForm(yaml.SafeLoader):
    """!Ref X -> {"!Ref": X}: the tag as written."""


class _LongForm(yaml.SafeLoader):
    """!Ref X -> {"Ref": X}, !If [...] -> {"Fn::If": [...]}: CloudFormation's own long form."""


_ShortForm.add_multi_constructor("!", lambda loader, suffix, node: {f"!{suffix}": _tag_value(loader, node)})
_LongForm.add_multi_constructor(
    "!", lambda loader, suffix, node: {suffix if suffix == "Ref" else f"Fn::{suffix}": _tag_value(loader, node)})


def load_template(*, long_form: bool = False) -> dict[str, Any]:
    loader = _LongForm if long_form else _ShortForm
    data: dict[str, Any] = yaml.load((ROOT / "template.yaml").read_text(), Loader=loader)
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
