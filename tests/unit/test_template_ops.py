"""template.yaml's operations resources: log groups with retention, the Architecture parameter and its
layers, alarms (and their optional SNS topic), and samconfig.toml's environments. `sam validate --lint`
and `sam build` run in `make sam-check`; these tests pin what those cannot know we meant."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import yaml

from bookrag.services.tools import registered
from tests.support.paths import ROOT
from tests.support.template import http_routes, load_template

FUNCTIONS = ("AuthorizerFunction", "RetrievalFunction", "AgentFunction")


TEMPLATE = load_template(long_form=True)
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]


def _of_type(kind: str) -> dict[str, Any]:
    return {name: r for name, r in RESOURCES.items() if r["Type"] == kind}


def test_every_function_logs_to_a_declared_group_with_the_retention_parameter() -> None:
    groups = _of_type("AWS::Logs::LogGroup")
    for name in FUNCTIONS:
        group = RESOURCES[name]["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert groups[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    assert TEMPLATE["Parameters"]["LogRetentionDays"]["Default"] == 30


def test_the_architecture_parameter_picks_the_layer_built_for_it() -> None:
    assert TEMPLATE["Parameters"]["Architecture"]["AllowedValues"] == ["x86_64", "arm64"]
    glob = TEMPLATE["Globals"]["Function"]
    assert glob["Architectures"] == [{"Ref": "Architecture"}]
    assert glob["Layers"] == [{"Fn::If": ["IsArm64", {"Ref": "SharedLayerArm64"}, {"Ref": "SharedLayer"}]}]
    makefile = (ROOT / "shared" / "Makefile").read_text()
    for layer, arch, condition in (("SharedLayer", "x86_64", "IsX86"), ("SharedLayerArm64", "arm64", "IsArm64")):
        resource = RESOURCES[layer]
        assert resource["Condition"] == condition
        assert resource["Properties"]["CompatibleArchitectures"] == [arch]
        assert resource["Metadata"]["BuildArchitecture"] == arch
        wheels = "aarch64" if arch == "arm64" else "x86_64"
        assert re.search(rf"^build-{layer}:\n\t\$\(MAKE\) --no-print-directory layer ARCH={wheels}$", makefile, re.M)


def _alarm_metrics(alarm: dict[str, Any]) -> set[tuple[str, str]]:
    props = alarm["Properties"]
    if "Metrics" in props:
        return {(m["MetricStat"]["Metric"]["Namespace"], m["MetricStat"]["Metric"]["MetricName"])
                for m in props["Metrics"] if "MetricStat" in m}
    return {(props["Namespace"], props["MetricName"])}


def test_every_registered_tool_route_is_a_route_of_the_retrieval_function() -> None:
    import bookrag.services.conversations  # noqa: F401  (registers answer_question: every tool, not only REST ones)

    routes = http_routes({"Resources": {"RetrievalFunction": RESOURCES["RetrievalFunction"]}})
    paths = {tool.rest_path for tool in registered() if tool.rest_path is not None}
    assert paths  # the contracts' tools have REST routes
    assert paths <= {path for method, path in routes if method == "POST"}
    # ...and no route of a tool that is not registered (a tool removed from the registry, left in the template).
    assert {path for _, path in routes if path.startswith("/api/tools/")} == paths


def test_alarms_cover_the_api_each_function_and_the_authorizers_denials() -> None:
    alarms = _of_type("AWS::CloudWatch::Alarm")
    covered = set().union(*(_alarm_metrics(a) for a in alarms.values()))
    assert {("AWS/ApiGateway", "5xx"), ("AWS/ApiGateway", "Count"), ("AWS/ApiGateway", "Latency"),
            ("AWS/Lambda", "Throttles"), ("AWS/Lambda", "Errors"), ("AWS/Lambda", "Duration"),
            ("BookRAG", "AuthDenials")} <= covered
    assert alarms["ApiLatencyAlarm"]["Properties"]["ExtendedStatistic"] == "p95"
    for function in FUNCTIONS:
        watched = [a for a in alarms.values() if a["Properties"].get("Dimensions") == [
            {"Name": "FunctionName", "Value": {"Ref": function}}]]
        assert {a["Properties"]["MetricName"] for a in watched} == {"Errors", "Duration"}, function
    notify = {"Fn::If": ["Notify", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}
    assert all(a["Properties"]["AlarmActions"] == notify for a in alarms.values())
    assert TEMPLATE["Parameters"]["AlarmTopicArn"]["Default"] == ""
    denials = _of_type("AWS::Logs::MetricFilter")["AuthDenialsMetric"]["Properties"]
    assert denials["LogGroupName"] == {"Ref": "AuthorizerLogGroup"} and "request denied" in denials["FilterPattern"]


def test_the_denial_the_metric_filter_counts_is_the_one_the_authorizer_logs() -> None:
    guard = (ROOT / "shared" / "bookrag" / "auth" / "guard.py").read_text()
    assert 'logger.info("request denied"' in guard


def test_samconfig_has_dev_and_prod_naming_only_template_parameters() -> None:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    for env in ("dev", "prod"):
        deploy = config[env]["deploy"]["parameters"]
        assert deploy["stack_name"] == f"bookrag-{env}" and deploy["capabilities"] == "CAPABILITY_IAM"
        names = {o.split("=", 1)[0] for o in deploy["parameter_overrides"]}
        assert "QdrantUrl" in names and names <= set(TEMPLATE["Parameters"])
    assert config["prod"]["deploy"]["parameters"]["confirm_changeset"] is True


def test_the_ingest_workflow_publishes_atomically_and_names_its_secrets() -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "ingest-book.yml").read_text())
    steps = workflow["jobs"]["ingest"]["steps"]
    ingest = next(s for s in steps if "bookrag ingest" in s.get("run", ""))
    assert "--atomic" in ingest["run"] and ingest["env"]["EMBEDDING_PROVIDER"] == "cohere"
    for name in ("QDRANT_URL", "QDRANT_API_KEY", "COHERE_API_KEY"):
        assert ingest["env"][name] == "${{ secrets." + name + " }}"
    assert any("bookrag smoke" in s.get("run", "") for s in steps)
    assert workflow[True]["push"]["paths"] == ["docs/**"]  # YAML 1.1 reads the key `on` as True


def _statements(function: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for policy in RESOURCES[function]["Properties"].get("Policies", []):
        if isinstance(policy, dict) and "Statement" in policy:
            out.extend(policy["Statement"])
    return out


def _env(function: str) -> dict[str, Any]:
    return dict(RESOURCES[function]["Properties"].get("Environment", {}).get("Variables", {}))


def test_the_question_log_table_expires_its_items_after_the_retention_parameter() -> None:
    table = RESOURCES["QuestionLogTable"]["Properties"]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["KeySchema"] == [{"AttributeName": "query_id", "KeyType": "HASH"}]
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert table["SSESpecification"] == {"SSEEnabled": True}
    assert TEMPLATE["Parameters"]["QuestionLogRetentionDays"]["Default"] == 90
    variables = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["QUESTION_LOG_RETENTION_DAYS"] == {"Ref": "QuestionLogRetentionDays"}


def test_only_the_request_functions_write_the_question_log_and_none_reads_it_whole() -> None:
    writers = {"RetrievalFunction", "AgentFunction", "StreamFunction"}
    for name in _of_type("AWS::Serverless::Function"):
        granted = [s for s in _statements(name) if s.get("Resource") == {"Fn::GetAtt": "QuestionLogTable.Arn"}]
        if name not in writers:
            assert not granted and "QUESTION_LOG_TABLE" not in _env(name), name
            continue
        assert _env(name)["QUESTION_LOG_TABLE"] == {"Ref": "QuestionLogTable"}, name
        actions = {a for s in granted for a in s["Action"]}
        assert actions == ({"dynamodb:BatchWriteItem"} if name == "RetrievalFunction"
                           else {"dynamodb:BatchWriteItem", "dynamodb:UpdateItem"}), name
    # No other statement reaches the table (a wildcard resource would).
    for name in _of_type("AWS::Serverless::Function"):
        assert all(s.get("Resource") != "*" for s in _statements(name) if any(
            "dynamodb" in a for a in s.get("Action", []))), name


def test_feedback_is_a_route_of_the_agent_function_behind_the_authorizer() -> None:
    routes = http_routes(load_template())
    assert ("POST", "/api/feedback") in routes
    assert "Auth" not in routes[("POST", "/api/feedback")]
    cors = RESOURCES["BookApi"]["Properties"]["CorsConfiguration"]["Fn::If"][1]
    assert "x-query-id" in cors["ExposeHeaders"]
