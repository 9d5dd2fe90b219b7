"""Build the JSON payload for a deployment webhook and post it."""

import json
import os
import urllib.request


def build_payload(service, version, environment):
    payload = {
        "service": service,
        "version": version,
        "environment": environment,
        "triggered_by": os.environ.get("USER", "unknown"),
    }
    if environment == "production":
        payload["notify"] = ["#deploys", "#oncall"]
    return payload


def post(url, payload):
    body = json.dumps(payload).encode("utf-8")
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "deploy-hook/1.0",
    }
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


if __name__ == "__main__":
    hook = os.environ["DEPLOY_HOOK_URL"]
    status = post(hook, build_payload("billing", "2.4.1", "staging"))
    print(f"webhook answered {status}")
