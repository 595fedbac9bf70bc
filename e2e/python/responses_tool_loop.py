"""A tool loop with the official openai Python SDK against fastloop (run by python-sdk.e2e.spec.ts).

Streams `responses.create` turns, answering each function call with a function_call_output chained
by `previous_response_id`, until the model answers in text; then fetches the last response with
`responses.retrieve`. Prints one JSON summary on stdout; exits non-zero on any error event, failed
response or SDK exception, so the test fails with the SDK's own message.
"""

import json
import sys

import openai
from openai import OpenAI

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
}


def stream_turn(client, **kwargs):
    """One streamed turn: the event types in order and the final Response."""
    types, final = [], None
    with client.responses.create(stream=True, **kwargs) as stream:
        for event in stream:
            types.append(event.type)
            if event.type in ("error", "response.failed", "response.incomplete"):
                raise RuntimeError(f"{event.type}: {event.model_dump_json()}")
            if event.type == "response.completed":
                final = event.response
    if final is None:
        raise RuntimeError(f"the stream ended without response.completed: {types}")
    return types, final


def main(base_url, api_key, model):
    client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    turns = []
    kwargs = {"model": model, "input": "What is the weather in Nairobi?", "tools": [WEATHER]}
    for _ in range(6):
        types, response = stream_turn(client, **kwargs)
        call = response.output[-1]
        turns.append({
            "id": response.id,
            "previous_response_id": response.previous_response_id,
            "event_types": types,
            "output": [item.model_dump() for item in response.output],
            "usage": response.usage.model_dump(),
        })
        if call.type != "function_call":
            break
        json.loads(call.arguments)  # the SDK hands over arguments as a JSON string
        kwargs = {
            "model": model,
            "previous_response_id": response.id,
            "tools": [WEATHER],
            "input": [{"type": "function_call_output", "call_id": call.call_id, "output": '{"temp_c": 24}'}],
        }
    retrieved = client.responses.retrieve(turns[-1]["id"])
    print(json.dumps({
        "sdk_version": openai.__version__,
        "turns": turns,
        "retrieved": {"id": retrieved.id, "status": retrieved.status, "output": [item.model_dump() for item in retrieved.output]},
    }))


if __name__ == "__main__":
    main(*sys.argv[1:4])
