"""A stand-in coding agent released in two versions, as a folder of npm-like packages (`<root>/<package>/<version>/`
with its package.json), so that installing a version, recording what it sends, diffing two versions and comparing
their matrices run without the network and without the real agents.

Both versions do the agents' task through the relay (chat completions: the file-reading tool `read`, then the
answer), and the newer one sends more: a `system` message (unless it is given a `claude-*` model id), a
`reasoning_effort`, a second beta flag, `?beta=true` on its path, and it asks for its answers streamed. A server that
answers `reasoning_effort` with HTTP 500 (the reference server's `reasoning-effort-500`) breaks the newer version
only.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

from lmconform.agents.agent import LOCAL, Agent, Launch, ModelShape
from lmconform.agents.install import InstallError, Packages
from lmconform.agents.outcome import AgentOutcome, ToolRun
from lmconform.agents.sandbox import Sandbox

PACKAGE = "lmconform-stand-in"
OLDER, NEWER = "1.0.0", "2.0.0"
SCRIPT = textwrap.dedent("""
    import json, sys, urllib.error, urllib.request
    from pathlib import Path

    version = json.loads(Path(__file__).with_name("package.json").read_text())["version"]
    base_url, model, task = sys.argv[1:4]
    newer = version.startswith("2.")


    def say(**event):
        print(json.dumps(event), flush=True)


    path = "/v1/chat/completions" + ("?beta=true" if newer else "")
    headers = {"content-type": "application/json", "authorization": "Bearer sk-stand-in",
               "user-agent": f"stand-in/{version}", "openai-beta": "flag-a,flag-b" if newer else "flag-a"}
    tools = [{"type": "function", "function": {"name": "read", "description": "Reads a file", "parameters": {
        "type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]}}}]
    system = [{"role": "system", "content": "You are a stand-in."}] if newer and not model.startswith("claude-") else []
    messages = [*system, {"role": "user", "content": task}]


    def streamed(answer):  # the message a stream of chunks makes: its content, and its calls by their index
        content, calls = "", {}
        for line in answer:
            data = line.decode().strip().removeprefix("data: ")
            if not line.startswith(b"data: ") or data == "[DONE]":
                continue
            delta = json.loads(data)["choices"][0]["delta"]
            content += delta.get("content") or ""
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(part["index"], {"id": "", "type": "function",
                                                        "function": {"name": "", "arguments": ""}})
                call["id"] += part.get("id") or ""
                for key in ("name", "arguments"):
                    call["function"][key] += (part.get("function") or {}).get(key) or ""
        return {"role": "assistant", "content": content, "tool_calls": [calls[index] for index in sorted(calls)]}


    try:
        for _ in range(4):
            extra = {"reasoning_effort": "low", "stream": True} if newer else {}
            body = {"model": model, "messages": messages, "tools": tools, **extra}
            request = urllib.request.Request(base_url + path, json.dumps(body).encode(), headers)
            with urllib.request.urlopen(request, timeout=20) as answer:
                message = streamed(answer) if newer else json.load(answer)["choices"][0]["message"]
            if not message.get("tool_calls"):
                say(type="text", text=message.get("content") or "")
                break
            messages.append(message)
            for call in message["tool_calls"]:
                arguments = json.loads(call["function"]["arguments"])
                result = Path(arguments["filePath"]).read_text()
                say(type="tool", name=call["function"]["name"], arguments=arguments, result=result)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    except urllib.error.HTTPError as error:
        say(type="error", message=f"HTTP {error.code}: {error.read().decode(errors='replace')[:200]}")
        sys.exit(1)
    except Exception as error:
        say(type="error", message=f"{type(error).__name__}: {error}")
        sys.exit(1)
""")


class StandIn(Agent):
    """The stand-in agent: its package's script, run by this Python."""

    name, title, package, api, client = "stand-in", "Stand-in", PACKAGE, "chat", "stand-in"
    measured, download_mb = OLDER, 1
    model_shapes = (LOCAL, ModelShape("claude", "claude-sonnet-4-5", "a `claude-*` id"))

    def binaries(self, os_name: str, arch: str) -> tuple[str, ...]:
        return (f"{PACKAGE}/agent.py",)

    def launch(self, binary: Path, sandbox: Sandbox, base_url: str, model: str | None, task: str) -> Launch:
        return Launch((sys.executable, str(binary), base_url, model or "default", task), sandbox.environment())

    def outcome(self, events: list[Any]) -> AgentOutcome:
        events = [event for event in events if isinstance(event, dict)]
        texts = [str(event.get("text")) for event in events if event.get("type") == "text"]
        return AgentOutcome(texts[-1] if texts else None,
                            tuple(ToolRun(str(event.get("name")), event.get("arguments"), str(event.get("result")))
                                  for event in events if event.get("type") == "tool"),
                            tuple(str(event.get("message")) for event in events if event.get("type") == "error"))


class LocalPackages(Packages):
    """A folder of npm-like packages standing in for the registry: `latest` is the highest version there."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fetched: list[str] = []

    def resolve(self, package: str, wanted: str) -> str:
        versions = sorted((folder.name for folder in (self.root / package).iterdir()),
                          key=lambda version: tuple(map(int, version.split("."))))
        if wanted == "latest" and versions:
            return versions[-1]
        raise InstallError(f"no {package}@{wanted} among {', '.join(versions)}")

    def fetch(self, folder: Path, package: str, version: str) -> None:
        source = self.root / package / version
        if not source.is_dir():
            raise InstallError(f"no version {version} of {package}")
        self.fetched.append(version)
        shutil.copytree(source, folder / "node_modules" / package)


def released(root: Path) -> LocalPackages:
    """The stand-in's two versions as packages under `root`."""
    for version in (OLDER, NEWER):
        folder = root / PACKAGE / version
        folder.mkdir(parents=True)
        (folder / "package.json").write_text(json.dumps({"name": PACKAGE, "version": version}))
        (folder / "agent.py").write_text(SCRIPT)
    return LocalPackages(root)
