"""One agent trace written in every input form judgeflow reads (tests of the trace reader and its users).

The agent tries to book a flight, the booking call fails ("payment declined"), and the reply says it
is booked: OpenAI chat messages, Anthropic messages (the system prompt given apart) and LangChain
message objects, the same conversation each time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRACES = EXAMPLES / "traces.jsonl"
SYSTEM = "You are a travel agent."
ARGS = {"flight": "TP1351", "date": "2025-06-03"}

OPENAI = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "Book the 09:40 flight to Lisbon."},
    {"role": "assistant", "content": "Booking it now.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "book_flight", "arguments": json.dumps(ARGS)}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Error: payment declined."},
    {"role": "user", "content": "So is it booked?"},
    {"role": "assistant", "content": "Yes, flight TP1351 at 09:40 is booked."},
]
ANTHROPIC = [
    {"role": "user", "content": "Book the 09:40 flight to Lisbon."},
    {"role": "assistant", "content": [{"type": "text", "text": "Booking it now."},
                                      {"type": "tool_use", "id": "call_1", "name": "book_flight", "input": ARGS}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                                  "content": [{"type": "text", "text": "Error: payment declined."}]},
                                 {"type": "text", "text": "So is it booked?"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Yes, flight TP1351 at 09:40 is booked."}]},
]
LC_OBJECTS = [
    SystemMessage(SYSTEM), HumanMessage("Book the 09:40 flight to Lisbon."),
    AIMessage("Booking it now.", tool_calls=[{"name": "book_flight", "args": ARGS, "id": "call_1"}]),
    ToolMessage("Error: payment declined.", tool_call_id="call_1"),
    HumanMessage("So is it booked?"), AIMessage("Yes, flight TP1351 at 09:40 is booked."),
]


def weather_agent(inputs: dict[str, Any]) -> dict[str, Any]:
    """A stand-in agent: the output a LangGraph ReAct agent returns (`{"messages": [...]}`), whose
    reply contradicts its tool."""
    return {"messages": [HumanMessage(inputs["q"]),
                         AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]),
                         ToolMessage("Paris: 18 C, light rain.", tool_call_id="call_1"),
                         AIMessage("It is 25 C and sunny in Paris.")]}
