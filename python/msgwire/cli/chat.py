"""``msgwire chat``: a live agent session in the terminal.

The model comes from flags or the environment: ``--provider`` (a dialect: ``openai``,
``openai-responses``, ``anthropic``, ``gemini``, ``ollama``, or a preset: ``groq``, ``mistral``,
``vllm``, ...; else ``MSGWIRE_PROVIDER``, else the first of ``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``, ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` set, else a local Ollama),
``--base-url`` (``MSGWIRE_BASE_URL``), ``--model`` (``MSGWIRE_MODEL``), ``--api-key`` (else the
provider's own variable). Text streams in as it arrives; each tool call is shown with its
arguments and asked about: approve, deny (with a reason), or edit the arguments. The tools read a
file, list a folder and grep, under ``--workspace`` (the current folder by default).

Every conversation is stored as it goes (its messages, mode and audit trail), from its first
message on, so nothing is lost when the terminal closes: in ``--store URL`` (``sqlite:///path.db``
or ``postgresql://user@host/db``), else ``MSGWIRE_STORE``, else ``sessions.db`` in the user's
data directory (``$XDG_DATA_HOME/msgwire/``, else ``~/.local/share/msgwire/``, made on first
use). ``--resume`` continues the latest one, ``--resume ID`` that one (its last characters are
enough, as ``msgwire sessions`` shows, or its first), in the workspace it had unless
``--workspace`` says another; ``msgwire sessions`` lists them. A conversation another program
made (a swarm agent's, an openai-agents session) is continued only with ``--force``. A resumed
conversation's header (system prompt, mode, modes...) is the one its audit trail holds: one
whose stored columns say otherwise (changed behind the store's back) is not resumed, unless
``--accept-header COLUMN`` takes that column as stored.

In a message, ``@path``, ``@path:10-20`` or ``@"a path":3`` attach those lines of a workspace
file. Commands:

  /image PATH            attach an image to your next message (read by the model if it can see,
                         else by OCR when the ``ocr`` extra is installed)
  /resource SERVER URI   attach an MCP resource now (servers: ``--mcp NAME=COMMAND``)
  /mode [NAME]           show or switch the mode (``act``, ``plan``): its system prompt
  /fork [SEQ]            continue in a fork of the conversation (at entry SEQ, else now)
  /save FILE             export the audit trail (``.jsonl``: JSON Lines) for ``msgwire audit FILE``
  /audit                 the timeline so far, its hash chain verified
  /help, /quit           (end of input quits too)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec
from rich.console import Console
from rich.text import Text

from ..errors import MsgwireError
from ..types import AssistantMessage, ContentBlock, ImageBlock, PathSource, TextBlock, UserMessage
from .commands import SUMMARIES
from .inputs import NotReadable, UsageError
from .render import ERROR, TOOL, clip, console, plain_help
from .sessions import CHAT_AGENT, default_store, find, never_used, open_chat_store, store_flag, store_location

if TYPE_CHECKING:
    from ..harness import Agent, ApprovalRequest, Conversation
    from ..harness.providers import HTTPProvider
    from ..harness.resources import MCPResources
    from ..harness.store import ConversationInfo, HeaderColumn, Store
    from ..harness.tools import Decision

__all__ = ["MODES", "Chat", "add_parser", "run", "show_event"]

MODES = {
    "act": (
        "You are a careful coding assistant working in the user's workspace. Use the tools (read_file, "
        "list_dir, grep) to look before you answer; say what you found, briefly."
    ),
    "plan": (
        "You are a careful coding assistant in planning mode: describe the steps you would take and the "
        "files you would look at, without calling tools unless the user asks."
    ),
}
_KEYS = (
    ("anthropic", ("ANTHROPIC_API_KEY",)),
    ("openai", ("OPENAI_API_KEY",)),
    ("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
)
_ANSWERS = {
    **dict.fromkeys(("a", "approve", "y", "yes"), "approve"),
    **dict.fromkeys(("d", "deny", "n", "no"), "deny"),
    **dict.fromkeys(("e", "edit"), "edit"),
}
Ask = Callable[[str], str]
HELP = plain_help(__doc__).split("Commands:", 1)[-1].rstrip()


def choose_provider(name: str | None) -> str:
    """The provider named, else ``MSGWIRE_PROVIDER``, else the first whose key is set, else Ollama."""
    if name:
        return name
    if os.environ.get("MSGWIRE_PROVIDER"):
        return os.environ["MSGWIRE_PROVIDER"]
    for provider, keys in _KEYS:
        if any(os.environ.get(k) for k in keys):
            return provider
    return "ollama"


def _mcp_servers(specs: list[str]) -> dict[str, list[str]]:
    servers: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, command = spec.partition("=")
        if not sep or not name or not command.strip():
            raise UsageError(f"--mcp takes NAME=COMMAND, got {spec!r}")
        servers[name] = shlex.split(command)
    return servers


class Chat:
    """One session: the agent, the terminal, the store, and what waits for the next message.

    The conversation is stored from its first entry on (a chat left without a word stores
    nothing); a resumed one is stored already."""

    def __init__(
        self,
        agent: Agent,
        out: Console,
        ask: Ask,
        *,
        workspace: Path,
        mcp_servers: dict[str, list[str]],
        store: Store,
    ) -> None:
        self.agent = agent
        self.out = out
        self.ask = ask
        self.workspace = workspace
        self.mcp_servers = mcp_servers
        self.store = store
        self.mcp: MCPResources | None = None
        self.attached: list[ContentBlock] = []

    # --- the loop ----------------------------------------------------------------------------

    def loop(self) -> int:
        conversation = self.agent.conversation
        self.out.print(
            Text(f"msgwire chat · {self.agent.provider!r} · workspace {self.workspace} · /help for commands", "dim")
        )
        kept = f"stored in {self.store.url}"
        if len(conversation):
            self.out.print(Text(f"resumed conversation {conversation.id} · mode {conversation.mode} · {kept}", "dim"))
            self._recap()
        else:
            self.out.print(Text(f"conversation {conversation.id} · mode {conversation.mode} · {kept}", "dim"))
        try:
            while True:
                try:
                    line = self.ask("you> ").strip()
                except EOFError:
                    return 0
                if not line:
                    continue
                if line.startswith("/"):
                    if not self.command(line):
                        return 0
                    continue
                self.send(line)
        finally:
            if self.agent.conversation.bound is not None:
                flag, note = store_flag(self.store)
                resume = f"msgwire chat{flag} --resume {self.agent.conversation.id}"
                self.out.print(Text(f"({resume} continues it{note})", "dim"), soft_wrap=True)

    def keep(self) -> None:
        """Store the conversation, with its entries so far, unless it is stored already (every
        entry added after is stored as it is added)."""
        conversation = self.agent.conversation
        if conversation.bound is None:
            self.store.bind(conversation, agent=CHAT_AGENT)

    def _recap(self, last: int = 4) -> None:
        """The last words of a resumed conversation, so that the user sees where it stood."""
        messages = self.agent.conversation.messages()
        said = [m for m in messages if isinstance(m, (UserMessage, AssistantMessage)) and m.text]
        for message in said[-last:]:
            who = "you> " if isinstance(message, UserMessage) else "  "
            self.out.print(Text(f"{who}{clip(message.text, 100)}", "dim"))

    def send(self, text: str) -> None:
        message = UserMessage(content=[TextBlock(text=text), *self.attached])
        self.attached = []
        self.keep()
        entries = len(self.agent.conversation)
        started = False
        try:
            for event in self.agent.stream(message):
                if event.type == "step_start" and not started:
                    started = True
                    self._resolutions(entries)
                show_event(self.out, event)
        except MsgwireError as failure:
            self.out.print()
            self.out.print(Text(f"✗ {type(failure).__name__}: {failure}", ERROR))
        except KeyboardInterrupt:
            self.out.print(Text("\n(interrupted: the partial answer is kept in the trail)", "dim"))

    def _resolutions(self, since: int) -> None:
        """What the agent attached to the message: each mention, image, resource and its status."""
        for entry in self.agent.conversation.entries[since:]:
            for block in entry.audit.get("blocks", ()) if entry.decision == "resources_resolved" else ():
                what = block.get("path") or block.get("uri") or block.get("type")
                error = f": {block['error']}" if block.get("error") else ""
                self.out.print(Text(f"  📎 {what}: {block.get('status')}{error}", "dim"))

    # --- approval ------------------------------------------------------------------------------

    def approve(self, requests: list[ApprovalRequest]) -> dict[str, Decision]:
        """Ask about each call: approve, deny (with a reason) or edit its arguments."""
        from ..harness import Approve, Deny

        decisions: dict[str, Decision] = {}
        for request in requests:
            call = request.call
            self.out.print(Text(f"? {call.name} wants {call.arguments}", TOOL))
            while True:
                try:
                    answer = self.ask("  [a]pprove / [d]eny / [e]dit? ").strip().lower()
                except EOFError:
                    decisions[call.id] = Deny(reason="no answer (end of input)", by="user")
                    break
                choice = _ANSWERS.get(answer)
                if choice == "approve":
                    decisions[call.id] = Approve(by="user")
                elif choice == "deny":
                    reason = self._ask_or("  reason (optional): ", "")
                    decisions[call.id] = Deny(reason=reason or "denied by the user", by="user")
                elif choice == "edit":
                    edited = self._ask_or("  arguments (JSON object): ", "")
                    try:
                        arguments = msgspec.json.decode(edited)
                    except msgspec.DecodeError as exc:
                        self.out.print(Text(f"  not JSON: {exc}", ERROR))
                        continue
                    if not isinstance(arguments, dict):
                        self.out.print(Text("  the arguments are a JSON object", ERROR))
                        continue
                    decisions[call.id] = Approve(arguments=arguments, by="user", reason="edited by the user")
                else:
                    hint = "a (approve), d (deny, then a reason) or e (edit the arguments, as a JSON object)"
                    self.out.print(Text(f"  {answer or 'no answer'}? the answers are {hint}", ERROR))
                    continue
                break
        return decisions

    def _ask_or(self, prompt: str, default: str) -> str:
        try:
            return self.ask(prompt).strip()
        except EOFError:
            return default

    # --- commands ------------------------------------------------------------------------------

    def command(self, line: str) -> bool:
        """Run a ``/command``; ``False`` to quit."""
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        handlers: dict[str, Callable[[str], None]] = {
            "/image": self.image,
            "/resource": self.resource,
            "/mode": self.mode,
            "/fork": self.fork,
            "/save": self.save,
            "/audit": self.audit,
            "/help": lambda _: self.out.print(HELP, markup=False, highlight=False),
        }
        if name in ("/quit", "/exit"):
            return False
        handler = handlers.get(name)
        if handler is None:
            self.out.print(Text(f"unknown command {name} (/help lists them)", ERROR))
            return True
        try:
            handler(rest)
        except (MsgwireError, OSError, ValueError, KeyError) as failure:
            self.out.print(Text(f"✗ {name}: {failure}", ERROR))
        return True

    def image(self, path: str) -> None:
        if not path:
            raise ValueError("usage: /image PATH")
        if not (self.workspace / path).is_file():
            raise ValueError(f"no file {path!r} in the workspace")
        self.attached.append(ImageBlock(source=PathSource(path=path)))
        self.out.print(Text(f"  🖼 {path} attached: sent with your next message", "dim"))

    def resource(self, rest: str) -> None:
        server, _, uri = rest.partition(" ")
        if not server or not uri.strip():
            raise ValueError("usage: /resource SERVER URI")
        if server not in self.mcp_servers:
            known = ", ".join(self.mcp_servers) or "none: start the chat with --mcp NAME=COMMAND"
            raise ValueError(f"no MCP server {server!r} (servers: {known})")
        mcp = self._mcp()
        block = mcp.read(server, uri.strip())
        if block.status == "error":
            raise ValueError(f"{server}:{uri.strip()}: {block.error}")
        self.agent.conversation.add(mcp.context(block))
        self.keep()
        size = len(block.content or block.blob or "")
        self.out.print(Text(f"  📎 {server}:{block.resource_uri} attached ({block.mime_type}, {size} chars)", "dim"))

    def _mcp(self) -> MCPResources:
        if self.mcp is None:
            from ..harness.resources import MCPResources

            self.mcp = MCPResources(self.mcp_servers)
            self.mcp.open()
            self.agent.context.resolvers.append(self.mcp)
        return self.mcp

    def mode(self, name: str) -> None:
        conversation = self.agent.conversation
        if not name:
            self.out.print(f"  mode {conversation.mode} (modes: {', '.join(conversation.modes)})")
            return
        if conversation.switch_mode(name, by="user") is None:
            self.out.print(Text(f"  already in mode {name}: nothing changed", "dim"))
            return
        self.keep()
        self.out.print(Text(f"  mode {name}: {clip(conversation.system_prompt or '', 80)}", "dim"))

    def fork(self, at: str) -> None:
        conversation = self.agent.conversation
        entry_id = None
        if at:
            seq = int(at)
            entry_id = next((e.id for e in conversation.entries if e.seq == seq), None)
            if entry_id is None:
                raise ValueError(f"no entry {seq} (0 to {len(conversation) - 1})")
        self.keep()
        fork = self.store.bind(conversation.fork(entry_id), agent=CHAT_AGENT)
        self.agent.conversation = fork
        where = f"entry {at}" if at else f"entry {len(conversation) - 1}"
        self.out.print(Text(f"  forked: conversation {fork.id}, from {conversation.id} at {where}", "dim"))

    def save(self, path: str) -> None:
        if not path:
            raise ValueError("usage: /save FILE")
        conversation = self.agent.conversation
        conversation.export_audit(Path(path), format="jsonl" if path.endswith(".jsonl") else "json")
        self.out.print(Text(f"  saved {len(conversation)} entries to {path} (head {conversation.head[:16]}…)", "dim"))

    def audit(self, _: str) -> None:
        from .timeline import show

        show(self.agent.conversation, self.out)

    def close(self) -> None:
        if self.mcp is not None:
            self.mcp.close()


def show_event(out: Console, event: Any) -> None:
    """One event of ``Agent.stream`` in the terminal: text as it streams, each call, each
    decision, each result, a failure, the run's end."""
    kind = event.type
    if kind == "text_delta":
        out.print(event.text, end="", markup=False, highlight=False)
    elif kind == "tool_call_end":
        out.print()
        out.print(Text(f"⚙ {event.block.name} {event.block.arguments}", TOOL))
    elif kind == "tool_decided":
        record = event.record
        if record.approved:
            edited = " (arguments edited)" if record.asked_fingerprint else ""
            out.print(Text(f"  ✓ {record.tool} approved by {record.by}{edited}", "green"))
        else:
            out.print(Text(f"  ✗ {record.tool} denied by {record.by}: {record.reason}", ERROR))
    elif kind == "tool_finished":
        result = event.result
        note = "" if result.status == "success" else f" [{result.status}]"
        out.print(Text(f"  → {result.tool_name}{note}: {clip(result.text, 100)}", "dim"))
    elif kind == "stream_failed":
        again = " (sending it again)" if event.retrying else ""
        out.print(Text(f"\n✗ {event.kind}: {event.error}{again}", ERROR))
    elif kind == "run_end":
        usage = event.usage
        out.print()
        summary = f"({event.steps} step(s), {event.reason}, {usage.input_tokens} in / {usage.output_tokens} out)"
        out.print(Text(summary, "dim"))


