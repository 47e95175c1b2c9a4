# The Python SDK's calls against a live server, run by test/sdks/live-server.test.ts in one
# process: it reads what to call from the environment and prints one JSON object of what it saw,
# which the test checks. Sync and asyncio clients both.
import asyncio
import json
import os
import sys
import time

import httpx

from vinhistory import (
    AsyncVinhistory,
    AuthenticationError,
    NotFoundError,
    RateLimitError,
    UnprocessableEntityError,
    Vinhistory,
    VinhistoryApiError,
    parse_webhook_event,
    verify_webhook_signature,
)

env = os.environ
base_url = env["BASE_URL"]
seen = {}


def error_of(call):
    try:
        call()
    except VinhistoryApiError as error:
        return {"class": type(error).__name__, "status": error.status, "code": error.code, "message": error.message, "errors": error.errors, "request_id": error.request_id}
    return None


with Vinhistory(env["TOKEN"], base_url) as client:
    headers = {}
    report = client.search_post({"vin": env["VIN"]}, options={"on_response": lambda response: headers.update(response.headers)})
    seen["search"] = {"vin": report["vin"], "lots": [lot["lot_id"] for lot in report["lots"]], "report_url": report["report_url"], "ratelimit": headers.get("ratelimit")}
    seen["search_get"] = client.search_get(vin=env["VIN"].lower())["vin"]
    seen["lot_lookup"] = client.lot_lookup(auction="copart", lot_id=int(env["LOT_ID"]))["vin"]
    seen["not_found"] = error_of(lambda: client.search_get(vin=env["UNKNOWN_VIN"]))
    seen["invalid"] = error_of(lambda: client.search_get(vin="NOT-A-VIN"))
    seen["usage"] = client.usage()["used"]
    created = [client.create_watch({"vin": vin}) for vin in env["WATCH_VINS"].split(",")]
    seen["watch_ids"] = [watch["id"] for watch in created]
    seen["watches_paged"] = [watch["id"] for watch in client.iter_list_watches(limit=1)]
    client.delete_watch(id=created[0]["id"])
    seen["delete_again"] = error_of(lambda: client.delete_watch(id=created[0]["id"]))

with Vinhistory("vh_live_" + "0" * 32, base_url) as stranger:
    seen["unauthenticated"] = error_of(stranger.usage)

# A rate of one search a second: the second search at once is a 429. Without an Idempotency-Key
# a counted call is not retried; with one, it is, after Retry-After.
with Vinhistory(env["SLOW_TOKEN"], base_url, max_retries=2) as slow:
    answers = []
    slow.search_get(vin=env["VIN"])
    seen["no_key"] = error_of(lambda: slow.search_get(vin=env["VIN"], options={"on_response": lambda r: answers.append(r.status_code)}))
    seen["no_key_attempts"] = answers[:]
    answers.clear()
    started = time.monotonic()
    seen["with_key"] = slow.search_get(vin=env["VIN"], idempotency_key="py-retry-1", options={"on_response": lambda r: answers.append(r.status_code)})["vin"]
    seen["with_key_attempts"] = answers[:]
    seen["with_key_waited"] = time.monotonic() - started

# A quota of one: Retry-After is the period's end, far beyond max_retry_delay: raised at once.
with Vinhistory(env["SPENT_TOKEN"], base_url) as spent:
    answers = []
    seen["quota"] = error_of(lambda: spent.search_get(vin=env["VIN"], idempotency_key="py-quota-1", options={"on_response": lambda r: answers.append(r.status_code)}))
    seen["quota_attempts"] = answers


async def run_async():
    async with AsyncVinhistory(env["TOKEN"], base_url) as client:
        report = await client.search_get(vin=env["VIN"])
        paged = [watch["id"] async for watch in client.iter_list_watches(limit=1)]
        try:
            await client.search_get(vin=env["UNKNOWN_VIN"])
            missing = None
        except NotFoundError as error:
            missing = error.code
        return {"vin": report["vin"], "watches_paged": paged, "not_found_code": missing}


seen["async"] = asyncio.run(run_async())

body = env["WEBHOOK_BODY"].encode("utf-8")
signature = env["WEBHOOK_SIGNATURE"]
secret = env["WEBHOOK_SECRET"]
seen["signature"] = {
    "valid": verify_webhook_signature(signature, body, secret),
    "wrong_secret": verify_webhook_signature(signature, body, "whsec_wrong"),
    "altered": verify_webhook_signature(signature, body + b" ", secret),
    "too_old": verify_webhook_signature(signature, body, secret, now=time.time() + 3600),
    "event_type": parse_webhook_event(signature, body, secret)["type"],
}

# The transport's rules on answers a mock gives (no server): a free call retried on 503 after
# Retry-After up to max_retries, a counted one only with a key, another status never.
def mocked(statuses):
    sent = []
    waits = []

    def answer(request):
        sent.append(request.headers.get("idempotency-key"))
        status = statuses[min(len(sent) - 1, len(statuses) - 1)]
        if status == 200:
            return httpx.Response(200, json={"used": 1, "vin": "V"})
        return httpx.Response(status, json={"code": "service_busy", "message": "busy"}, headers={"retry-after": "2"})

    client = Vinhistory("vh_live_x", "https://api.example.com", max_retries=2, http_client=httpx.Client(transport=httpx.MockTransport(answer)), sleep=waits.append)
    return client, sent, waits


client, sent, waits = mocked([503, 503, 200])
seen["mock_free"] = {"answer": client.usage()["used"], "sent": len(sent), "waits": waits}
client, sent, waits = mocked([503])
seen["mock_bound"] = {"error": error_of(client.usage), "sent": len(sent)}
client, sent, waits = mocked([503, 200])
seen["mock_unkeyed"] = {"error": error_of(lambda: client.search_post({"vin": "V"})), "sent": len(sent)}
client, sent, waits = mocked([503, 200])
seen["mock_keyed"] = {"answer": client.search_post({"vin": "V"}, idempotency_key="k-1")["vin"], "keys": sent}
client, sent, waits = mocked([502, 200])
seen["mock_502"] = {"error": error_of(client.usage), "sent": len(sent)}
seen["classes"] = [cls.__name__ for cls in (AuthenticationError, RateLimitError, UnprocessableEntityError)]

json.dump(seen, sys.stdout)
