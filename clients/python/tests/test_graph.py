"""A LangGraph graph with MemoryFabricStore as its long-term memory, against a running cluster, as
an ordinary agent role: deterministic nodes (no model), a checkpointer for each thread's state,
memories shared across one user's threads and never with another user's.

    MF_TEST_CONNINFO="host=... port=... user=<superuser>" python3 -m unittest discover -s clients/python/tests
"""

from __future__ import annotations

import asyncio
import operator
import threading
import unittest
from typing import Annotated, Any, Optional, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

import memory_fabric as mf
import test_store as db
from memory_fabric.store import MemoryFabricStore

T = db.T
QUESTION = "how should we contact the customer?"


def setUpModule() -> None:
    db.make_database()


def tearDownModule() -> None:
    db.drop_database()


class State(TypedDict, total=False):
    action: str
    channel: str
    found: Optional[dict[str, Any]]
    hits: list[tuple[str, dict[str, Any]]]
    log: Annotated[list[str], operator.add]


def namespace(config: RunnableConfig) -> tuple[str, ...]:
    return (T, config["configurable"]["user_id"])


def route(state: State) -> str:
    return state["action"]


def remember(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
    user = config["configurable"]["user_id"]
    store.put(namespace(config), "contact_channel",
              {"text": f"Customer {user} prefers to be contacted by {state['channel']}.", "channel": state["channel"]})
    outcome = get_store().last_outcome  # type: ignore[attr-defined]
    return {"log": [f"remember:{outcome.stage}"]}


def recall(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
    item = store.get(namespace(config), "contact_channel")
    hits = store.search(namespace(config), query=QUESTION)
    return {"found": item.value if item else None, "hits": [(h.key, h.value) for h in hits],
            "log": [f"recall:{'found' if item else 'nothing'}"]}


async def aremember(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
    user = config["configurable"]["user_id"]
    await store.aput(namespace(config), "contact_channel",
                     {"text": f"Customer {user} prefers to be contacted by {state['channel']}.",
                      "channel": state["channel"]})
    return {"log": [f"remember:{store.last_outcome.stage}"]}  # type: ignore[attr-defined]


async def arecall(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
    item = await store.aget(namespace(config), "contact_channel")
    hits = await store.asearch(namespace(config), query=QUESTION)
    return {"found": item.value if item else None, "hits": [(h.key, h.value) for h in hits],
            "log": [f"recall:{'found' if item else 'nothing'}"]}


def sync_recall_thread(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
    # a sync node of an async run: LangGraph runs it in a worker thread, where the async-only
    # store's sync methods are served on the event loop
    item = store.get(namespace(config), "contact_channel")
    return {"log": [f"sync_recall:{'found' if item else 'nothing'}:{threading.current_thread() is threading.main_thread()}"]}


def build(store: MemoryFabricStore, remember_node: Any, recall_node: Any, extra: Any = None) -> Any:
    g = StateGraph(State)
    g.add_node("remember", remember_node)
    g.add_node("recall", recall_node)
    g.add_conditional_edges(START, route, ["remember", "recall"])
    g.add_edge("remember", END)
    if extra is not None:
        g.add_node("extra", extra)
        g.add_edge("recall", "extra")
        g.add_edge("extra", END)
    else:
        g.add_edge("recall", END)
    return g.compile(checkpointer=InMemorySaver(), store=store)


def cfg(thread: str, user: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "user_id": user}}


class Graph(unittest.TestCase):
    def test_one_users_threads_share_memories_another_users_do_not(self) -> None:
        client = mf.MemoryFabric.connect(db.conninfo(db.ROLES["agent"]), tenant_id=T)
        self.addCleanup(client.conn.close)
        store = MemoryFabricStore(client)
        graph = build(store, remember, recall)

        # thread 1 of u_graph writes a memory from inside a node
        out1 = graph.invoke({"action": "remember", "channel": "email"}, cfg("thread-1", "u_graph"))
        self.assertEqual(out1["log"], ["remember:promoted"])
        # thread 2 of the same user reads it back, by get and by search; its own state starts empty
        out2 = graph.invoke({"action": "recall"}, cfg("thread-2", "u_graph"))
        expected = {"text": "Customer u_graph prefers to be contacted by email.", "channel": "email"}
        self.assertEqual(out2["found"], expected)
        self.assertEqual(out2["hits"], [("contact_channel", expected)])
        self.assertEqual(out2["log"], ["recall:found"])
        # the checkpointer kept each thread's own state
        self.assertEqual(graph.get_state(cfg("thread-1", "u_graph")).values["log"], ["remember:promoted"])
        self.assertNotIn("found", graph.get_state(cfg("thread-1", "u_graph")).values)
        # the same fact again, in thread 1: nothing new captured
        out1b = graph.invoke({"action": "remember", "channel": "email"}, cfg("thread-1", "u_graph"))
        self.assertEqual(out1b["log"], ["remember:promoted", "remember:unchanged"])
        # another user's thread never sees u_graph's memory
        out3 = graph.invoke({"action": "recall"}, cfg("thread-3", "u_graph_other"))
        self.assertEqual((out3["found"], out3["hits"], out3["log"]), (None, [], ["recall:nothing"]))
        # what the extension holds: one memory, for u_graph only
        self.assertEqual(len(client.recall_fact("u_graph", "contact_channel", user_id="u_graph")), 1)
        self.assertEqual(client.recall_fact("u_graph", "contact_channel", user_id="u_graph_other"), [])

    def test_the_same_graph_async(self) -> None:
        async def run() -> None:
            a = await mf.AsyncMemoryFabric.connect(db.conninfo(db.ROLES["agent"]), tenant_id=T)
            try:
                store = MemoryFabricStore(a)
                graph = build(store, aremember, arecall, extra=sync_recall_thread)
                out1 = await graph.ainvoke({"action": "remember", "channel": "phone"}, cfg("a-1", "u_agraph"))
                self.assertEqual(out1["log"], ["remember:promoted"])
                out2 = await graph.ainvoke({"action": "recall"}, cfg("a-2", "u_agraph"))
                expected = {"text": "Customer u_agraph prefers to be contacted by phone.", "channel": "phone"}
                self.assertEqual((out2["found"], out2["hits"]), (expected, [("contact_channel", expected)]))
                self.assertEqual(out2["log"], ["recall:found", "sync_recall:found:False"])
                out3 = await graph.ainvoke({"action": "recall"}, cfg("a-3", "u_agraph_other"))
                self.assertEqual((out3["found"], out3["hits"]), (None, []))
                self.assertEqual(out3["log"], ["recall:nothing", "sync_recall:nothing:False"])
                # a changed value from an agent, no more evidence: governance keeps the old one
                out4 = await graph.ainvoke({"action": "remember", "channel": "fax"}, cfg("a-1", "u_agraph"))
                self.assertEqual(out4["log"], ["remember:promoted", "remember:contradiction_blocked"])
                out5 = await graph.ainvoke({"action": "recall"}, cfg("a-2", "u_agraph"))
                self.assertEqual(out5["found"], expected)
            finally:
                await a.conn.close()

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main()