def _reader(out: Console) -> Ask:
    """``input`` with the prompt shown on a terminal only (piped input is echoed instead)."""
    interactive = sys.stdin.isatty()

    def ask(prompt: str) -> str:
        if interactive:
            return input(prompt)
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        out.print(Text(prompt + line.rstrip("\n"), "dim"))
        return line.rstrip("\n")

    return ask


def make_provider(args: argparse.Namespace) -> HTTPProvider:
    from ..harness import providers

    name = choose_provider(args.provider)
    options: dict[str, Any] = {}
    if args.base_url:
        options["base_url"] = args.base_url
    if args.api_key:
        options["api_key"] = args.api_key
    if args.model:
        options["model"] = args.model
    try:
        return providers.create(name, **options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from ..harness import Agent, ContextPipeline, ProviderVision
    from ..harness.resources import FileResolver, ImageRecognizer
    from .workspace import workspace_tools

    if args.resume is not None and args.system:
        raise UsageError("--system sets a new conversation's act mode: a resumed one keeps its own modes")
    if args.resume is None and (args.force or args.accept_header):
        raise UsageError("--force and --accept-header go with --resume")
    servers = _mcp_servers(args.mcp)
    with contextlib.ExitStack() as closing:
        provider = make_provider(args)
        closing.callback(provider.close)
        if not provider.model:
            raise UsageError("no model: pass --model or set MSGWIRE_MODEL")
        location = store_location(args.store)
        if args.resume is not None and never_used(location):
            raise UsageError(f"nothing to resume: no conversation was stored in {location} yet")
        store = open_chat_store(location, create=args.resume is None)  # resuming reads: a typo makes no store
        closing.callback(store.close)
        conversation, workspace = _conversation(store, args)
        out = console()
        files = FileResolver(workspace)
        images = ImageRecognizer(vision=ProviderVision(provider, model=provider.model), files=files)
        closing.callback(images.close)
        agent = closing.enter_context(
            Agent(
                provider,
                tools=workspace_tools(workspace, policy="auto" if args.auto_approve else "ask", files=files),
                conversation=conversation,
                max_tokens=args.max_tokens,
                context=ContextPipeline([files, images]),
                max_steps=args.max_steps,
                on_error="stop",  # the failure is shown once, as the loop's event; the chat goes on
            )
        )
        chat = Chat(agent, out, _reader(out), workspace=workspace, mcp_servers=servers, store=store)
        closing.callback(chat.close)
        agent.approver = chat.approve
        code = chat.loop()
    return code


def _conversation(store: Store, args: argparse.Namespace) -> tuple[Conversation, Path]:
    """A new conversation (not stored until its first entry), or the one ``--resume`` names, and
    its workspace: ``--workspace``, else the resumed conversation's, else the current folder."""
    from ..harness import Conversation

    given = Path(args.workspace).resolve() if args.workspace is not None else None
    if args.resume is None:
        workspace = given or Path.cwd()
        _check_folder(workspace, args.workspace)
        modes = dict(MODES)
        if args.system:
            modes["act"] = args.system
        return Conversation(modes=modes, mode="act", metadata={"workspace": str(workspace)}), workspace
    info = find(store, args.resume)
    if info.agent != CHAT_AGENT and not args.force:
        raise UsageError(_not_a_chat(info))
    stored = info.metadata.get("workspace")
    workspace = given or (Path(stored) if isinstance(stored, str) else Path.cwd())
    _check_folder(workspace, args.workspace or f"{workspace} (the workspace of {info.id}: --workspace gives another)")
    return _open(store, info.id, args.accept_header), workspace


def _not_a_chat(info: ConversationInfo) -> str:
    """Why ``--resume`` stops at a conversation msgwire chat did not make, and how to go on."""
    owner = f"agent {info.agent!r}" if info.agent else "no agent (a program's own, such as an openai-agents session)"
    mode = f"mode {info.mode}" if info.mode else "no mode"
    prompt = "a system prompt" if info.system_prompt else "no system prompt"
    return (
        f"conversation {info.id} is not one of msgwire chat's: it belongs to {owner}, with {mode} and {prompt}. "
        "Your turns would join its trail: --force continues it all the same"
    )


def _open(store: Store, conversation_id: str, accept: list[str]) -> Conversation:
    """The conversation, bound, its header checked against its trail (``--accept-header``:
    the columns taken as stored all the same)."""
    from ..errors import HeaderMismatchError

    try:
        return store.open(conversation_id, accept_header=cast("list[HeaderColumn]", accept))  # the store checks them
    except HeaderMismatchError as exc:
        names = " ".join(f"--accept-header {column}" for column in exc.columns)
        raise NotReadable(
            f"conversation {conversation_id} is not resumed: its stored header is not what its audit trail says "
            f"({'; '.join(exc.details)}). msgwire audit --store {store.url} {conversation_id} shows it; "
            f"{names} resumes it with the stored values"
        ) from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--accept-header: {exc}") from None


def _check_folder(folder: Path, named: str | None) -> None:
    if not folder.is_dir():
        raise UsageError(f"no such folder: {named or folder}")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "chat",
        help=SUMMARIES["chat"],
        description=plain_help(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--provider", help="a dialect or preset (default: MSGWIRE_PROVIDER, or from the API keys set)")
    parser.add_argument("--base-url", default=os.environ.get("MSGWIRE_BASE_URL"), help="the API's URL")
    parser.add_argument("--model", default=os.environ.get("MSGWIRE_MODEL"), help="the model")
    parser.add_argument("--api-key", help="the API key (default: the provider's environment variable)")
    parser.add_argument(
        "--workspace", help="the folder the tools and @mentions may read (default: a resumed conversation's, else .)"
    )
    parser.add_argument("--max-tokens", type=int, default=1024, help="the longest answer, in tokens (1024)")
    parser.add_argument("--max-steps", type=int, default=25, help="model calls per message (25)")
    parser.add_argument("--system", help="the system prompt of the act mode")
    parser.add_argument("--mcp", action="append", default=[], metavar="NAME=COMMAND", help="an MCP server over stdio")
    parser.add_argument("--auto-approve", action="store_true", help="run every tool call without asking")
    where = f"where conversations are kept (default: MSGWIRE_STORE, else {default_store()})"
    parser.add_argument("--store", metavar="URL", help=where)
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="continue a stored conversation: the latest, or the one ID names (msgwire sessions lists them)",
    )
    parser.add_argument(
        "--force", action="store_true", help="with --resume ID: continue a conversation msgwire chat did not make"
    )
    parser.add_argument(
        "--accept-header",
        action="append",
        default=[],
        metavar="COLUMN",
        help="with --resume: take this stored header column (the error names it) although the audit trail "
        "says otherwise; repeatable",
    )
    parser.set_defaults(run=run)
