"""Lanes (`stream_id`) with the official openai Python SDK's `responses.connect` (run by python-sdk.e2e.spec.ts).

Opens one WebSocket, starts a tool-calling response on two lanes at once, answers lane `py-a`'s call
with a continuation chained by `previous_response_id`, and prints one JSON summary on stdout: per
lane, the `stream_id` every event carried and each response's status, output types and parent.
Exits non-zero on an error event or SDK exception, so the test fails with the SDK's own message.
"""

import json
import sys

import openai
from openai import OpenAI

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
TERMINAL = {"response.completed", "response.incomplete", "response.failed"}


def main(base_url, api_key, model):
    client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    lanes = {"py-a": {"stream_ids": set(), "responses": []}, "py-b": {"stream_ids": set(), "responses": []}}
    with client.responses.connect() as conn:
        for lane, city in (("py-a", "Oslo"), ("py-b", "Lima")):
            conn.send(
                {
                    "type": "response.create",
                    "stream_id": lane,
                    "model": model,
                    "store": False,
                    "input": f"What is the weather in {city}?",
                    "tools": [WEATHER],
                }
            )
        waiting = 2
        for event in conn:
            if event.type == "error":
                print(json.dumps({"error": event.model_dump()}), file=sys.stderr)
                return 1
            lane = getattr(event, "stream_id", None)
            lanes[lane]["stream_ids"].add(lane)
            if event.type not in TERMINAL:
                continue
            r = event.response
            lanes[lane]["responses"].append(
                {
                    "id": r.id,
                    "status": r.status,
                    "previous_response_id": r.previous_response_id,
                    "output": [o.type for o in r.output],
                }
            )
            waiting -= 1
            if lane == "py-a" and len(lanes[lane]["responses"]) == 1:
                call = next(o for o in r.output if o.type == "function_call")
                conn.send(
                    {
                        "type": "response.create",
                        "stream_id": "py-a",
                        "model": model,
                        "store": False,
                        "previous_response_id": r.id,
                        "tools": [WEATHER],
                        "input": [{"type": "function_call_output", "call_id": call.call_id, "output": '{"temp_c": 4}'}],
                    }
                )
                waiting += 1
            if waiting == 0:
                break
    summary = {
        "sdk_version": openai.__version__,
        "lanes": {k: {"stream_ids": sorted(v["stream_ids"]), "responses": v["responses"]} for k, v in lanes.items()},
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
