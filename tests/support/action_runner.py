"""Run a composite action's shell steps here, in order, as a GitHub runner would.

The runner-like part: each step's ``if`` evaluated (``success()`` by default; ``always()``,
``!cancelled()``, ``failure()``, comparisons of inputs and step outputs), its ``env`` resolved
(``${{ inputs.* }}``, ``${{ steps.*.outputs.* }}``, ``github.*``, ``runner.*``), its script run
by ``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell: bash``) in the workspace with
GITHUB_ACTION_PATH, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT (one file per step, read back into the
step's outputs) and RUNNER_TEMP set. Steps that ``uses:`` another action are not run (they need
GitHub's runner: setup-python, cache, upload-artifact) and are listed as such. The action's
outputs are resolved from its ``outputs:`` at the end."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# the tokens of the expressions the action uses, as Python: literals, context references,
# status functions, operators
TOKEN = re.compile(
    r"(?P<string>'(?:[^']|'')*')|(?P<call>[a-z]+\(\))|(?P<ref>[a-z_]+(?:\.[A-Za-z0-9_-]+)+)"
    r"|(?P<op>&&|\|\||==|!=|!|\(|\))|(?P<space>\s+)"
)
STATUS = {"always()": "True", "cancelled()": "False", "success()": "ok", "failure()": "not ok"}
OPERATORS = {"&&": " and ", "||": " or ", "!": " not ", "==": "==", "!=": "!=", "(": "(", ")": ")"}


@dataclass
class ActionRun:
    outputs: dict[str, str]
    summary: str
    failed: bool
    ran: list[str] = field(default_factory=list)  # names of the shell steps run
    skipped: list[str] = field(default_factory=list)  # names of steps whose 'if' was false
    uses: list[str] = field(default_factory=list)  # the actions 'uses:' steps name
    log: str = ""


class Context:
    def __init__(self, inputs: dict[str, str], github: dict[str, str], runner: dict[str, str]):
        self.values: dict[str, dict[str, Any]] = {
            "inputs": inputs,
            "github": github,
            "runner": runner,
            "steps": {},
        }

    def lookup(self, reference: str) -> str:
        parts = reference.split(".")
        value: Any = self.values.get(parts[0], {})
        for part in parts[1:]:
            value = value.get(part, "") if isinstance(value, dict) else ""
        return "" if isinstance(value, dict) else str(value)

    def substitute(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.lookup(m.group(1)), text)

    def condition(self, expression: str | bool | None, ok: bool) -> bool:
        """An ``if:``, with GitHub's implied ``success() &&`` when it names no status function."""
        if expression is None:
            return ok
        if isinstance(expression, bool):
            return ok and expression
        inner = EXPRESSION.fullmatch(expression.strip())
        text = inner.group(1) if inner else expression
        python, position = [], 0
        while position < len(text):
            match = TOKEN.match(text, position)
            if match is None:
                raise ValueError(f"expression the runner cannot read: {text!r} at {position}")
            kind, token = match.lastgroup, match.group()
            if kind == "string":
                python.append(repr(token[1:-1].replace("''", "'")))
            elif kind == "call":
                python.append(STATUS[token])
            elif kind == "ref":
                python.append(repr(self.lookup(token)))
            elif kind == "op":
                python.append(OPERATORS[token])
            position = match.end()
        value = bool(eval("".join(python), {"__builtins__": {}}, {"ok": ok}))
        return value if any(call in text for call in STATUS) else ok and value


def run_action(
    action_dir: Path,
    inputs: dict[str, str],
    workspace: Path,
    env: dict[str, str],
    runner_temp: Path,
) -> ActionRun:
    """Run the composite action in ``action_dir`` with ``inputs`` (defaults filled in), in
    ``workspace``. ``runner_temp`` is the job's: shared by every use of an action in it."""
    action = yaml.safe_load((action_dir / "action.yml").read_text(encoding="utf-8"))
    declared = action["inputs"]
    unknown = set(inputs) - set(declared)
    if unknown:
        raise ValueError(f"inputs the action does not declare: {sorted(unknown)}")
    given = {
        name: str(inputs.get(name, spec.get("default", ""))) for name, spec in declared.items()
    }
    missing = [n for n, spec in declared.items() if spec.get("required") and not given[n]]
    if missing:
        raise ValueError(f"required inputs not given: {missing}")
    context = Context(
        given,
        github={"action_path": str(action_dir), "action_ref": "", "workspace": str(workspace)},
        runner={"os": "Linux", "temp": str(runner_temp)},
    )
    files = workspace.parent / "runner-files"  # this run's summary and output files
    files.mkdir(exist_ok=True)
    summary = files / "step_summary.md"
    summary.write_text("", encoding="utf-8")
    run = ActionRun(outputs={}, summary="", failed=False)
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if not context.condition(step.get("if"), ok=not run.failed):
            run.skipped.append(name)
            continue
        if "uses" in step:
            run.uses.append(step["uses"])
            continue
        output_file = files / f"output_{index}"
        output_file.write_text("", encoding="utf-8")
        step_env = {
            **env,
            "GITHUB_ACTION_PATH": str(action_dir),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(runner_temp),
            **{k: context.substitute(str(v)) for k, v in step.get("env", {}).items()},
        }
        assert step.get("shell") == "bash", f"{name}: the runner runs bash steps only"
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        run.ran.append(name)
        run.log += f"::group::{name} (exit {completed.returncode})\n"
        run.log += completed.stdout + completed.stderr + "::endgroup::\n"
        if "id" in step:
            context.values["steps"][step["id"]] = {"outputs": read_outputs(output_file)}
        run.failed |= completed.returncode != 0
    run.summary = summary.read_text(encoding="utf-8")
    for name, spec in action.get("outputs", {}).items():
        run.outputs[name] = context.substitute(spec["value"])
    return run


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's NAME=VALUE lines and NAME<<DELIMITER blocks."""
    outputs, lines = {}, path.read_text(encoding="utf-8").splitlines()
    position = 0
    while position < len(lines):
        line = lines[position]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, position + 1)
            outputs[name] = "\n".join(lines[position + 1 : end])
            position = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
        position += 1
    return outputs


def runner_environment(path_first: Path) -> dict[str, str]:
    """The environment of a runner's step: this one's, with no suite settings and a PATH that
    finds ``path_first`` (the Python setup-python would have put there) first."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("EMBEDDINGS_", "OPENAI_", "PYTEST"))
    }
    environment["PATH"] = f"{path_first}{os.pathsep}{environment.get('PATH', '')}"
    environment["CI"] = environment["GITHUB_ACTIONS"] = "true"
    return environment
