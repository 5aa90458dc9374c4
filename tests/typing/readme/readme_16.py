import tempfile
from pathlib import Path

import msgwire
from msgwire.harness.providers import OpenAI
from msgwire.testing import ScriptedServer, reply
from msgwire.harness.store import open_store
from msgwire.harness.swarm import SYNTHETIC_TEXT, Swarm

folder = Path(tempfile.mkdtemp())
store = open_store(f"sqlite:///{folder / 'msgwire.db'}")  # or "postgresql://user:pw@host:5432/db"

conversation = store.create(system_prompt="Be brief.", agent="alice")  # stored, and bound
conversation.add(msgwire.user("Deploy the site?"))  # stored at once: the store gives seq 0
call = msgwire.assistant([msgwire.ToolCallBlock(id="c1", name="deploy", arguments="{}")], stop_reason="tool_use")
conversation.add(call)
approved = msgwire.ToolCallBlock(id="c1", name="deploy", arguments="{}", approval="approved")
conversation.update(msgwire.assistant([approved], id=call.id, stop_reason="tool_use"), "tool_call_approved")

batch = [msgwire.user(f"note {i}", id=f"note-{i}") for i in range(3)]
store.append(conversation.id, batch)  # one transaction, seq 3..5
store.append(conversation.id, batch)  # a retry: nothing is duplicated
assert store.messages(conversation.id, last=2) == batch[1:]  # note-1, note-2, as given
conversation.sync()  # take what other writers appended
assert store.load(conversation.id) == conversation and conversation.verify()

fork_id = store.fork(conversation.id, at=conversation.entries[1].id)  # a copy in SQL
assert store.messages(fork_id)[1] == call  # as it stood there: approval "pending"
audit = store.export_audit(conversation.id)  # the audit JSON of Conversation.export_audit

with (
    ScriptedServer(respond=lambda request: reply("On it.")) as server,  # a local model server
    OpenAI(base_url=server.url, api_key="k", model="m") as model,
    Swarm(store, model, window=20) as swarm,  # each agent runs msgwire.harness.Agent's loop
):
    for name in ("scout", "miner"):
        swarm.add(name)  # agents start idle
    swarm.broadcast("Survey the belt.", to=["scout"])  # starts the scout: its mission
    swarm.start_agent("miner")  # started without a message: encouraged, then idle
    swarm.run_until_idle(max_runs=6)
    assert swarm.state("miner").state == "idle" and swarm.state("miner").encouragement == 3
    assert swarm.state("scout").state == "running"  # a mission never runs out
    swarm.send("miner", "Mine iron.")  # a direct message wakes it
    assert swarm.state("miner").state == "running"
    trail = swarm.agents["scout"].conversation  # every step recorded, as any agent's
    assert [e.decision for e in trail.entries][-1] == "planning" and trail.verify()
store.close()
